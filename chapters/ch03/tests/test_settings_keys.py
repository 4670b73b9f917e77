"""A settings file holds only the keys the harness reads: a misspelt one stops the run.

The reproduction: `{"permissons": {"deny": ["shell(rm:*)"]}}` was read as a file
without rules, so with `--mode bypass` the `rm -rf` the deny rule was written
for ran. Now an unknown top-level key is exit 2 before any request, in one line
that names the key and the known key nearest to it, in every chapter with a
policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS
from chapters.ch03.tests.support import RunChapter, TaskModel, call, ready_from, task, write_json

pytestmark = pytest.mark.usefixtures("isolated")

MISSPELT = {"permissons": {"deny": ["shell(rm:*)"]}}


def rm_model() -> TaskModel:
    return task(call("c1", "shell", command="rm -rf build"))


@pytest.mark.parametrize("chapter", ready_from(3))
def test_a_misspelt_key_stops_the_run_and_names_the_key_it_meant(
    run_chapter: RunChapter, workspace: Path, chapter: int
) -> None:
    write_json(workspace / PROJECT_SETTINGS, MISSPELT)
    (workspace / "build").mkdir()
    model = rm_model()
    result = run_chapter(chapter, workspace, model, "--mode", "bypass")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith('配置错误：.tutorial/settings.json: unknown key "permissons"; ')
    assert 'did you mean "permissions"?' in line
    assert model.requests == [] and (workspace / "build").is_dir()


def test_a_misspelt_key_in_your_home_settings_is_named_with_its_file(
    run_chapter: RunChapter, tmp_path: Path, workspace: Path
) -> None:
    write_json(tmp_path / "home" / USER_SETTINGS, {"Permissions": {}})
    result = run_chapter(3, workspace, rm_model())
    assert result.exit_code == 2
    assert result.stderr.startswith(
        '配置错误：~/.tutorial/settings.json: unknown key "Permissions"'
    )
    assert 'did you mean "permissions"?' in result.stderr


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("deny", 'did you mean "permissions": {"deny": ...}?'),
        ("defaultMode", 'did you mean "permissions": {"defaultMode": ...}?'),
        ("model", "remove it"),
    ],
)
def test_a_key_far_from_any_known_one_says_what_to_do(
    run_chapter: RunChapter, workspace: Path, key: str, hint: str
) -> None:
    write_json(workspace / PROJECT_SETTINGS, {key: ["shell(rm:*)"]})
    result = run_chapter(3, workspace, rm_model())
    assert result.exit_code == 2
    assert f'unknown key "{key}"; {hint} (known keys: ' in result.stderr

"""Every chapter's `--demo` runs with no key and no network, and leaves nothing behind."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tutorial.catalog import CHAPTERS
from tutorial.cli import cli

READY = [chapter.number for chapter in CHAPTERS if chapter.ready]


@pytest.mark.parametrize("number", READY)
def test_the_demo_answers_as_scripted_and_removes_its_temporary_folder(
    number: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, ["run", "--chapter", str(number), "--demo"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("[scripted]")
    folder = Path(result.stderr.split("folder: ", 1)[1].split()[0])
    if number > 1:  # chapter 1 works in the current folder; later demos make their own
        assert folder.parent == tmp_path / "tmp"
        assert folder.name.startswith(f"tutorial-ch{number:02d}-demo-")
    assert list((tmp_path / "tmp").iterdir()) == []
    assert list((tmp_path / "here").iterdir()) == []  # nothing written where it was started

"""A settings file is read only if it is a regular file of at most SETTINGS_MAX_BYTES.

The reproduction: a named pipe, a link to /dev/zero or a folder at
`.tutorial/settings.json` was passed over as if there were no file, so the run
went on without the deny rules written for it; a settings file of any size was
read whole. Now each stops the run before any request (exit 2), in one line
that names the file and the fix: failing open would drop the deny rules. Every
later chapter reads these files (for whatever else they hold) through the same
reader, and keeps the promise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import Result

from chapters.ch02.tests.blocking import bounded, needs_dev_zero, needs_fifo, run_bounded
from chapters.ch03.settings import PROJECT_SETTINGS, SETTINGS_MAX_BYTES, USER_SETTINGS
from chapters.ch03.tests.support import RunChapter, TaskModel, ready_from

pytestmark = pytest.mark.usefixtures("isolated")

NOT_REGULAR = "not a regular file); put a regular JSON file there, or remove it"


@needs_fifo
@pytest.mark.parametrize("chapter", ready_from(3))
def test_a_named_pipe_as_the_settings_stops_the_run_and_is_named(
    run_chapter: RunChapter, tmp_path: Path, chapter: int
) -> None:
    workspace = tmp_path / "ws"
    fifo = workspace / PROJECT_SETTINGS
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    result, hung = bounded(fifo, lambda: run_chapter(chapter, workspace, TaskModel({})))
    assert not hung, "reading the settings blocked on a named pipe"
    assert isinstance(result, Result)
    assert result.exit_code == 2, result.stdout
    assert result.stderr.splitlines() == [
        "配置错误：.tutorial/settings.json: cannot be read (it is a named pipe (FIFO), "
        + NOT_REGULAR
    ]


@needs_dev_zero
def test_your_settings_linked_to_dev_zero_stop_the_check_in_bounded_memory(
    tmp_path: Path,
) -> None:
    """One child process (a read without end must not take this machine's memory) asks
    `permissions check` of every chapter with a policy."""
    home = tmp_path / "home"
    (home / USER_SETTINGS).parent.mkdir(parents=True)
    (home / USER_SETTINGS).symlink_to("/dev/zero")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chapters = ready_from(3)
    done = run_bounded(
        "import os\n"
        "from click.testing import CliRunner\n"
        "from tutorial.cli import cli\n"
        f"os.environ['HOME'] = os.environ['USERPROFILE'] = {str(home)!r}\n"
        f"for chapter in {chapters!r}:\n"
        f"    args = ['permissions', 'check', '--chapter', str(chapter), '--workspace', "
        f"{str(workspace)!r}, 'read_file(a.txt)']\n"
        "    result = CliRunner().invoke(cli, args)\n"
        "    print(chapter, result.exit_code, result.stderr.strip())\n"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = (
        "2 配置错误：~/.tutorial/settings.json: cannot be read (it is a character device, "
        f"{NOT_REGULAR}"
    )
    assert done.stdout.splitlines() == [f"{chapter} {expected}" for chapter in chapters]


@pytest.mark.parametrize("chapter", ready_from(3))
def test_settings_over_their_bound_stop_the_run_and_are_named(
    run_chapter: RunChapter, tmp_path: Path, chapter: int
) -> None:
    settings = tmp_path / "home" / USER_SETTINGS
    settings.parent.mkdir(parents=True)
    settings.write_text("{}" + " " * SETTINGS_MAX_BYTES, encoding="utf-8")  # valid, too long
    result = run_chapter(chapter, tmp_path / "ws", TaskModel({}))
    assert result.exit_code == 2, result.stdout
    assert result.stderr.splitlines() == [
        f"配置错误：~/.tutorial/settings.json: cannot be read (it is more than "
        f"{SETTINGS_MAX_BYTES:,} bytes, the most a settings file may hold); shorten it, "
        "or remove it"
    ]


@pytest.mark.parametrize("chapter", ready_from(3))
def test_a_folder_as_the_settings_stops_the_run_and_is_named(
    run_chapter: RunChapter, tmp_path: Path, chapter: int
) -> None:
    workspace = tmp_path / "ws"
    (workspace / PROJECT_SETTINGS).mkdir(parents=True)
    result = run_chapter(chapter, workspace, TaskModel({}))
    assert result.exit_code == 2, result.stdout
    assert result.stderr.splitlines() == [
        f"配置错误：.tutorial/settings.json: cannot be read (it is a folder, {NOT_REGULAR}"
    ]

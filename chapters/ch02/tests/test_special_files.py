"""Files the file tools must not trip over: named pipes, and temp files of killed writes.

A FIFO opened for reading blocks until something writes to it, so a file tool that
opens one the usual way never returns (issue 11). Each call here runs in a thread
with a generous upper bound on how long it may take; a correct tool answers at
once, and if one hangs the test opens the pipe for writing so the thread can end.

A write killed between writing its temp file and renaming it leaves the temp file
behind (issue 11): those get a name of their own, glob and grep pass over them, and
the first write of a later run removes the ones old enough to be surely abandoned.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chapters.ch02.searching import matching_lines
from chapters.ch02.tests.blocking import bounded, needs_fifo
from chapters.ch02.tests.helpers import file_tools, run
from chapters.ch02.text_files import TEMP_SUFFIX, is_temp_name
from chapters.ch02.writing import STALE_TEMP_SECONDS
from shared.tools import ToolResult


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "p"
    os.mkfifo(path)
    return path


@needs_fifo
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {}),
        ("write_file", {"content": "x\n"}),
        ("edit_file", {"old_string": "a", "new_string": "b"}),
    ],
)
def test_a_file_tool_refuses_a_fifo_without_blocking_on_it(
    tmp_path: Path, fifo: Path, tool: str, args: dict[str, str]
) -> None:
    tools = file_tools(tmp_path)
    result, hung = bounded(fifo, lambda: run(tools, tool, path="p", **args))
    assert not hung, f"{tool} blocked on a named pipe"
    assert isinstance(result, ToolResult)
    assert result.keyword == "not_a_file", result.content
    assert result.content == (
        "not_a_file: p is a named pipe (FIFO), not a regular file; the file tools only read "
        "and write regular files. Nothing was read or changed."
    )
    assert fifo.exists() and not fifo.is_file()  # still the pipe: nothing replaced it


@needs_fifo
def test_grep_never_blocks_on_a_fifo_it_reaches(fifo: Path) -> None:
    # The walk lists only regular files, but a file can be swapped for a pipe between
    # the listing and the read: the read itself must not block.
    lines, hung = bounded(fifo, lambda: list(matching_lines(str(fifo), re.compile("x"))))
    assert not hung, "grep blocked on a named pipe"
    assert lines == []


@needs_fifo
def test_grep_and_glob_pass_over_a_fifo(tmp_path: Path, fifo: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    grep, hung = bounded(fifo, lambda: run(tools, "grep", pattern="x"))
    assert not hung
    assert isinstance(grep, ToolResult) and grep.content == "ok: 1 matching lines\na.txt:1: x"
    glob = run(tools, "glob", pattern="*")
    assert glob.content.splitlines()[1:] == ["a.txt"]


# --- the temporary files of atomic writes -----------------------------------------------

# What a write killed half-way leaves behind is produced for real: a child process runs
# atomic_write and kills itself (SIGKILL, no cleanup) when the data is about to be synced.
KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from chapters.ch02 import text_files
text_files.os.fsync = lambda descriptor: os.kill(os.getpid(), signal.SIGKILL)
text_files.atomic_write(Path(sys.argv[2]), b"half of a big file\\n" * 1000)
"""
REPO = Path(__file__).resolve().parents[3]
needs_kill = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")


def _killed_write(target: Path) -> Path:
    """Run a write that is killed before its rename; return the temp file it left."""
    before = set(target.parent.iterdir())
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WRITE, str(REPO), str(target)], check=False, timeout=60
    )
    assert done.returncode == -signal.SIGKILL
    (left,) = set(target.parent.iterdir()) - before
    return left


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@needs_kill
def test_a_write_killed_half_way_leaves_a_temp_file_with_a_recognisable_name(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("old\n", encoding="utf-8")
    left = _killed_write(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "old\n"  # never torn
    assert is_temp_name(left.name), left.name
    assert left.name.startswith(".notes.txt.") and left.name.endswith(TEMP_SUFFIX)


@needs_kill
def test_glob_and_grep_do_not_list_the_temp_files_of_killed_writes(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "big.txt").write_text("half of a small file\n", encoding="utf-8")
    left = _killed_write(tmp_path / "src" / "big.txt")
    tools = file_tools(tmp_path)

    assert run(tools, "glob", pattern="**/*").content.splitlines()[1:] == ["src/big.txt"]
    grep = run(tools, "grep", pattern="half of a")
    assert grep.content.splitlines() == [
        "ok: 1 matching lines",
        "src/big.txt:1: half of a small file",
    ]
    direct = run(tools, "grep", pattern="half", path=f"src/{left.name}")
    assert direct.content == "ok: no lines match 'half'."


def test_names_that_only_look_like_temp_files_are_listed(tmp_path: Path) -> None:
    for name in [".a.txt.1234abcd.tmp", "a.txt.1234abcd.tutorial-tmp", ".a.txt.xyz.tutorial-tmp"]:
        (tmp_path / name).write_text("needle\n", encoding="utf-8")
        assert not is_temp_name(name), name
    listed = run(file_tools(tmp_path), "glob", pattern="*").content.splitlines()[1:]
    assert len(listed) == 3


@needs_kill
def test_the_first_write_of_a_run_removes_stale_temp_files_and_only_those(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    stale = _killed_write(tmp_path / "deep" / "er" / "old.txt")
    fresh = _killed_write(tmp_path / "fresh.txt")  # maybe another agent's write in progress
    look_alike = tmp_path / ".old.txt.1234abcd.tmp"  # not our pattern: never touched
    look_alike.write_text("keep\n", encoding="utf-8")
    for path in (stale, look_alike):
        _age(path, STALE_TEMP_SECONDS + 60)
    _age(fresh, STALE_TEMP_SECONDS - 60)
    tools = file_tools(tmp_path)
    assert run(tools, "read_file", path="deep/er/old.txt").keyword == "not_found"
    assert stale.exists()  # reads and plans remove nothing

    assert run(tools, "write_file", path="new.txt", content="x\n").keyword == "ok"

    assert not stale.exists()
    assert fresh.exists() and look_alike.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".old.txt.1234abcd.tmp", "deep", fresh.name, "new.txt"]
    )

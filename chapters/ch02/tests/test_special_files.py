"""Files that are not plain text files: named pipes (FIFOs) and other non-regular files.

A FIFO opened for reading blocks until something writes to it, so a file tool that
opens one the usual way never returns (issue 11). Each call here runs in a thread
with a generous upper bound on how long it may take; a correct tool answers at
once, and if one hangs the test opens the pipe for writing so the thread can end.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from chapters.ch02.searching import matching_lines
from chapters.ch02.tests.helpers import file_tools, run
from shared.tools import ToolResult

HANG_BOUND_SECONDS = 10  # an upper bound for a broken tool, never a wait for a working one

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _unblock(fifo: Path) -> None:
    """Let a reader stuck on `fifo` go: open it for writing, then close it (end of file)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _bounded(fifo: Path, call: Callable[[], object]) -> tuple[object, bool]:
    """(what `call` returned, whether it had to be unblocked)."""
    returned: list[object] = []
    worker = threading.Thread(target=lambda: returned.append(call()), daemon=True)
    worker.start()
    worker.join(HANG_BOUND_SECONDS)
    hung = worker.is_alive()
    while worker.is_alive():
        _unblock(fifo)
        worker.join(0.1)
    return (returned[0] if returned else None), hung


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
    result, hung = _bounded(fifo, lambda: run(tools, tool, path="p", **args))
    assert not hung, f"{tool} blocked on a named pipe"
    assert isinstance(result, ToolResult)
    assert result.status == "not_a_file", result.content
    assert result.content == (
        "not_a_file: p is a named pipe (FIFO), not a regular file; the file tools only read "
        "and write regular files. Nothing was read or changed."
    )
    assert fifo.exists() and not fifo.is_file()  # still the pipe: nothing replaced it


@needs_fifo
def test_grep_never_blocks_on_a_fifo_it_reaches(fifo: Path) -> None:
    # The walk lists only regular files, but a file can be swapped for a pipe between
    # the listing and the read: the read itself must not block.
    lines, hung = _bounded(fifo, lambda: list(matching_lines(str(fifo), re.compile("x"))))
    assert not hung, "grep blocked on a named pipe"
    assert lines == []


@needs_fifo
def test_grep_and_glob_pass_over_a_fifo(tmp_path: Path, fifo: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    grep, hung = _bounded(fifo, lambda: run(tools, "grep", pattern="x"))
    assert not hung
    assert isinstance(grep, ToolResult) and grep.content == "ok: 1 matching lines\na.txt:1: x"
    glob = run(tools, "glob", pattern="*")
    assert glob.content.splitlines()[1:] == ["a.txt"]

"""A path argument is one line of text, not too deep: anything else is refused as it is validated.

A newline in a path is not a path anyone meant. `write_file("a\\n../b")` created a
folder named `a\\n..`, and a listing of it shows a line that reads `../b`. A path
of a thousand folders made pathlib recurse until Python gave up (a `tool_error`).
Both are `invalid_arguments` now: refused by the arguments' own validation, before
a preview is computed, anyone is asked, or anything on disk changes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from chapters.ch02.path_text import MAX_PATH_DEPTH
from chapters.ch02.tests.helpers import file_tools, prepare
from shared.tools import PreparedCall, ToolResult

# (tool, the argument that names a path or a glob, the other arguments it needs)
PATH_ARGUMENTS = [
    ("read_file", "path", {}),
    ("write_file", "path", {"content": "x\n"}),
    ("edit_file", "path", {"old_string": "a", "new_string": "b"}),
    ("glob", "path", {"pattern": "*"}),
    ("glob", "pattern", {}),
    ("grep", "path", {"pattern": "a"}),
    ("grep", "glob", {"pattern": "a"}),
]
CONTROL = [
    pytest.param("a\n../outside/secret.txt", id="newline"),
    pytest.param("a.txt\r", id="carriage-return"),
    pytest.param("a\tb.txt", id="tab"),
    pytest.param("\x1b[31ma.txt", id="escape"),
    pytest.param("a\x7fb", id="delete"),
    pytest.param("a\x85b", id="next-line-c1"),
    pytest.param("a\u2028b", id="line-separator"),
]


def disk(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(("tool", "argument", "others"), PATH_ARGUMENTS)
@pytest.mark.parametrize("value", CONTROL)
def test_a_control_character_in_a_path_or_glob_is_invalid_arguments(
    root: Path, tool: str, argument: str, others: dict[str, str], value: str
) -> None:
    before = disk(root.parent)
    outcome = prepare(file_tools(root), tool, **others, **{argument: value})
    assert isinstance(outcome, ToolResult), f"{tool} {value!r} was prepared"
    assert outcome.keyword == "invalid_arguments", outcome.content
    assert f"{argument}: " in outcome.content and "control character" in outcome.content
    assert value not in outcome.content  # the message shows it escaped, on one line
    assert disk(root.parent) == before


def test_a_regex_may_still_hold_a_newline(root: Path) -> None:
    prepared = prepare(file_tools(root), "grep", pattern="a\nb")
    assert isinstance(prepared, PreparedCall)
    assert prepared.invoke().keyword == "ok"


@pytest.mark.parametrize(("tool", "argument", "others"), [*PATH_ARGUMENTS[:4], PATH_ARGUMENTS[5]])
def test_a_path_too_deep_is_invalid_arguments_that_states_the_bound(
    root: Path, tool: str, argument: str, others: dict[str, str]
) -> None:
    before = disk(root.parent)
    outcome = prepare(file_tools(root), tool, **others, **{argument: "a/" * 1000 + "x"})
    assert isinstance(outcome, ToolResult), f"{tool} was prepared"
    assert outcome.keyword == "invalid_arguments", outcome.content
    assert f"at most {MAX_PATH_DEPTH} " in outcome.content
    assert disk(root.parent) == before


def test_a_path_at_the_depth_bound_is_written(root: Path) -> None:
    raw = "d/" * (MAX_PATH_DEPTH - 1) + "x.txt"
    if sys.platform == "win32" or len(os.fsencode(root / raw)) >= 4096:
        pytest.skip("the system's own path length limit is lower here")
    prepared = prepare(file_tools(root), "write_file", path=raw, content="deep\n")
    assert isinstance(prepared, PreparedCall), prepared
    assert prepared.invoke().keyword == "ok"
    assert (root / raw).read_text(encoding="utf-8") == "deep\n"


def test_the_deep_write_of_the_reproduction_is_not_a_tool_error(root: Path) -> None:
    tools = file_tools(root)
    call = {"path": "a/" * 1000 + "x", "content": "hi"}
    outcome = prepare(tools, "write_file", **call)
    assert isinstance(outcome, ToolResult)
    assert outcome.keyword == "invalid_arguments"
    assert "RecursionError" not in json.dumps(outcome.content)

"""A placeholder's value reaches a hook's command as data, never as code.

The reproduction first: a placeholder inside a shell comment, where the quoting the
hook adds means nothing, and a path holding a line break, which ends the comment.
Then the same promise at load (such a hook is a settings error, exit 2) and for any
value with a line break where it stands unquoted, whatever the tool and argument.
Last, a property test: placeholders at many places of a command (quoted, bare, in
a comment, in `$(...)`, backticks, here-docs), values full of shell syntax and line
breaks, run by the real shell; the marker file the values try to create never appears.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapters.ch02.workspace import Workspace
from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS
from chapters.ch03.tests.support import tutorial, write_json
from chapters.ch04.hooks import (
    HookEvent,
    Hooks,
    PlaceholderError,
    check_placeholders,
    command_hook,
    fill_placeholders,
)
from chapters.ch04.settings import load_hooks
from shared.decisions import Decision
from shared.errors import ConfigError
from shared.process import IS_WINDOWS

PRE, POST = HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE
bash_only = pytest.mark.skipif(IS_WINDOWS, reason="bash's comments and quoting")

# The reproduction, exactly as it was reported.
COMMENTED_HOOK = "echo checking {path} >&2 # hook for {path}"
INJECTING_PATH = "notes\ntouch HOOK_INJECTED\n"
IN_A_COMMENT = (
    "{path} stands in a comment (after #), where no quoting keeps a value literal; "
    "move it out, or read the event from stdin instead"
)


def tool_event(workspace: Path, tool: str, **arguments: str) -> dict[str, Any]:
    return {
        "event": PRE,
        "workspace": str(workspace),
        "tool": tool,
        "input": arguments,
        "tool_call_id": "call_1",
    }


@bash_only
def test_a_placeholder_in_a_comment_cannot_run_a_newline_in_its_value(tmp_path: Path) -> None:
    hooks = Hooks([command_hook(PRE, COMMENTED_HOOK, workspace=tmp_path, timeout=10)])
    event = tool_event(tmp_path, "write_file", path=INJECTING_PATH, content="hello\n")
    said = hooks.run(PRE, event, tool="write_file")
    assert not (tmp_path / "HOOK_INJECTED").exists()
    assert said.decision is Decision.DENY  # the hook did not run: it failed, which blocks
    assert said.reason.startswith(f"{COMMENTED_HOOK}: cannot fill {{path}} in its command: ")


# --- at load: a hook whose placeholder can never be filled is a settings error -------------


@pytest.mark.parametrize("event", [PRE, POST])
@pytest.mark.parametrize("where", ["project", "home"])
def test_a_tool_hook_with_a_placeholder_in_a_comment_is_a_settings_error(
    tmp_path: Path, event: HookEvent, where: str
) -> None:
    home = tmp_path / "home"
    path, shown = (
        (tmp_path / PROJECT_SETTINGS, ".tutorial/settings.json")
        if where == "project"
        else (home / USER_SETTINGS, "~/.tutorial/settings.json")
    )
    hooks = [{"command": "exit 0"}, {"matcher": "write_file", "command": COMMENTED_HOOK}]
    write_json(path, {"hooks": {event: hooks}})
    with pytest.raises(ConfigError) as raised:
        load_hooks(Workspace(tmp_path), home)
    assert str(raised.value) == (
        f"{shown}: hooks.{event}.1.command: the hook {COMMENTED_HOOK!r} cannot run: " + IN_A_COMMENT
    )


@pytest.mark.parametrize(
    ("command", "where"),
    [
        ("fmt {path} # was: black {path}", "in a comment (after #)"),
        ("echo $(cat {path})", "after $("),
        ('echo "`cat {file}`"', "after `"),
    ],
)
def test_the_settings_error_names_the_hook_by_its_name_and_the_place(
    tmp_path: Path, command: str, where: str
) -> None:
    write_json(tmp_path / PROJECT_SETTINGS, {"hooks": {PRE: [{"name": "fmt", "command": command}]}})
    with pytest.raises(ConfigError) as raised:
        load_hooks(Workspace(tmp_path), tmp_path / "home")
    assert str(raised.value).startswith(
        f".tutorial/settings.json: hooks.{PRE}.0.command: the hook 'fmt' cannot run: "
    )
    assert f"stands {where}, where no quoting keeps a value literal" in str(raised.value)


@bash_only
@pytest.mark.parametrize(
    "command",
    [
        "echo a#b {path}",  # `#` inside a word is no comment
        "echo '#' \"#\" \\# $# {path}",
        "echo {path}#",
        "echo $(date) ${HOME} # a comment with no placeholder",
        "echo {path}\n# a comment line",
    ],
)
def test_placeholders_outside_comments_still_load_and_fill(tmp_path: Path, command: str) -> None:
    check_placeholders(command)
    write_json(tmp_path / PROJECT_SETTINGS, {"hooks": {POST: [{"command": command}]}})
    [hook] = load_hooks(Workspace(tmp_path), tmp_path / "home")
    assert hook.name == command


def test_hooks_without_a_tool_call_keep_their_braces(tmp_path: Path) -> None:
    # Only a tool call's arguments fill placeholders: a Stop hook's `{path}` is text.
    write_json(tmp_path / PROJECT_SETTINGS, {"hooks": {"Stop": [{"command": "true # {path}"}]}})
    assert len(load_hooks(Workspace(tmp_path), tmp_path / "home")) == 1


def test_powershell_counts_every_unquoted_hash_as_a_comment() -> None:
    with pytest.raises(PlaceholderError):
        fill_placeholders("echo a#b {path}", {"path": "x"}, windows=True)
    with pytest.raises(PlaceholderError):
        fill_placeholders("echo <# {path} #>", {"path": "x"}, windows=True)
    assert fill_placeholders("echo '#' {path}", {"path": "x"}, windows=True) == "echo '#' 'x'"


@pytest.mark.usefixtures("isolated")
def test_the_cli_stops_with_exit_2_naming_the_hook_and_the_fix(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_json(workspace / PROJECT_SETTINGS, {"hooks": {PRE: [{"command": COMMENTED_HOOK}]}})
    result = tutorial("run", "--chapter", "4", "--prompt", "hi", "--workspace", str(workspace))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"配置错误：.tutorial/settings.json: hooks.{PRE}.0.command: the hook "
        f"{COMMENTED_HOOK!r} cannot run: {IN_A_COMMENT}"
    ]


# --- at run time: a line break never stands unquoted ----------------------------------------


@pytest.mark.parametrize("place", ["{v}", "x={v}", "'a'{v}\"b\""])
@pytest.mark.parametrize(
    ("tool", "name", "value"),
    [
        ("write_file", "path", INJECTING_PATH),
        ("shell", "command", "ls\ntouch pwned"),
        ("shell", "command", "ls\rtouch pwned"),
    ],
)
def test_a_value_with_a_line_break_where_it_stands_unquoted_fails_the_hook_unrun(
    tmp_path: Path, place: str, tool: str, name: str, value: str
) -> None:
    command = "echo ran > ran.txt; echo " + place.replace("v", name)
    hooks = Hooks([command_hook(PRE, command, workspace=tmp_path, timeout=10)])
    said = hooks.run(PRE, tool_event(tmp_path, tool, **{name: value}), tool=tool)
    assert said.decision is Decision.DENY
    assert said.reason == (
        f"{command}: cannot fill {{{name}}} in its command: {{{name}}} stands unquoted and its "
        "value holds a line break, which ends a command or a comment, so it is passed only "
        f"inside quotes; write '{{{name}}}' or \"{{{name}}}\", or read the event from stdin "
        "instead"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing ran at all


# --- the property: whatever the place and the value, only the hook's own command runs -------

MARKER = "MARKER"
# Pieces of a hook's command: none of them creates a file, whatever surrounds them.
COMMAND_PIECES = [
    *["{path}"] * 4,
    *["{command}"] * 2,
    *[" "] * 4,
    "x",
    "a#b",
    *["#", "# note ", ";#"] * 3,
    "'",
    '"',
    "$(",
    ")",
    "`",
    "\\",
    "$((",
    "[[ ",
    " ]]",
    "<<EOF\n",
    "\nEOF\n",
    "\n",
    "; ",
    " && ",
    " || ",
    " | ",
    "(",
    "{ ",
    " }",
    "${HOME:+",
    "}",
    "$'",
    "=",
    "--o=",
    "$",
    "$#",
    "\t",
]
# Pieces of a value: most of them try to create the marker, or to leave the value's place.
VALUE_PIECES = [
    *[f"\ntouch {MARKER}\n", f"\ntouch {MARKER} #", f"\r\ntouch {MARKER}\r\n"] * 2,
    f"touch {MARKER}",
    f"$(touch {MARKER})",
    f"`touch {MARKER}`",
    f">{MARKER}",
    "\n",
    "\r",
    "\r\n",
    ";",
    "&&",
    "|",
    "'",
    '"',
    "\\",
    "#",
    " ",
    "$",
    "{",
    "}",
    "(",
    ")",
    "-",
    "${IFS}",
    "$'",
    "<<",
]
commands = st.lists(st.sampled_from(COMMAND_PIECES), min_size=1, max_size=8).map(
    lambda pieces: "echo " + "".join(pieces) + " {path}"
)
values = st.lists(st.sampled_from(VALUE_PIECES), max_size=6).map("".join)


@bash_only
@settings(max_examples=200, deadline=None, database=None)
@given(command=commands, path=values, shell_command=values)
def test_whatever_the_place_and_the_value_only_the_hooks_own_command_runs(
    command: str, path: str, shell_command: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:  # a fresh workspace for every example
        workspace = Path(folder)
        hook = command_hook(POST, command, workspace=workspace, timeout=10)
        hook.run(tool_event(workspace, "shell", path=path, command=shell_command))
        assert not (workspace / MARKER).exists()

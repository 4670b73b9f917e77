"""Chapter 4's hooks on their own: the command protocol, combining hooks, matchers, settings.

Most tests use Python functions as hooks (they are hooks too, and fast). The protocol
tests run real command hooks: small scripts written to tmp_path and run with this
Python through the shell, exactly as a hook from the settings file runs. The last
section runs the chapter's three example hooks as the real programs they are.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import Mode
from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS, load_policy
from chapters.ch03.tests.support import write_json
from chapters.ch04.demo import EXAMPLES, python_command
from chapters.ch04.hooks import (
    Hook,
    HookEvent,
    HookReply,
    Hooks,
    PlaceholderError,
    command_hook,
    fill_placeholders,
)
from chapters.ch04.settings import DEFAULT_TIMEOUT_SECONDS, load_hooks
from shared.decisions import Decision
from shared.errors import ConfigError
from shared.process import IS_WINDOWS, CommandOutcome

RESTRICTIVENESS = [Decision.PASSTHROUGH, Decision.ALLOW, Decision.ASK, Decision.DENY]
PRE = HookEvent.PRE_TOOL_USE
TOOLS = make_tools(Workspace(Path(__file__).parent))  # chapter 2's tools


def write_script(folder: Path, code: str, name: str = "hook.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return path


def event_for(workspace: Path, command: str = "ls") -> dict[str, Any]:
    return {
        "event": PRE,
        "workspace": str(workspace),
        "tool": "shell",
        "input": {"command": command},
        "tool_call_id": "call_1",
    }


def run_script_hook(
    tmp_path: Path,
    code: str,
    *,
    timeout: float = 10.0,
    payload: Mapping[str, Any] | None = None,
) -> HookReply:
    """Run `code` as a PreToolUse command hook in tmp_path and return its reply."""
    hook = command_hook(
        PRE, python_command(write_script(tmp_path, code)), workspace=tmp_path, timeout=timeout
    )
    reply = hook.run(payload if payload is not None else event_for(tmp_path))
    assert reply is not None  # a command hook always answers
    return reply


def said(
    name: str,
    reply: HookReply | Exception | None = None,
    *,
    event: HookEvent = PRE,
    matcher: str | None = None,
    log: list[str] | None = None,
) -> Hook:
    """A Python hook that answers `reply` (or raises it) and notes its name in `log`."""

    def run(payload: Mapping[str, Any]) -> HookReply | None:
        if log is not None:
            log.append(name)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return Hook(event, name, run, re.compile(matcher) if matcher is not None else None)


# --- 1. the command protocol ---------------------------------------------------------------


@pytest.mark.parametrize("code", ["import sys; sys.exit(0)", "print()"], ids=["silent", "blank"])
def test_exit_0_without_output_is_no_objection(tmp_path: Path, code: str) -> None:
    assert run_script_hook(tmp_path, code) == HookReply()


@pytest.mark.parametrize(
    ("answer", "decision", "reason", "context"),
    [
        ({"decision": "deny", "reason": "not here"}, Decision.DENY, "not here", ""),
        ({"decision": "allow", "reason": "fine"}, Decision.ALLOW, "fine", ""),
        ({"decision": "ask"}, Decision.ASK, "", ""),
        ({"decision": "passthrough"}, Decision.PASSTHROUGH, "", ""),
        (
            {"decision": "block", "reason": "Claude Code's word"},
            Decision.DENY,
            "Claude Code's word",
            "",
        ),
        ({"additionalContext": "the build is red"}, Decision.PASSTHROUGH, "", "the build is red"),
        ({"decision": "allow", "additionalContext": "说明"}, Decision.ALLOW, "", "说明"),
    ],
)
def test_exit_0_with_a_json_answer_is_read_as_the_hooks_decision(
    tmp_path: Path, answer: dict[str, Any], decision: Decision, reason: str, context: str
) -> None:
    code = f"import json; print(json.dumps({answer!r}))"
    reply = run_script_hook(tmp_path, code)
    assert reply == HookReply(decision, reason, context, failed=False)


def test_exit_2_blocks_with_stderr_as_the_reason(tmp_path: Path) -> None:
    code = """
        import sys
        print("ignored", flush=True)
        sys.stderr.write("too dangerous\\n  for this workspace\\n")
        sys.exit(2)
    """
    reply = run_script_hook(tmp_path, code)
    assert reply == HookReply(Decision.DENY, "too dangerous for this workspace", failed=False)


def test_exit_2_without_stderr_still_blocks_and_says_so(tmp_path: Path) -> None:
    reply = run_script_hook(tmp_path, "import sys; sys.exit(2)")
    assert (reply.decision, reply.reason, reply.failed) == (
        Decision.DENY,
        "blocked (exit code 2)",
        False,
    )


@pytest.mark.parametrize("code", [1, 127])
def test_any_other_exit_code_is_a_failed_hook(tmp_path: Path, code: int) -> None:
    reply = run_script_hook(tmp_path, f"import sys; sys.stderr.write('it broke'); sys.exit({code})")
    assert reply.failed
    assert reply.reason == f"failed with exit code {code}: it broke"


def test_a_hook_past_its_timeout_fails_and_its_process_tree_is_killed(tmp_path: Path) -> None:
    # The hook starts a child that would keep the output pipes open for 30 s: if only
    # the hook itself were killed, reading its output would wait for the child.
    code = """
        import subprocess, sys
        subprocess.run([sys.executable, "-c", "import time; time.sleep(30)"])
    """
    started = time.monotonic()
    reply = run_script_hook(tmp_path, code, timeout=0.2)
    elapsed = time.monotonic() - started
    assert reply.failed
    assert reply.reason == "timed out after 0.2 s (its process tree was killed)"
    assert elapsed < 4.5  # not the child's 30 s, nor the 5 s a surviving child would cost


# Issue 11: a hook's leftovers outlived it, and reading its output waited on them (5 s a
# pipe). Each hook below starts a child that holds the output pipes and would sleep for ten
# minutes, writes the child's pid to a file, and then ends or hangs. After the hook returns,
# the child must be gone: a pidfd becomes readable when its process ends, so the test waits
# for that event, with an upper bound that only a surviving child would ever reach.
LEFTOVER = """
    import subprocess, sys, time
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session={setsid}
    )
    open({pid_file!r}, "w", encoding="utf-8").write(str(child.pid))
    {then}
"""
needs_pidfd = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits on a Linux pidfd")


def _ended(pid: int, bound: float = 10.0) -> bool:
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # gone, reaped already
    try:
        readable, _, _ = select.select([pidfd], [], [], bound)
    finally:
        os.close(pidfd)
    return bool(readable)


@needs_pidfd
@pytest.mark.parametrize("setsid", [False, True], ids=["same-group", "setsid"])
@pytest.mark.parametrize(
    ("then", "timed_out"),
    [("sys.exit(0)", False), ("time.sleep(600)", True)],
    ids=["hook-exits-0", "hook-times-out"],
)
def test_a_hooks_leftover_children_are_killed_when_it_ends(
    tmp_path: Path, setsid: bool, then: str, timed_out: bool
) -> None:
    pid_file = tmp_path / "child.pid"
    code = LEFTOVER.format(setsid=setsid, pid_file=str(pid_file), then=then)
    reply = run_script_hook(tmp_path, code, timeout=2.0)  # time enough to write the pid first
    child = int(pid_file.read_text(encoding="utf-8"))
    try:
        assert reply.failed is timed_out, reply
        assert _ended(child), f"the hook's child {child} was still running after the hook"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


@needs_pidfd
def test_a_child_in_the_hooks_group_is_killed_even_if_it_let_go_of_the_pipes(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    code = f"""
        import subprocess, sys
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        open({str(pid_file)!r}, "w", encoding="utf-8").write(str(child.pid))
    """
    reply = run_script_hook(tmp_path, code, timeout=3.0)
    child = int(pid_file.read_text(encoding="utf-8"))
    try:
        assert reply == HookReply()
        assert _ended(child), f"the hook's child {child} was still running after the hook"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


@needs_pidfd
def test_a_daemon_that_left_the_group_and_the_pipes_is_out_of_reach(tmp_path: Path) -> None:
    # The documented limit: a child in a session of its own that let go of the output
    # pipes (a daemon) cannot be found, so it is not killed. Nothing reads from it either.
    pid_file = tmp_path / "child.pid"
    code = f"""
        import subprocess, sys
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        open({str(pid_file)!r}, "w", encoding="utf-8").write(str(child.pid))
    """
    reply = run_script_hook(tmp_path, code, timeout=3.0)
    child = int(pid_file.read_text(encoding="utf-8"))
    try:
        assert reply == HookReply()
        assert not _ended(child, bound=0)  # still running: documented, not a surprise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize(
    "printed",
    ["all good!", "[1, 2]", "null", '{"decision": "ALLOW"}'],
)
def test_stdout_that_is_not_a_hook_answer_is_a_failed_hook(tmp_path: Path, printed: str) -> None:
    reply = run_script_hook(tmp_path, f"print({printed!r})")
    assert reply.failed
    assert reply.reason.startswith("printed something that is not a hook answer: ")
    assert printed in reply.reason


def test_the_event_arrives_on_stdin_as_json_and_the_hook_runs_in_the_workspace(
    tmp_path: Path,
) -> None:
    out = tmp_path / "seen.json"
    code = f"""
        import json, os, sys
        event = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        seen = {{"event": event, "cwd": os.getcwd()}}
        open({str(out)!r}, "w", encoding="utf-8").write(json.dumps(seen))
    """
    workspace = tmp_path / "ws"
    workspace.mkdir()
    payload = event_for(workspace, "echo 你好 && ls")
    hook = command_hook(
        PRE, python_command(write_script(tmp_path, code)), workspace=workspace, timeout=10
    )
    assert hook.run(payload) == HookReply()
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen["event"] == payload
    assert Path(seen["cwd"]).resolve() == workspace.resolve()


def test_the_path_placeholder_is_filled_and_quoted_for_the_shell(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    code = f"""
        import json, sys
        open({str(out)!r}, "w", encoding="utf-8").write(json.dumps(sys.argv[1:]))
    """
    command = python_command(write_script(tmp_path, code)) + " {path} {not_an_argument}"
    hook = command_hook(HookEvent.POST_TOOL_USE, command, workspace=tmp_path, timeout=10)
    awkward = 'my notes/it\'s "odd" $HOME `whoami`; rm -rf x.md'
    payload = {"event": HookEvent.POST_TOOL_USE, "workspace": str(tmp_path)}
    assert hook.run({**payload, "input": {"path": awkward}}) == HookReply()
    assert json.loads(out.read_text(encoding="utf-8")) == [awkward, "{not_an_argument}"]
    assert hook.name == command  # messages name the command as written, unfilled


@pytest.mark.skipif(IS_WINDOWS, reason="PowerShell quoting differs")
def test_fill_placeholders_quotes_each_value_and_leaves_the_rest_as_written() -> None:
    filled = fill_placeholders(
        "ruff format {path} && echo {missing} ${HOME} '{a}'", {"path": "a b'c.py", "a": 1}
    )
    assert filled == "ruff format 'a b'\"'\"'c.py' && echo {missing} ${HOME} '1'"
    assert fill_placeholders("fmt {path}", {}) == "fmt {path}"


# Issue 11: `echo "{path}"` with the path `$(touch pwned)` ran touch (the value was quoted
# for an unquoted place, then put inside double quotes), and `--version` became an option.
# A placeholder is now quoted for the place it stands in; where it cannot be, the hook fails.
HOSTILE_VALUES = [
    "$(touch pwned)",
    "`touch pwned`",
    "'; touch pwned; '",
    '"; touch pwned; "',
    '\\"; touch pwned; #',
    'it\'s "$HOME" \\ ${x} !x',
    "line one\n touch pwned",
]
PLACES = [
    ("{path}", "{value}"),
    ('"{path}"', "{value}"),
    ("'{path}'", "{value}"),
    ("x={path}", "x={value}"),
    ('"--file={path}"', "--file={value}"),
    ("'a'{path}\"b\"", "a{value}b"),
    ('"${HOME:+x}{path}"', "x{value}"),
]
BARE_PLACES = {"{path}", "x={path}", "'a'{path}\"b\""}  # where the value stands unquoted


def argv_hook(tmp_path: Path, arguments: str) -> tuple[Hook, Path]:
    """A PostToolUse command hook that records its argv, run through the real shell."""
    out = tmp_path / "argv.json"
    code = f"""
        import json, sys
        open({str(out)!r}, "w", encoding="utf-8").write(json.dumps(sys.argv[1:]))
    """
    command = python_command(write_script(tmp_path, code)) + " " + arguments
    return command_hook(HookEvent.POST_TOOL_USE, command, workspace=tmp_path, timeout=10), out


def post_event(tmp_path: Path, path: str) -> dict[str, Any]:
    return {"event": HookEvent.POST_TOOL_USE, "workspace": str(tmp_path), "input": {"path": path}}


@pytest.mark.skipif(IS_WINDOWS, reason="bash quoting; PowerShell's is checked without running it")
@pytest.mark.parametrize("value", HOSTILE_VALUES)
@pytest.mark.parametrize(("place", "expected"), PLACES)
def test_a_placeholder_value_is_one_literal_argument_wherever_it_is_quoted(
    tmp_path: Path, place: str, expected: str, value: str
) -> None:
    hook, out = argv_hook(tmp_path, place)
    reply = hook.run(post_event(tmp_path, value))
    assert not (tmp_path / "pwned").exists()
    if "\n" in value and place in BARE_PLACES:  # a line break passes only inside quotes
        assert reply is not None and reply.failed and not out.exists()
        return
    assert reply == HookReply()
    assert json.loads(out.read_text(encoding="utf-8")) == [expected.format(value=value)]


@pytest.mark.skipif(IS_WINDOWS, reason="bash quoting")
@pytest.mark.parametrize("place", ["{path}", '"{path}"', "'{path}'"])
def test_a_path_that_looks_like_an_option_is_passed_as_a_path(tmp_path: Path, place: str) -> None:
    hook, out = argv_hook(tmp_path, place)
    assert hook.run(post_event(tmp_path, "--version")) == HookReply()
    assert json.loads(out.read_text(encoding="utf-8")) == ["./--version"]


@pytest.mark.parametrize(
    "command",
    [
        "echo $(cat {path})",
        'echo "$(cat {path})"',
        "echo `cat {path}`",
        "echo $((1 + {path}))",
        "(( {path} ))",
        "[[ {path} -eq 1 ]]",
        "echo $'{path}'",
        "cat <<EOF\n{path}\nEOF",
        "echo \\{path}",
    ],
)
def test_a_placeholder_where_it_cannot_be_quoted_fails_the_hook_and_runs_nothing(
    tmp_path: Path, command: str
) -> None:
    hook = command_hook(HookEvent.POST_TOOL_USE, command, workspace=tmp_path, timeout=10)
    reply = hook.run(post_event(tmp_path, "$(touch pwned)"))
    assert reply is not None and reply.failed
    assert reply.reason.startswith("cannot fill {path} in its command: ")
    assert not (tmp_path / "pwned").exists()


def test_a_shell_variable_in_braces_is_not_a_placeholder() -> None:
    assert fill_placeholders("echo ${path} {path}", {"path": "a b"}, windows=False) == (
        "echo ${path} 'a b'"
    )


@pytest.mark.parametrize(
    ("template", "value", "filled"),
    [
        ("fmt {path}", "it's.py", "fmt 'it''s.py'"),
        ("fmt {path}", "a\u2019; rm x; \u2019b", "fmt 'a\u2019\u2019; rm x; \u2019\u2019b'"),
        ("fmt '{path}'", "it's", "fmt 'it''s'"),
        ('fmt "{path}"', 'a$(rm x)`"b', 'fmt "a`$(rm x)```"b"'),
        ('fmt "{path}"', "a\u201d; rm x", 'fmt "a`\u201d; rm x"'),
        ("fmt {path}", "-x", "fmt './-x'"),
    ],
)
def test_placeholders_are_quoted_for_powershell_too(template: str, value: str, filled: str) -> None:
    assert fill_placeholders(template, {"path": value}, windows=True) == filled


@pytest.mark.parametrize("command", ["echo $(cat {path})", "echo @'\n{path}\n'@", "echo `{path}"])
def test_in_powershell_a_placeholder_where_it_cannot_be_quoted_is_refused(command: str) -> None:
    with pytest.raises(PlaceholderError):
        fill_placeholders(command, {"path": "x"}, windows=True)


# --- 2. several hooks: order, the most restrictive decision, contexts ----------------------


def test_the_most_restrictive_decision_wins_whatever_the_order() -> None:
    for size in range(1, len(RESTRICTIVENESS) + 1):
        for order in itertools.permutations(RESTRICTIVENESS, size):
            hooks = Hooks([said(f"h{i}", HookReply(d)) for i, d in enumerate(order)])
            result = hooks.run(PRE, {}, tool="shell")
            expected = max(order, key=RESTRICTIVENESS.index)
            assert result.decision is expected, order
            assert [name for _, name in hooks.ran] == [f"h{i}" for i in range(size)]


def test_no_hook_at_all_is_passthrough() -> None:
    result = Hooks().run(PRE, {}, tool="shell")
    assert (result.decision, result.reason, result.context) == (Decision.PASSTHROUGH, "", "")


def test_every_matching_hook_runs_in_order_with_reasons_and_contexts_joined_in_order() -> None:
    log: list[str] = []
    hooks = Hooks(
        [
            said("first", HookReply(Decision.DENY, "no", "one"), log=log),
            said("second", None, log=log),
            said("third", HookReply(Decision.ALLOW, "yes", "two"), log=log),
            said("fourth", HookReply(context="three"), log=log),
        ]
    )
    result = hooks.run(PRE, {}, tool="shell")
    assert log == ["first", "second", "third", "fourth"]  # a deny does not stop the others
    assert hooks.ran == [(PRE, "first"), (PRE, "second"), (PRE, "third"), (PRE, "fourth")]
    assert result.decision is Decision.DENY
    assert result.reason == "first: no; third: yes"
    assert result.context == "one\ntwo\nthree"


@pytest.mark.parametrize(
    "broken",
    [HookReply(Decision.ALLOW, "looks fine", failed=True), RuntimeError("disk on fire")],
    ids=["failed-reply", "exception"],
)
def test_a_failed_hook_counts_as_deny_even_when_another_allows(
    broken: HookReply | Exception,
) -> None:
    hooks = Hooks([said("ok", HookReply(Decision.ALLOW)), said("broken", broken)])
    result = hooks.run(PRE, {}, tool="shell")
    assert result.decision is Decision.DENY
    if isinstance(broken, Exception):
        assert result.reason == "broken: crashed (RuntimeError: disk on fire)"


def test_only_hooks_of_the_event_and_the_tool_run() -> None:
    log: list[str] = []
    hooks = Hooks(
        [
            said("post", event=HookEvent.POST_TOOL_USE, log=log),
            said("stop", event=HookEvent.STOP, log=log),
            said("reads", matcher="read_file", log=log),
            said("shell", matcher="shell", log=log),
        ]
    )
    hooks.run(PRE, {}, tool="shell")
    assert log == ["shell"]
    assert hooks.ran == [(PRE, "shell")]
    assert hooks.counts() == {"PostToolUse": 1, "Stop": 1, "PreToolUse": 2}


# --- 3. matchers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "matches"),
    [
        ("write_file", True),
        ("edit_file", True),
        ("write_files", False),
        ("rewrite_file", False),
        ("edit_file2", False),
        ("shell", False),
    ],
)
def test_a_matcher_must_match_the_whole_tool_name(tool: str, matches: bool) -> None:
    log: list[str] = []
    hooks = Hooks([said("fmt", matcher="write_file|edit_file", log=log)])
    assert hooks.hooks[0].applies_to(tool) is matches
    hooks.run(PRE, {}, tool=tool)
    assert log == (["fmt"] if matches else [])


def test_a_hook_without_a_matcher_sees_every_tool() -> None:
    hook = said("all")
    assert all(hook.applies_to(tool) for tool in [*TOOLS, "anything_else"])


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def test_in_settings_no_matcher_or_an_empty_one_matches_every_tool(
    workspace: Workspace, home: Path
) -> None:
    entries = [
        {"name": "none", "command": "exit 0"},
        {"name": "empty", "command": "exit 0", "matcher": ""},
        {"name": "writes", "command": "exit 0", "matcher": "write_file|edit_file"},
    ]
    write_json(workspace.root / PROJECT_SETTINGS, {"hooks": {"PreToolUse": entries}})
    hooks = {hook.name: hook for hook in load_hooks(workspace, home)}
    for name in ("none", "empty"):
        assert hooks[name].matcher is None
        assert all(hooks[name].applies_to(tool) for tool in TOOLS), name
    assert [t for t in TOOLS if hooks["writes"].applies_to(t)] == ["write_file", "edit_file"]
    assert not hooks["writes"].applies_to("write_files")


def test_in_settings_a_star_matcher_matches_every_tool(workspace: Workspace, home: Path) -> None:
    entry = {"name": "star", "command": "exit 0", "matcher": "*"}
    write_json(workspace.root / PROJECT_SETTINGS, {"hooks": {"PreToolUse": [entry]}})
    [hook] = load_hooks(workspace, home)
    assert hook.matcher is None
    assert all(hook.applies_to(tool) for tool in TOOLS)


# --- 4. settings -----------------------------------------------------------------------------


def test_hooks_come_from_the_project_then_the_user_each_in_written_order(
    workspace: Workspace, home: Path
) -> None:
    write_json(
        workspace.root / PROJECT_SETTINGS,
        {
            "hooks": {
                "PreToolUse": [
                    {"name": "p1", "command": "exit 0"},
                    {"name": "p2", "command": "exit 0", "matcher": "shell", "timeout": 5},
                ],
                "Stop": [{"command": "exit 0"}],
            }
        },
    )
    write_json(
        home / USER_SETTINGS,
        {"hooks": {"PreToolUse": [{"name": "u1", "command": "exit 0"}, {"command": "exit 0"}]}},
    )
    loaded = load_hooks(workspace, home)
    assert [(hook.event, hook.name) for hook in loaded] == [
        (PRE, "p1"),
        (PRE, "p2"),
        (HookEvent.STOP, "exit 0"),  # no name: the command names it
        (PRE, "u1"),
        (PRE, "exit 0"),
    ]
    assert all(isinstance(hook.event, HookEvent) for hook in loaded)
    hooks = Hooks(loaded)
    result = hooks.run(PRE, event_for(workspace.root), tool="shell")
    assert result.decision is Decision.PASSTHROUGH
    assert [name for _, name in hooks.ran] == ["p1", "p2", "u1", "exit 0"]


def test_a_command_hook_from_settings_uses_its_timeout_and_the_default(
    workspace: Workspace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chapters.ch04.hooks as hooks_module

    timeouts: list[float] = []

    def fake_run_command(line: str, **options: Any) -> Any:
        timeouts.append(options["timeout"])
        return CommandOutcome(0, "", "")

    monkeypatch.setattr(hooks_module, "run_command", fake_run_command)
    write_json(
        workspace.root / PROJECT_SETTINGS,
        {"hooks": {"Stop": [{"command": "a", "timeout": 2.5}, {"command": "b"}]}},
    )
    Hooks(load_hooks(workspace, home)).run(HookEvent.STOP, {"event": HookEvent.STOP})
    assert timeouts == [2.5, DEFAULT_TIMEOUT_SECONDS]


MALFORMED = [
    pytest.param("{not json", "not valid JSON (line 1, column 2", id="invalid-json"),
    pytest.param(
        {"hooks": {"PreTool": [{"command": "x"}]}},
        "hooks.PreTool.[key]: Input should be 'UserPromptSubmit', 'PreToolUse', "
        "'PostToolUse' or 'Stop'",
        id="unknown-event",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": [{"matcher": "shell"}]}},
        "hooks.PreToolUse.0.command: Field required",
        id="missing-command",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": [{"command": ""}]}},
        "hooks.PreToolUse.0.command: String should have at least 1 character",
        id="empty-command",
    ),
    pytest.param(
        {"hooks": {"Stop": [{"command": "x", "matcher": "", "when": "always"}]}},
        "hooks.Stop.0.when: Extra inputs are not permitted",
        id="extra-key",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": [{"command": "x", "timeout": 0}]}},
        "hooks.PreToolUse.0.timeout: Input should be greater than 0",
        id="zero-timeout",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": [{"command": "x", "timeout": -5}]}},
        "hooks.PreToolUse.0.timeout: Input should be greater than 0",
        id="negative-timeout",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": [{"command": "x", "matcher": "write_file|(edit"}]}},
        "hooks.PreToolUse.0.matcher: 'write_file|(edit' is not a regular expression",
        id="invalid-regex",
    ),
    pytest.param(
        {"hooks": {"PreToolUse": {"command": "x"}}},
        "hooks.PreToolUse: Input should be a valid list",
        id="not-a-list",
    ),
]


@pytest.mark.parametrize(("content", "problem"), MALFORMED)
@pytest.mark.parametrize("where", ["project", "home"])
def test_malformed_hooks_settings_are_a_config_error_naming_the_file(
    workspace: Workspace, home: Path, where: str, content: Any, problem: str
) -> None:
    path, shown = (
        (workspace.root / PROJECT_SETTINGS, ".tutorial/settings.json")
        if where == "project"
        else (home / USER_SETTINGS, "~/.tutorial/settings.json")
    )
    write_json(path, content)
    with pytest.raises(ConfigError) as raised:
        load_hooks(workspace, home)
    assert str(raised.value).startswith(f"{shown}: {problem}")


def test_no_settings_or_only_permissions_give_no_hooks(workspace: Workspace, home: Path) -> None:
    assert load_hooks(workspace, home) == []
    write_json(workspace.root / PROJECT_SETTINGS, {"permissions": {"allow": ["shell(ls)"]}})
    write_json(home / USER_SETTINGS, {"permissions": {"defaultMode": "plan"}, "hooks": {}})
    assert load_hooks(workspace, home) == []


def test_permissions_and_hooks_live_side_by_side_in_one_file(
    workspace: Workspace, home: Path
) -> None:
    write_json(
        workspace.root / PROJECT_SETTINGS,
        {
            "permissions": {"defaultMode": "accept-edits", "deny": ["shell(rm:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "shell", "command": "exit 0"}]},
        },
    )
    policy = load_policy(workspace, home, known_tools=TOOLS)  # chapter 3 still reads it
    assert policy.mode is Mode.ACCEPT_EDITS
    assert [rule.describe() for rule in policy.deny] == [
        "rule shell(rm:*) from .tutorial/settings.json"
    ]
    [hook] = load_hooks(workspace, home)
    assert (hook.event, hook.name) == (PRE, "exit 0")


def test_a_workspace_that_is_the_home_folder_loads_each_hook_once(tmp_path: Path) -> None:
    write_json(tmp_path / PROJECT_SETTINGS, {"hooks": {"Stop": [{"command": "exit 0"}]}})
    assert len(load_hooks(Workspace(tmp_path), tmp_path)) == 1


# --- 5. the example hooks, as real programs ------------------------------------------------


def run_example(name: str, event: Mapping[str, Any]) -> subprocess.CompletedProcess[str]:
    # The stop example runs pytest; without this, plugin loading alone takes a second or two.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("command", "blocked"),
    [
        ("rm -rf x", "rm -rf x"),
        ("rm -fr x", "rm -fr x"),
        ("rm -r -f x", "rm -r -f x"),
        ("rm -Rf x", "rm -Rf x"),
        ("echo a && rm -rf b", "rm -rf b"),
        ("ls; rm -f -r build | cat", "rm -f -r build"),
        ("sudo rm -rf /", "sudo rm -rf /"),
        ("env X=1 /bin/rm -r --force x", "env X=1 /bin/rm -r --force x"),
        ("rm --recursive --force x", "rm --recursive --force x"),
        ("\\rm -fr x", "\\rm -fr x"),
    ],
)
def test_guard_blocks_recursive_forced_rm_with_the_reason_on_stderr(
    tmp_path: Path, command: str, blocked: str
) -> None:
    done = run_example("guard.py", event_for(tmp_path, command))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == f"'{blocked}' deletes recursively without asking"


@pytest.mark.parametrize(
    "command", ["rm x", "rm -r x", "rm -f x", "ls -rf", "git status", "echo rm -rf x"]
)
def test_guard_lets_other_commands_pass_silently(tmp_path: Path, command: str) -> None:
    done = run_example("guard.py", event_for(tmp_path, command))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def post_write_event(workspace: Path, path: str) -> dict[str, Any]:
    return {
        "event": HookEvent.POST_TOOL_USE,
        "workspace": str(workspace),
        "tool": "write_file",
        "input": {"path": path, "content": "..."},
        "tool_call_id": "call_1",
        "result": {"status": "ok", "content": f"ok: created {path}"},
    }


@pytest.mark.parametrize(
    ("before", "after", "count"),
    [
        (b"# Notes   \n\ntext\t\nend", b"# Notes\n\ntext\nend", 2),
        (b"a  \r\nb\r\nc \t \r\n", b"a\r\nb\r\nc\r\n", 2),
    ],
    ids=["lf", "crlf"],
)
def test_strip_whitespace_strips_trailing_spaces_and_says_how_many_lines(
    tmp_path: Path, before: bytes, after: bytes, count: int
) -> None:
    (tmp_path / "docs").mkdir()
    target = tmp_path / "docs" / "notes.md"
    target.write_bytes(before)
    done = run_example("strip_whitespace.py", post_write_event(tmp_path, "docs/notes.md"))
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == after
    answer = json.loads(done.stdout)
    assert set(answer) == {"additionalContext"}
    assert answer["additionalContext"] == (
        f"strip_whitespace.py removed trailing spaces from {count} line(s) of docs/notes.md; "
        "read it again before you edit it."
    )


def test_strip_whitespace_says_nothing_about_a_clean_file(tmp_path: Path) -> None:
    target = tmp_path / "clean.md"
    target.write_bytes(b"clean\r\nfile\r\n")
    done = run_example("strip_whitespace.py", post_write_event(tmp_path, "clean.md"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert target.read_bytes() == b"clean\r\nfile\r\n"


def stop_event(workspace: Path) -> dict[str, Any]:
    return {"event": HookEvent.STOP, "workspace": str(workspace), "prompt": "p", "answer": "a"}


@pytest.mark.parametrize(
    ("tests", "code"),
    [
        ({"test_math.py": "def test_sum():\n    assert 1 + 1 == 3\n"}, 2),
        ({"test_math.py": "def test_sum():\n    assert 1 + 1 == 2\n"}, 0),
    ],
    ids=["red", "green"],
)
def test_stop_until_tests_pass_refuses_while_the_tests_fail(
    tmp_path: Path, tests: Mapping[str, str], code: int
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, text in tests.items():
        (workspace / name).write_text(text, encoding="utf-8")
    done = run_example("stop_until_tests_pass.py", stop_event(workspace))
    assert done.returncode == code, done.stderr
    assert done.stdout == ""
    if code == 2:
        assert done.stderr.startswith("The tests fail; fix them before you stop:")
        assert "1 failed" in done.stderr
        assert "test_sum" in done.stderr
    else:
        assert done.stderr == ""

"""Chapter 4 end to end: every hook event through the real loop, failing closed, the CLI.

The agent is built like chapter 3's tests build theirs: chapter 2's tools with a fake
shell runner, a policy loaded the way the CLI loads it (with a home folder of its own),
a scripted human and a real audit log, all in tmp_path; chapter 4's loop runs it with
`HookedGate` as step 4. The model is scripted and emits real tool calls. Hooks are
Python functions where that is enough, and real command hooks where the protocol
matters. Then the command line through click's runner, and the real openai SDK.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.reading import PAGE_LINES
from chapters.ch02.tests.cli_support import keep_demo_folder
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.policy import Mode
from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS
from chapters.ch03.tests.support import (
    DONE,
    call,
    read_audit,
    shell,
    turn,
    tutorial,
    write_json,
)
from chapters.ch04.demo import DEMO_NOTE, python_command, write_demo_settings
from chapters.ch04.hooks import Hook, HookEvent, HookReply, Hooks, command_hook
from chapters.ch04.loop_hooks import MAX_STOP_REFUSALS, HookBlockedError, StopRefusedError
from chapters.ch04.settings import load_hooks
from chapters.testing import AgentRun
from shared.agent import DEFAULT_MAX_TURNS
from shared.completion import ModelClient
from shared.config import Settings
from shared.decisions import Decision
from shared.errors import AgentLimitError
from shared.openai_client import OpenAIChatModel
from shared.scripted import ScriptedModel, Step, response

PRE, POST = HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE
PROMPT, STOP = HookEvent.USER_PROMPT_SUBMIT, HookEvent.STOP
NO_RULE = "no rule matched, and mode default does not allow execute calls"


pytestmark = pytest.mark.usefixtures("isolated")


# --- an agent with hooks around a permission gate ------------------------------------------


@dataclass
class Agent(AgentRun[ScriptedModel]):
    """Chapter 4's agent in tmp_path/ws, as its recipe builds it (the policy from the settings
    files and the flags in `options`) with `hooks`, built for its run."""

    chapter = 4
    hooks: Hooks = field(default_factory=Hooks)
    asker: ScriptedAsker = field(default_factory=lambda: ScriptedAsker([]))
    runner: FakeRunner = field(default_factory=FakeRunner)

    @property
    def workspace(self) -> Workspace:
        return Workspace(self.root)

    @property
    def audit_path(self) -> Path:
        return self.tmp_path / "audit" / "audit.jsonl"

    def make_model(self) -> ScriptedModel:
        return self.model or ScriptedModel([])  # the one `run` made

    def given(self) -> dict[str, Any]:
        audit = AuditLog(self.audit_path)
        return {"asker": self.asker, "audit": audit, "hooks": self.hooks, "runner": self.runner}

    def run(  # type: ignore[override]
        self,
        *steps: Step,
        prompt: str = "do the task",
        max_turns: int = DEFAULT_MAX_TURNS,
        model: ModelClient | None = None,
    ) -> str:
        """One run on `steps`, or on `model` (the real SDK's, which keeps no requests)."""
        self.model = ScriptedModel(steps)
        self.options = {**self.options, "max_turns": max_turns}
        spec = self.build()
        if model is not None:
            self.spec = replace(spec, model=model)  # chapter 4's recipe layers no model
        return super().run(prompt)

    def ran(self, event: HookEvent) -> list[str]:
        return [name for e, name in self.hooks.ran if e is event]

    def audit_lines(self) -> list[tuple[str, str, str]]:
        return [
            (a["tool_call_id"], a["decision"], a["source"]) for a in read_audit(self.audit_path)
        ]


def make_agent(
    tmp_path: Path,
    *hooks: Hook,
    answers: Sequence[str] = (),
    mode: Mode | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
) -> Agent:
    """An agent in tmp_path/ws with the hooks of its settings files (as the CLI loads them),
    then `hooks`."""
    agent = Agent(
        tmp_path,
        asker=ScriptedAsker(list(answers)),
        options={"mode": mode, "allow": allow, "deny": deny},
    )
    if settings is not None:
        write_json(agent.root / PROJECT_SETTINGS, settings)
    agent.hooks = Hooks([*load_hooks(agent.workspace, agent.home), *hooks])
    return agent


Answer = HookReply | Exception | None


def hook(
    event: HookEvent,
    name: str,
    *answers: Answer,
    matcher: str | None = None,
    seen: list[Mapping[str, Any]] | None = None,
) -> Hook:
    """A Python hook giving `answers` in turn (the last one again and again); raises exceptions."""
    replies = list(answers) or [None]
    calls = 0

    def run(payload: Mapping[str, Any]) -> HookReply | None:
        nonlocal calls
        if seen is not None:
            seen.append(dict(payload))
        reply = replies[min(calls, len(replies) - 1)]
        calls += 1
        if isinstance(reply, Exception):
            raise reply
        return reply

    run.__name__ = name
    return Hook(event, name, run, re.compile(matcher) if matcher else None)


def script_hook(
    tmp_path: Path, event: HookEvent, code: str, *, name: str = "script", timeout: float = 10
) -> Hook:
    path = tmp_path / f"{name}-{event}.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return command_hook(
        event, python_command(path), name=name, workspace=tmp_path / "ws", timeout=timeout
    )


def tool_messages(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


# --- 1. UserPromptSubmit -------------------------------------------------------------------


def test_user_prompt_submit_context_follows_the_prompt_in_the_first_request(
    tmp_path: Path,
) -> None:
    seen: list[Mapping[str, Any]] = []
    agent = make_agent(
        tmp_path,
        hook(PROMPT, "branch", HookReply(context="you are on branch main"), seen=seen),
        hook(PROMPT, "quiet", None),
        hook(PROMPT, "date", HookReply(context="today is Monday")),
    )
    assert agent.run(DONE, prompt="fix the bug") == "done"
    [first] = agent.requests
    assert [(m["role"], m["content"]) for m in first["messages"]] == [
        ("system", SYSTEM_PROMPT),
        ("user", "fix the bug"),
        ("user", "[UserPromptSubmit hook] you are on branch main\ntoday is Monday"),
    ]
    assert seen == [
        {"event": PROMPT, "workspace": str(agent.workspace.root), "prompt": "fix the bug"}
    ]


def test_user_prompt_submit_without_context_adds_nothing(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(PROMPT, "quiet", HookReply(Decision.ALLOW, "fine")))
    agent.run(DONE)
    assert [m["role"] for m in agent.requests[0]["messages"]] == ["system", "user"]


def test_a_user_prompt_submit_block_raises_and_no_request_is_sent(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        hook(PROMPT, "context", HookReply(context="ignored")),
        hook(PROMPT, "secrets", HookReply(Decision.DENY, "the prompt contains an API key")),
    )
    with pytest.raises(HookBlockedError) as raised:
        agent.run(DONE)
    assert str(raised.value) == (
        "a UserPromptSubmit hook blocked the prompt: secrets: the prompt contains an API key"
    )
    assert agent.requests == []
    assert agent.ran(STOP) == []


# --- 2. PreToolUse: each decision, and what no hook can override ---------------------------


def test_a_pre_tool_use_deny_keeps_the_call_from_running_and_tells_the_model_why(
    tmp_path: Path,
) -> None:
    agent = make_agent(
        tmp_path,
        hook(PRE, "freeze", HookReply(Decision.DENY, "the repo is frozen today"), matcher="shell"),
        hook(POST, "after", None),
        allow=["shell(git:*)"],
    )
    agent.run(turn(shell("c1", "git commit -m x")), DONE)
    content = agent.result("c1")
    assert content.startswith("denied")
    assert "the repo is frozen today" in content
    assert agent.runner.commands == []
    assert agent.asker.requests == []
    assert agent.ran(POST) == []
    assert agent.audit_lines() == [
        ("c1", "deny", "PreToolUse hook freeze: the repo is frozen today")
    ]
    assert tool_messages(agent.requests[1]["messages"]) == {"c1": content}


def test_a_pre_tool_use_allow_runs_a_call_that_would_ask_without_asking(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        hook(PRE, "ci", HookReply(Decision.ALLOW, "pushes are fine here"), matcher="shell"),
        settings={"permissions": {"ask": ["shell(git push:*)"]}},
    )
    agent.run(turn(shell("c1", "git push origin main")), DONE)
    assert agent.asker.requests == []
    assert agent.runner.commands == ["git push origin main"]
    assert agent.result("c1").startswith("ok: ")
    assert agent.audit_lines() == [("c1", "allow", "PreToolUse hook ci: pushes are fine here")]


def test_a_pre_tool_use_ask_asks_about_a_read_that_would_be_allowed(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "secrets.txt").write_text("hunter2\n", encoding="utf-8")
    agent = make_agent(
        tmp_path,
        hook(PRE, "careful", HookReply(Decision.ASK, "this file looks private")),
        answers=["n"],
    )
    agent.run(turn(call("c1", "read_file", path="secrets.txt")), DONE)
    [request] = agent.asker.requests
    assert request.tool_name == "read_file"
    assert "policy: PreToolUse hook careful: this file looks private" in request.reason
    assert agent.result("c1").startswith("denied: the human refused this call")
    assert "hunter2" not in agent.result("c1")
    assert agent.audit_lines() == [
        ("c1", "ask", "PreToolUse hook careful: this file looks private"),
        ("c1", "deny", "human: no"),
    ]


def test_a_pre_tool_use_passthrough_leaves_the_decision_to_the_policy(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(
        tmp_path,
        hook(PRE, "silent", None),
        hook(PRE, "explicit", HookReply(Decision.PASSTHROUGH, "no opinion")),
        answers=["n"],
        allow=["shell(git status)"],
    )
    agent.run(
        turn(
            call("c1", "read_file", path="notes.txt"),
            shell("c2", "git status"),
            shell("c3", "git push"),
        ),
        DONE,
    )
    assert agent.ran(PRE) == ["silent", "explicit"] * 3
    [request] = agent.asker.requests
    assert request.arguments == {"command": "git push"}
    assert request.reason.endswith(f"policy: {NO_RULE}")
    assert agent.runner.commands == ["git status"]
    assert "hello" in agent.result("c1")
    assert agent.audit_lines() == [
        ("c1", "allow", "mode default allows read calls"),
        ("c2", "allow", "rule shell(git status) from --allow"),
        ("c3", "ask", NO_RULE),
        ("c3", "deny", "human: no"),
    ]


@pytest.mark.parametrize("where", ["settings", "flag"])
def test_a_deny_rule_still_wins_over_a_hook_allow(tmp_path: Path, where: str) -> None:
    rules = ["shell(rm:*)"]
    agent = make_agent(
        tmp_path,
        hook(PRE, "yes-man", HookReply(Decision.ALLOW, "sure")),
        hook(POST, "after", None),
        **(
            {"settings": {"permissions": {"deny": rules}}}
            if where == "settings"
            else {"deny": rules}
        ),
    )
    agent.run(turn(shell("c1", "echo hi && rm -rf build")), DONE)
    assert agent.runner.commands == []
    source = ".tutorial/settings.json" if where == "settings" else "--deny"
    assert f"rule shell(rm:*) from {source}" in agent.result("c1")
    assert agent.ran(PRE) == ["yes-man"]  # heard, and overruled
    assert agent.ran(POST) == []


def test_plan_mode_still_denies_a_write_a_hook_allows(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        hook(PRE, "yes-man", HookReply(Decision.ALLOW)),
        hook(POST, "after", None),
        mode=Mode.PLAN,
    )
    agent.run(turn(call("c1", "write_file", path="new.txt", content="x\n")), DONE)
    assert agent.result("c1").startswith("denied: plan mode is read-only")
    assert agent.ran(POST) == []
    assert not (agent.root / "new.txt").exists()
    assert agent.audit_lines() == [("c1", "deny", "mode plan (read-only)")]


def test_an_invalid_call_reaches_no_hook(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(PRE, "pre", None), hook(POST, "post", None))
    agent.run(turn(call("c1", "read_file", path="a.txt", bogus=1), call("c2", "nope")), DONE)
    assert agent.hooks.ran == []
    assert agent.audit_lines() == []


def test_a_matcher_keeps_a_hook_to_its_tools_in_the_loop(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        hook(PRE, "shell-only", HookReply(Decision.DENY, "no shell"), matcher="shell"),
        hook(PRE, "writes", None, matcher="write_file|edit_file"),
        mode=Mode.ACCEPT_EDITS,
    )
    agent.run(
        turn(
            call("c1", "write_file", path="a.txt", content="a\n"),
            call("c2", "glob", pattern="*.txt"),
            shell("c3", "ls"),
        ),
        DONE,
    )
    assert agent.ran(PRE) == ["writes", "shell-only"]
    assert agent.result("c1").startswith("ok: ")
    assert agent.result("c2").startswith("ok")
    assert agent.result("c3").startswith("denied")


# --- 3. PostToolUse ------------------------------------------------------------------------


def test_post_tool_use_context_is_appended_to_the_result_the_model_reads(tmp_path: Path) -> None:
    seen: list[Mapping[str, Any]] = []
    agent = make_agent(
        tmp_path,
        hook(POST, "fmt", HookReply(context="formatted a.txt"), matcher="write_file", seen=seen),
        hook(POST, "lint", HookReply(context="lint: clean"), matcher="write_file"),
        mode=Mode.ACCEPT_EDITS,
    )
    agent.run(turn(call("c1", "write_file", path="a.txt", content="a\n")), DONE)
    plain = "ok: created a.txt; a.txt now has 1 line."
    [payload] = seen
    assert payload["result"] == {"status": "ok", "content": plain}
    assert tool_messages(agent.requests[1]["messages"]) == {
        "c1": f"{plain}\n[PostToolUse hook] formatted a.txt\nlint: clean"
    }


def test_post_tool_use_runs_only_for_calls_that_ran(tmp_path: Path) -> None:
    seen: list[Mapping[str, Any]] = []
    agent = make_agent(
        tmp_path,
        hook(PRE, "no-curl", HookReply(Decision.DENY, "no network"), matcher="shell"),
        hook(POST, "after", None, seen=seen),
        answers=["n"],
        deny=["write_file(locked.txt)"],
    )
    agent.run(
        turn(
            call("c1", "write_file", path="locked.txt", content="x\n"),  # deny rule
            call("c2", "write_file", path="asked.txt", content="x\n"),  # the human says no
            shell("c3", "curl example.com"),  # the PreToolUse hook denies
            call("c4", "glob", pattern="*"),  # runs
        ),
        DONE,
    )
    assert [payload["tool_call_id"] for payload in seen] == ["c4"]
    for call_id in ("c1", "c2", "c3"):
        assert agent.result(call_id).startswith("denied"), call_id
        assert "[PostToolUse hook" not in agent.result(call_id)


@pytest.mark.parametrize("kind", ["exception", "exit-1"])
def test_a_failing_post_tool_use_hook_is_reported_and_the_result_stays(
    tmp_path: Path, kind: str
) -> None:
    broken = (
        hook(POST, "broken", RuntimeError("formatter missing"))
        if kind == "exception"
        else script_hook(
            tmp_path, POST, "import sys; sys.stderr.write('formatter missing'); sys.exit(1)",
            name="broken",
        )
    )  # fmt: skip
    agent = make_agent(tmp_path, broken, mode=Mode.ACCEPT_EDITS)
    agent.run(turn(call("c1", "write_file", path="a.txt", content="a\n")), DONE)
    said = (
        "crashed (RuntimeError: formatter missing)"
        if kind == "exception"
        else "failed with exit code 1: formatter missing"
    )
    assert agent.result("c1") == (
        f"ok: created a.txt; a.txt now has 1 line.\n[PostToolUse hook: broken: {said}]"
    )
    assert (agent.root / "a.txt").read_text(encoding="utf-8") == "a\n"


# --- 4. Stop -------------------------------------------------------------------------------


def test_a_stop_refusal_goes_back_to_the_model_and_a_later_allow_ends_the_run(
    tmp_path: Path,
) -> None:
    seen: list[Mapping[str, Any]] = []
    agent = make_agent(
        tmp_path,
        hook(STOP, "tests", HookReply(Decision.DENY, "2 tests fail"), None, seen=seen),
    )
    answer = agent.run(response("all done"), response("now really done"), prompt="fix it")
    assert answer == "now really done"
    assert len(agent.requests) == 2
    assert agent.requests[1]["messages"][-2:] == [
        {"role": "assistant", "content": "all done"},
        {"role": "user", "content": "[Stop hook] Do not stop yet: tests: 2 tests fail"},
    ]
    assert [p["answer"] for p in seen] == ["all done", "now really done"]
    assert seen[0] == {
        "event": STOP,
        "workspace": str(agent.workspace.root),
        "prompt": "fix it",
        "answer": "all done",
    }
    assert "Stop hook refused the stop: tests: 2 tests fail" in agent.printed()


def test_consecutive_stop_refusals_are_bounded(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(STOP, "never", HookReply(Decision.DENY, "keep going")))
    steps = [response(f"answer {i}") for i in range(MAX_STOP_REFUSALS + 5)]
    with pytest.raises(StopRefusedError) as raised:
        agent.run(*steps)
    assert len(agent.requests) == MAX_STOP_REFUSALS + 1
    assert agent.ran(STOP) == ["never"] * (MAX_STOP_REFUSALS + 1)
    assert str(raised.value) == (
        f"the Stop hook refused {MAX_STOP_REFUSALS + 1} times: never: keep going"
    )


def test_the_refusal_count_starts_again_when_the_model_calls_tools(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(STOP, "never", HookReply(Decision.DENY, "keep going")))
    texts = [response("text")] * MAX_STOP_REFUSALS
    steps = [*texts, turn(call("c1", "glob", pattern="*")), *texts, response("last"), DONE]
    with pytest.raises(StopRefusedError):
        agent.run(*steps)
    assert len(agent.requests) == 2 * MAX_STOP_REFUSALS + 2  # not MAX_STOP_REFUSALS + 2


def test_stop_refusals_count_against_max_turns(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(STOP, "never", HookReply(Decision.DENY, "keep going")))
    with pytest.raises(AgentLimitError):
        agent.run(*[response("text")] * 10, max_turns=2)
    assert len(agent.requests) == 2


# --- 5. fail closed ------------------------------------------------------------------------

FAILURES = [
    pytest.param("exception", "crashed (RuntimeError: hook broke)", id="exception"),
    pytest.param("exit-1", "failed with exit code 1: hook broke", id="exit-1"),
    pytest.param("timeout", "timed out after 0.2 s", id="timeout"),
    pytest.param("invalid-json", "printed something that is not a hook answer", id="invalid-json"),
]
FAILING_SCRIPTS = {
    "exit-1": "import sys; sys.stderr.write('hook broke'); sys.exit(1)",
    "timeout": "import time; time.sleep(30)",
    "invalid-json": "print('allow, I guess')",
}


def failing_hook(tmp_path: Path, event: HookEvent, kind: str) -> Hook:
    if kind == "exception":
        return hook(event, "broken", RuntimeError("hook broke"))
    timeout = 0.2 if kind == "timeout" else 10
    return script_hook(tmp_path, event, FAILING_SCRIPTS[kind], name="broken", timeout=timeout)


@pytest.mark.parametrize(("kind", "why"), FAILURES)
def test_a_failing_pre_tool_use_hook_blocks_the_call_and_says_why(
    tmp_path: Path, kind: str, why: str
) -> None:
    agent = make_agent(
        tmp_path,
        hook(PRE, "fine", HookReply(Decision.ALLOW)),
        failing_hook(tmp_path, PRE, kind),
        allow=["shell(git status)"],
    )
    agent.run(turn(shell("c1", "git status")), DONE)
    assert agent.runner.commands == []
    assert agent.result("c1").startswith("denied")
    assert f"PreToolUse hook broken: {why}" in agent.result("c1")
    [(call_id, decision, source)] = agent.audit_lines()
    assert (call_id, decision) == ("c1", "deny")
    assert why in source


@pytest.mark.parametrize(("kind", "why"), FAILURES)
def test_a_failing_user_prompt_submit_hook_blocks_the_prompt_and_says_why(
    tmp_path: Path, kind: str, why: str
) -> None:
    agent = make_agent(tmp_path, failing_hook(tmp_path, PROMPT, kind))
    with pytest.raises(HookBlockedError, match=re.escape(f"prompt: broken: {why}")):
        agent.run(DONE)
    assert agent.requests == []


def test_a_stop_hook_that_crashes_refuses_the_stop(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, hook(STOP, "flaky", RuntimeError("no pytest"), None))
    assert agent.run(response("first"), response("second")) == "second"
    assert agent.requests[1]["messages"][-1] == {
        "role": "user",
        "content": "[Stop hook] Do not stop yet: flaky: crashed (RuntimeError: no pytest)",
    }


def test_a_stop_hook_that_prints_nonsense_refuses_the_stop(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, failing_hook(tmp_path, STOP, "invalid-json"))
    with pytest.raises(StopRefusedError, match="not a hook answer"):
        agent.run(*[response("text")] * (MAX_STOP_REFUSALS + 1))


# --- 6. what a command hook reads on stdin -------------------------------------------------

RECORDER = """
    import json, sys
    event = json.load(sys.stdin)
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(json.dumps(event) + "\\n")
"""


def test_a_command_hook_reads_each_event_on_stdin(tmp_path: Path) -> None:
    script, log = tmp_path / "recorder.py", tmp_path / "events.jsonl"
    script.write_text(textwrap.dedent(RECORDER), encoding="utf-8")
    command = f"{python_command(script)} {json.dumps(str(log))}"
    write_json(
        tmp_path / "ws" / PROJECT_SETTINGS,
        {"hooks": {event: [{"command": command}] for event in HookEvent}},
    )
    (tmp_path / "ws" / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(tmp_path)
    agent.run(turn(call("c1", "read_file", path="notes.txt")), DONE, prompt="read the notes")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    root = str(agent.workspace.root)
    read = {"path": "notes.txt", "offset": 1, "limit": PAGE_LINES}  # validated: defaults filled
    call_event = {"workspace": root, "tool": "read_file", "input": read, "tool_call_id": "c1"}
    assert events == [
        {"event": "UserPromptSubmit", "workspace": root, "prompt": "read the notes"},
        {"event": "PreToolUse", **call_event},
        {
            "event": "PostToolUse",
            **call_event,
            "result": {"status": "ok", "content": agent.result("c1")},
        },
        {"event": "Stop", "workspace": root, "prompt": "read the notes", "answer": "done"},
    ]


def test_a_command_hook_from_settings_decides_in_the_loop(tmp_path: Path) -> None:
    script = tmp_path / "no_push.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            event = json.load(sys.stdin)
            if "push" in event["input"]["command"]:
                print(json.dumps({"decision": "deny", "reason": "ask the team first"}))
            else:
                print(json.dumps({"decision": "allow"}))
            """
        ),
        encoding="utf-8",
    )
    settings = {
        "hooks": {
            "PreToolUse": [
                {"name": "no_push.py", "matcher": "shell", "command": python_command(script)}
            ]
        }
    }
    agent = make_agent(tmp_path, settings=settings)
    agent.run(turn(shell("c1", "git push"), shell("c2", "make test")), DONE)
    assert agent.runner.commands == ["make test"]
    assert agent.asker.requests == []
    assert agent.audit_lines() == [
        ("c1", "deny", "PreToolUse hook no_push.py: ask the team first"),
        ("c2", "allow", "PreToolUse hook allow"),
    ]


# --- 7. the command line -------------------------------------------------------------------


def test_demo_blocks_a_command_with_a_hook_and_tidies_the_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    write_demo_settings(folder)
    keep_demo_folder(monkeypatch, folder)
    result = tutorial("run", "--chapter", "4", "--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("[scripted]")
    note = (folder / DEMO_NOTE).read_text(encoding="utf-8")
    assert note == "# Notes\n\nHooks run at the loop's seams.\n"
    assert "[PostToolUse hook] strip_whitespace.py removed trailing spaces from 2 line(s)" in (
        result.stdout
    )
    assert (
        "denied: shell(rm -rf build) is not allowed (PreToolUse hook guard.py: "
        "'rm -rf build' deletes recursively without asking)"
    ) in result.stdout
    assert "hooks: PreToolUse: 1, PostToolUse: 1" in result.stderr
    lines = read_audit(folder / AUDIT_FILE)
    assert [(a["tool_call_id"], a["decision"], a["source"]) for a in lines] == [
        ("call_1", "allow", "mode accept-edits allows write calls"),
        (
            "call_2",
            "deny",
            "PreToolUse hook guard.py: 'rm -rf build' deletes recursively without asking",
        ),
    ]


@pytest.mark.parametrize(
    ("where", "shown"),
    [("project", ".tutorial/settings.json"), ("home", "~/.tutorial/settings.json")],
)
def test_malformed_hooks_settings_stop_the_run_before_any_request(
    tmp_path: Path, where: str, shown: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = workspace / PROJECT_SETTINGS if where == "project" else tmp_path / "home" / USER_SETTINGS
    write_json(path, {"hooks": {"PreToolUse": [{"matcher": "(shell", "command": "exit 0"}]}})
    with ChatServer([(200, response("should never be asked"))]) as server:
        result = tutorial(
            "run", "--chapter", "4", "--prompt", "hi", "--workspace", str(workspace),
            env=model_env(server),
        )  # fmt: skip
        requests = server.requests
    assert result.exit_code == 2
    assert result.stderr.startswith(f"配置错误：{shown}: hooks.PreToolUse.0.matcher: ")
    assert "'(shell' is not a regular expression" in result.stderr
    assert "Traceback" not in result.stderr
    assert requests == []


def test_a_blocking_prompt_hook_ends_the_cli_run_before_any_request(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    script = tmp_path / "block.py"
    script.write_text("import sys; sys.stderr.write('not today'); sys.exit(2)\n", "utf-8")
    write_json(
        workspace / PROJECT_SETTINGS,
        {"hooks": {"UserPromptSubmit": [{"name": "block.py", "command": python_command(script)}]}},
    )
    with ChatServer([(200, response("should never be asked"))]) as server:
        result = tutorial(
            "run", "--chapter", "4", "--prompt", "hi", "--workspace", str(workspace),
            env=model_env(server),
        )  # fmt: skip
        requests = server.requests
    assert result.exit_code == 1
    assert "a UserPromptSubmit hook blocked the prompt: block.py: not today" in result.stderr
    assert requests == []


def test_diff_shows_the_composition_against_chapter_3s_and_the_hooks_as_new() -> None:
    result = tutorial("diff", "--chapter", "4")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# Chapter 4 (hooks): ")
    assert "--- chapters/ch03/agent.py\n+++ chapters/ch04/agent.py\n" in result.stdout
    assert "--- /dev/null\n+++ chapters/ch04/hooks.py\n" in result.stdout
    assert "--- /dev/null\n+++ chapters/ch04/loop_hooks.py\n" in result.stdout
    assert "+MAX_STOP_REFUSALS = 3\n" in result.stdout
    assert "chapters/ch04/loop.py" not in result.stdout  # the loop is not restated
    assert "chapters/ch03/gate.py\n" not in result.stdout  # nor diffed against an unrelated file


# --- 8. over the real openai SDK -----------------------------------------------------------


def test_post_tool_use_context_and_a_stop_refusal_go_over_the_wire(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        hook(POST, "fmt", HookReply(context="formatted a.txt")),
        hook(STOP, "tests", HookReply(Decision.DENY, "1 test fails"), None),
        mode=Mode.ACCEPT_EDITS,
    )
    replies = [
        (200, response(None, [call("call_1", "write_file", path="a.txt", content="a\n")])),
        (200, response("Written.")),
        (200, response("Written, and the test passes.")),
    ]
    settings = Settings.model_validate(
        {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
    )
    with ChatServer(replies) as server:
        settings = settings.model_copy(update={"base_url": server.base_url})
        answer = agent.run(model=OpenAIChatModel(settings))
        bodies = [r.body for r in server.completion_requests()]
    assert answer == "Written, and the test passes."
    assert len(bodies) == 3
    assert tool_messages(bodies[1]["messages"]) == {
        "call_1": "ok: created a.txt; a.txt now has 1 line.\n[PostToolUse hook] formatted a.txt"
    }
    assert bodies[2]["messages"][-2:] == [
        {"role": "assistant", "content": "Written."},
        {"role": "user", "content": "[Stop hook] Do not stop yet: tests: 1 test fails"},
    ]


# --- contexts of PreToolUse and Stop; hooks and the human's "always" --------------------------


def test_pre_tool_use_context_reaches_the_model_with_the_result(tmp_path: Path) -> None:
    note = HookReply(context="the build folder is generated; it is safe to clean")
    agent = make_agent(tmp_path, hook(HookEvent.PRE_TOOL_USE, "note", note), mode=Mode.BYPASS)
    agent.run(turn(shell("c1", "make clean")), DONE)
    assert agent.result("c1").endswith(
        "[PreToolUse hook] the build folder is generated; it is safe to clean"
    )


def test_stop_context_follows_the_refusal(tmp_path: Path) -> None:
    refusal = HookReply(Decision.DENY, "tests fail", context="FAILED test_calc.py::test_add")
    agent = make_agent(tmp_path, hook(HookEvent.STOP, "tests", refusal, None))
    assert agent.run(response("done?"), DONE) == "done"
    assert agent.requests[1]["messages"][-1] == {
        "role": "user",
        "content": "[Stop hook] Do not stop yet: tests: tests fail\nFAILED test_calc.py::test_add",
    }


def test_a_hook_ask_does_not_ask_again_after_the_human_said_always(tmp_path: Path) -> None:
    ask = HookReply(Decision.ASK, "look at every push")
    agent = make_agent(
        tmp_path, hook(HookEvent.PRE_TOOL_USE, "pushes", ask, matcher="shell"), answers=["a"]
    )
    agent.run(turn(shell("c1", "git push")), turn(shell("c2", "git push")), DONE)
    assert agent.runner.commands == ["git push", "git push"]
    assert len(agent.asker.requests) == 1  # "always" stands for the rest of the run


def test_a_hook_deny_wins_over_the_humans_always(tmp_path: Path) -> None:
    deny_second = hook(
        HookEvent.PRE_TOOL_USE,
        "freeze",
        None,
        HookReply(Decision.DENY, "frozen now"),
        matcher="shell",
    )
    agent = make_agent(tmp_path, deny_second, answers=["a"])
    agent.run(turn(shell("c1", "git push")), turn(shell("c2", "git push")), DONE)
    assert agent.runner.commands == ["git push"]
    assert "frozen now" in agent.result("c2")

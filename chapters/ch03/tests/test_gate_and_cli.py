"""Chapter 3 end to end: the gate inside chapter 1's loop, the audit trail, and the command line.

The gate tests build a real agent in a temporary workspace: chapter 2's tools with a
fake shell runner, a policy loaded the way the CLI loads it (with a home folder of its
own, so the real ~/.tutorial is never read), a scripted human and a real audit log.
The model is scripted and emits real tool calls, so every call goes through the loop.
Then the command line through click's runner (settings errors, `permissions check`,
the demo), one exchange over the real openai SDK, and the table of typed answers.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import Result

import shared.approval as approval_module
from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env
from chapters.ch01.tests.harness import FakeRunner, plain_console
from chapters.ch02.tests.cli_support import keep_demo_folder
from chapters.ch02.workspace import Workspace
from chapters.ch03 import demo as demo_module
from chapters.ch03.asking import UNCLEAR, HumanAnswer, ScriptedAsker, parse_answer
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Mode, Policy
from chapters.ch03.rules import Rule
from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch03.tests.support import (
    DONE,
    audit_records,
    call,
    read_audit,
    read_outcomes,
    shell,
    turn,
    tutorial,
    write_json,
)
from chapters.testing import AgentRun, agent_of
from shared.approval import ApprovalRequest
from shared.calls import PendingCall
from shared.completion import ModelClient
from shared.config import Settings
from shared.messages import FunctionCall, ToolCall
from shared.openai_client import OpenAIChatModel
from shared.process import IS_WINDOWS, CommandOutcome
from shared.scripted import ScriptedModel, Step, response
from shared.tools import PreparedCall, ToolRegistry, ToolResult

AUDIT_KEYS = {"time", "tool_call_id", "tool", "key", "decision", "source"}
NO_RULE = "no rule matched, and mode default does not allow execute calls"


pytestmark = pytest.mark.usefixtures("isolated")


# --- an agent with a permission gate -------------------------------------------------------


@dataclass
class Agent(AgentRun[ScriptedModel]):
    """Chapter 3's agent as its command builds it, built when made (tests reach into its gate
    before a run); each run sets its model. Its workspace is tmp_path itself, as these
    tests have always had it, its home folder within it."""

    chapter = 3
    asker: ScriptedAsker = field(default_factory=lambda: ScriptedAsker([]))
    runner: FakeRunner = field(default_factory=FakeRunner)

    @property
    def root(self) -> Path:
        return self.tmp_path

    def make_model(self) -> ScriptedModel:
        return ScriptedModel([])  # each run gives its own

    def given(self) -> dict[str, Any]:
        return {"asker": self.asker, "runner": self.runner}

    def run(self, *steps: Step, model: ModelClient | None = None) -> str:  # type: ignore[override]
        """Run the loop on `steps` (or on `model`) with the gate in step 4."""
        if model is None:
            model = self.model = ScriptedModel(steps)
        self.spec = replace(self.spec or self.build(), model=model)
        return super().run()

    @property
    def gate(self) -> PermissionGate:
        assert self.spec is not None
        gate = self.spec.calls.authorize[0]
        assert isinstance(gate, PermissionGate)
        return gate

    @property
    def policy(self) -> Policy:
        return self.gate.policy

    @property
    def audit(self) -> AuditLog:
        return self.gate.audit

    @property
    def tools(self) -> ToolRegistry:
        assert self.spec is not None
        return self.spec.tools

    def asked(self) -> list[Mapping[str, Any]]:
        return [request.arguments for request in self.asker.requests]

    def audit_lines(self) -> list[dict[str, Any]]:
        return read_audit(self.audit.path)


def make_agent(
    tmp_path: Path,
    answers: Sequence[str] = (),
    *,
    mode: Mode | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
    audit: AuditLog | None = None,
    runner: FakeRunner | None = None,
) -> Agent:
    """An agent in `tmp_path` as chapter 3's command builds it: its policy from the settings
    files (a home folder of its own) and these flags, its audit log in the workspace."""
    if settings is not None:
        write_json(tmp_path / PROJECT_SETTINGS, settings)
    flags: dict[str, Any] = {"mode": mode, "allow": allow, "deny": deny}
    agent = Agent(
        tmp_path,
        ScriptedAsker(list(answers)),
        runner or FakeRunner(),
        options=flags if audit is None else {**flags, "audit": audit},  # none: the command's
    )
    agent.build()
    return agent


def decisions(lines: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(line["tool_call_id"], line["decision"]) for line in lines]


# --- 1. the gate in the loop: allow, deny, ask ---------------------------------------------


def test_an_allowed_call_runs_without_asking(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, allow=["shell(git status)"])
    agent.run(turn(shell("c1", "git status")), DONE)
    assert agent.asker.requests == []
    assert agent.runner.commands == ["git status"]
    assert agent.result("c1").startswith("ok: the command `git status` ran")


@pytest.mark.parametrize(
    ("where", "source"),
    [("settings", ".tutorial/settings.json"), ("flag", "--deny")],
)
def test_a_denied_call_does_not_run_and_names_the_rule_and_its_source(
    tmp_path: Path, where: str, source: str
) -> None:
    rules = ["shell(rm:*)"]
    agent = (
        make_agent(tmp_path, settings={"permissions": {"deny": rules}})
        if where == "settings"
        else make_agent(tmp_path, deny=rules)
    )
    agent.run(turn(shell("c1", "rm -rf build")), DONE)
    content = agent.result("c1")
    assert content.startswith("denied")
    assert f"rule shell(rm:*) from {source}" in content
    assert agent.runner.commands == []
    assert agent.asker.requests == []


def test_an_asked_call_is_shown_to_the_human_and_runs_on_yes(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["y"])
    agent.run(turn(shell("c1", "git push")), DONE)
    [request] = agent.asker.requests
    assert request.tool_name == "shell"
    assert request.arguments == {"command": "git push"}
    assert f"policy: {NO_RULE}" in request.reason
    assert agent.runner.commands == ["git push"]
    assert agent.result("c1").startswith("ok: ")


def test_an_asked_call_answered_no_does_not_run(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["n"])
    agent.run(turn(shell("c1", "git push")), DONE)
    assert agent.asked() == [{"command": "git push"}]
    assert agent.runner.commands == []
    content = agent.result("c1")
    assert content.startswith("denied: the human refused this call")
    assert "The human said" not in content


def test_feedback_given_with_a_no_reaches_the_model_in_the_next_request(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["n use git diff instead"])
    agent.run(turn(shell("c1", "git push")), DONE)
    assert agent.runner.commands == []
    assert agent.model is not None
    sent = agent.model.requests[1]["messages"]
    [tool_message] = [m for m in sent if m["role"] == "tool"]
    assert tool_message["tool_call_id"] == "c1"
    assert tool_message["content"].startswith("denied")
    assert "The human said: use git diff instead" in tool_message["content"]


def test_always_runs_and_allows_the_same_call_later_without_asking(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["a", "n"])
    agent.run(
        turn(shell("c1", "git status")),
        turn(shell("c2", "git status")),
        turn(shell("c3", "git status --short")),
        DONE,
    )
    assert agent.asked() == [{"command": "git status"}, {"command": "git status --short"}]
    assert agent.runner.commands == ["git status", "git status"]
    assert "added for this run: allow shell(git status)" in agent.printed()
    assert agent.result("c2").startswith("ok: ")
    assert agent.result("c3").startswith("denied")
    c2 = [line for line in agent.audit_lines() if line["tool_call_id"] == "c2"]
    assert [(line["decision"], line["source"]) for line in c2] == [
        ("allow", "rule shell(git status) from your answer in this run")
    ]


def test_always_on_a_compound_command_allows_exactly_that_command(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["a", "n"])
    agent.run(
        turn(shell("c1", "echo hi && rm -rf x")),
        turn(shell("c2", "echo hi && rm -rf x")),
        turn(shell("c3", "echo hi && rm -rf y")),
        DONE,
    )
    assert agent.asked() == [{"command": "echo hi && rm -rf x"}, {"command": "echo hi && rm -rf y"}]
    assert agent.runner.commands == ["echo hi && rm -rf x", "echo hi && rm -rf x"]
    assert "added for this run: allow shell(echo hi && rm -rf x)" in agent.printed()


def test_always_on_a_command_ending_in_colon_star_allows_only_that_command(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path, ["a", "n"])
    agent.run(
        turn(shell("c1", "echo ok:*")),
        turn(shell("c2", "echo ok && rm -rf x")),
        DONE,
    )
    assert agent.runner.commands == ["echo ok:*"]
    assert agent.asked() == [{"command": "echo ok:*"}, {"command": "echo ok && rm -rf x"}]


@pytest.mark.skipif(IS_WINDOWS, reason="Windows drops trailing spaces from file names")
def test_always_on_a_path_allows_only_that_path(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["a", "n"])
    agent.run(
        turn(call("c1", "write_file", path="notes.txt ", content="one\n")),
        turn(call("c2", "write_file", path="notes.txt", content="two\n")),
        DONE,
    )
    assert [request.arguments["path"] for request in agent.asker.requests] == [
        "notes.txt ",
        "notes.txt",
    ]
    assert not (tmp_path / "notes.txt").exists()


def test_an_asker_that_crashes_denies_the_call(tmp_path: Path) -> None:
    class CrashingAsker:
        def ask(self, request: ApprovalRequest) -> HumanAnswer:
            raise RuntimeError("terminal vanished")

    agent = make_agent(tmp_path)
    agent.gate.asker = CrashingAsker()
    answer = agent.run(turn(shell("c1", "git push")), DONE)
    assert answer == "done"
    assert agent.runner.commands == []
    assert agent.result("c1").startswith("denied")


# --- 2. modes ------------------------------------------------------------------------------


def test_plan_mode_denies_writes_and_shell_and_lets_reads_run(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(tmp_path, mode=Mode.PLAN)
    agent.run(
        turn(
            call("c1", "write_file", path="new.txt", content="x\n"),
            shell("c2", "ls"),
            call("c3", "read_file", path="notes.txt"),
        ),
        DONE,
    )
    for call_id in ("c1", "c2"):
        assert agent.result(call_id).startswith("denied: plan mode is read-only")
    assert not (tmp_path / "new.txt").exists()
    assert agent.runner.commands == []
    assert agent.result("c3").startswith("ok: ") and "hello" in agent.result("c3")
    assert agent.asker.requests == []


def test_bypass_mode_runs_shell_without_asking_but_deny_rules_still_deny(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        mode=Mode.BYPASS,
        settings={"permissions": {"ask": ["shell(make:*)"], "deny": ["shell(rm:*)"]}},
    )
    agent.run(turn(shell("c1", "make build"), shell("c2", "rm -rf build")), DONE)
    assert agent.asker.requests == []
    assert agent.runner.commands == ["make build"]
    assert "rule shell(rm:*) from .tutorial/settings.json" in agent.result("c2")


def test_accept_edits_writes_and_edits_without_asking_but_shell_still_asks(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path, ["n"], mode=Mode.ACCEPT_EDITS)
    agent.run(
        turn(call("c1", "write_file", path="new.txt", content="one\n")),
        turn(call("c2", "edit_file", path="new.txt", old_string="one", new_string="two")),
        turn(shell("c3", "ls")),
        DONE,
    )
    assert (tmp_path / "new.txt").read_text(encoding="utf-8") == "two\n"
    assert [request.tool_name for request in agent.asker.requests] == ["shell"]
    assert agent.runner.commands == []


def test_an_ask_rule_asks_even_when_an_allow_rule_matches_too(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        ["n"],
        settings={"permissions": {"ask": ["shell(git push:*)"], "allow": ["shell(git:*)"]}},
    )
    agent.run(turn(shell("c1", "git push origin main"), shell("c2", "git status")), DONE)
    [request] = agent.asker.requests
    assert request.arguments == {"command": "git push origin main"}
    assert "policy: rule shell(git push:*) from .tutorial/settings.json" in request.reason
    assert agent.runner.commands == ["git status"]


# --- 3. compound commands through the gate -------------------------------------------------


def test_an_allow_rule_for_one_part_does_not_allow_a_compound_command(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, ["n"], allow=["shell(echo:*)"])
    agent.run(turn(shell("c1", "echo hi && rm -rf x")), DONE)
    [request] = agent.asker.requests
    assert request.arguments == {"command": "echo hi && rm -rf x"}
    assert "not every part is allowed" in request.reason and "'rm -rf x'" in request.reason
    assert agent.runner.commands == []


def test_a_deny_rule_on_any_part_denies_the_whole_command(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, allow=["shell(echo:*)"], deny=["shell(rm:*)"])
    agent.run(turn(shell("c1", "echo hi; rm -rf x")), DONE)
    assert agent.runner.commands == []
    assert agent.asker.requests == []
    assert agent.result("c1").startswith("denied")
    assert "rule shell(rm:*) from --deny" in agent.result("c1")


def test_a_quoted_separator_is_part_of_one_allowed_command(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, allow=["shell(echo:*)"])
    agent.run(turn(shell("c1", 'echo "a && b"')), DONE)
    assert agent.asker.requests == []
    assert agent.runner.commands == ['echo "a && b"']


# --- 4. the audit trail --------------------------------------------------------------------


@dataclass
class AuditReadingRunner(FakeRunner):
    """A fake shell that, when a command runs, notes the newest line of the audit file."""

    audit_path: Path = Path()
    seen: dict[str, dict[str, Any]] | None = None

    def __call__(self, command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
        lines = read_audit(self.audit_path)
        self.seen = {**(self.seen or {}), command: lines[-1] if lines else {}}
        return super().__call__(command, cwd=cwd, timeout=timeout)


def test_every_decision_is_audited_before_the_call_runs(tmp_path: Path) -> None:
    runner = AuditReadingRunner(audit_path=tmp_path / AUDIT_FILE)
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(
        tmp_path, ["y"], allow=["shell(git status)"], deny=["shell(rm:*)"], runner=runner
    )
    agent.run(
        turn(
            shell("c1", "git status"),
            shell("c2", "rm -rf x"),
            shell("c3", "git push"),
            call("c4", "read_file", path="notes.txt"),
        ),
        DONE,
    )
    lines = agent.audit_lines()
    assert all(set(line) == AUDIT_KEYS for line in lines)
    assert all(datetime.fromisoformat(line["time"]).tzinfo is not None for line in lines)
    assert [
        (line["tool_call_id"], line["tool"], line["key"], line["decision"], line["source"])
        for line in lines
    ] == [
        ("c1", "shell", "git status", "allow", "rule shell(git status) from --allow"),
        ("c2", "shell", "rm -rf x", "deny", "rule shell(rm:*) from --deny"),
        ("c3", "shell", "git push", "ask", NO_RULE),
        ("c3", "shell", "git push", "allow", "human: yes"),
        ("c4", "read_file", "notes.txt", "allow", "mode default allows read calls"),
    ]
    assert runner.commands == ["git status", "git push"]
    assert runner.seen is not None
    assert decisions([runner.seen["git status"]]) == [("c1", "allow")]
    assert decisions([runner.seen["git push"]]) == [("c3", "allow")]


# --- 5. an audit that cannot be written denies ---------------------------------------------


def test_an_audit_log_that_cannot_be_created_denies_every_call(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("a file, not a folder\n", encoding="utf-8")
    audit = AuditLog(tmp_path / "file.txt" / "audit.jsonl")
    agent = make_agent(tmp_path, allow=["shell(git status)"], audit=audit)
    agent.run(turn(shell("c1", "git status"), shell("c2", "git push")), DONE)
    assert agent.runner.commands == []
    assert agent.asker.requests == []  # not even the ask reaches the human unrecorded
    for call_id in ("c1", "c2"):
        assert agent.result(call_id) == (
            "denied: the decision could not be written to the audit log, so the call did not run."
        )
    assert "cannot write the audit log" in agent.printed()


class FullDisk(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_an_audit_write_that_fails_mid_run_denies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(tmp_path, allow=["shell(git status)"])

    def disk_fills_up(request: Mapping[str, Any]) -> dict[str, Any]:
        monkeypatch.setattr(agent.audit, "_file", FullDisk())
        return turn(shell("c2", "git status"))

    agent.run(turn(shell("c1", "git status")), disk_fills_up, DONE)
    assert agent.runner.commands == ["git status"]  # c1 only
    assert agent.result("c1").startswith("ok: ")
    assert agent.result("c2").startswith("denied: the decision could not be written")
    assert decisions(agent.audit_lines()) == [("c1", "allow")]


def test_a_yes_that_cannot_be_audited_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(tmp_path)
    scripted = ScriptedAsker(["y"])

    class AskerWhileTheDiskFills:
        def ask(self, request: ApprovalRequest) -> HumanAnswer:
            monkeypatch.setattr(agent.audit, "_file", FullDisk())
            return scripted.ask(request)

    agent.gate.asker = AskerWhileTheDiskFills()
    agent.run(turn(shell("c1", "git push")), DONE)
    assert len(scripted.requests) == 1  # the human said yes
    assert agent.runner.commands == []
    assert agent.result("c1").startswith("denied: the decision could not be written")
    assert decisions(agent.audit_lines()) == [("c1", "ask")]


def _record(audit: AuditLog, call_id: str) -> None:
    audit.record(call_id=call_id, tool="shell", key="ls", decision="allow", source="test")


def test_an_audit_file_removed_mid_run_is_made_again_and_gets_the_next_line(
    tmp_path: Path,
) -> None:
    # Issue 11: the log was opened once; after `rm .tutorial/audit.jsonl` every later
    # decision went to the deleted file while the calls still ran.
    agent = make_agent(tmp_path, allow=["shell(git status)"])
    path = tmp_path / AUDIT_FILE

    def someone_removes_the_log(request: Mapping[str, Any]) -> dict[str, Any]:
        path.unlink()
        return turn(shell("c2", "git status"))

    agent.run(turn(shell("c1", "git status")), someone_removes_the_log, DONE)
    assert agent.runner.commands == ["git status", "git status"]
    assert decisions(agent.audit_lines()) == [("c2", "allow")]  # c1 went with the old file


@pytest.mark.parametrize("how", ["removed", "replaced", "folder-removed"])
def test_the_audit_log_writes_to_the_file_its_path_names_now(tmp_path: Path, how: str) -> None:
    path = tmp_path / AUDIT_FILE
    audit = AuditLog(path)
    _record(audit, "c1")
    if how == "removed":
        path.unlink()
    elif how == "replaced":
        (tmp_path / "other.jsonl").write_text('{"kept": true}\n', encoding="utf-8")
        os.replace(tmp_path / "other.jsonl", path)
    else:
        shutil.rmtree(path.parent)
    _record(audit, "c2")
    lines = audit_records(path)  # every line, the replacing file's own included
    assert [line.get("tool_call_id", "kept") for line in lines] == (
        ["kept", "c2"] if how == "replaced" else ["c2"]
    )
    audit.close()


def test_an_audit_path_that_can_no_longer_be_written_denies(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, allow=["shell(git status)"])
    path = tmp_path / AUDIT_FILE

    def the_log_becomes_a_folder(request: Mapping[str, Any]) -> dict[str, Any]:
        path.unlink()
        path.mkdir()
        return turn(shell("c2", "git status"))

    agent.run(turn(shell("c1", "git status")), the_log_becomes_a_folder, DONE)
    assert agent.runner.commands == ["git status"]  # c1 only
    assert agent.result("c2").startswith("denied: the decision could not be written")
    assert "cannot write the audit log" in agent.printed()


# --- 6. a policy that raises denies --------------------------------------------------------


def test_a_rule_matcher_that_raises_denies_and_the_audit_says_policy_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Rule, tool: str, key: str | None) -> bool:
        raise RuntimeError("matcher broke")

    agent = make_agent(tmp_path, deny=["shell(rm:*)"])
    monkeypatch.setattr(Rule, "matches", broken)
    agent.run(turn(shell("c1", "echo hi")), DONE)
    assert agent.runner.commands == []
    assert agent.asker.requests == []
    assert agent.result("c1").startswith("denied")
    assert "policy error" in agent.result("c1")
    [line] = agent.audit_lines()
    assert line["decision"] == "deny"
    assert line["source"].startswith("policy error")
    assert "matcher broke" in line["source"]


def test_a_broken_rule_object_in_the_policy_denies_even_a_read(tmp_path: Path) -> None:
    class ExplodingRule:
        def matches(self, tool: str, key: str | None) -> bool:
            raise ValueError("bad rule")

    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(tmp_path)
    agent.policy.deny = [cast(Rule, ExplodingRule())]
    agent.run(turn(call("c1", "read_file", path="notes.txt")), DONE)
    assert agent.result("c1").startswith("denied")
    assert "hello" not in agent.result("c1")
    [line] = agent.audit_lines()
    assert (line["tool_call_id"], line["decision"]) == ("c1", "deny")
    assert line["source"].startswith("policy error")


def test_the_policy_reads_the_settings_of_the_home_folder_it_is_given(
    tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "elsewhere"  # not $HOME
    write_json(home / ".tutorial" / "settings.json", {"permissions": {"deny": ["shell(rm:*)"]}})
    spec = agent_of(
        3,
        model=ScriptedModel([]),
        console=plain_console(),
        workspace=Workspace(workspace),
        home=home,
    )
    gate = spec.calls.authorize[0]
    assert isinstance(gate, PermissionGate)
    assert [(rule.text, rule.source) for rule in gate.policy.deny] == [
        ("shell(rm:*)", "~/.tutorial/settings.json")
    ]


# --- 7. malformed settings stop the run ----------------------------------------------------


def run_chapter_3(workspace: Path, env: Mapping[str, str] | None = None) -> Result:
    return tutorial(
        "run", "--chapter", "3", "--prompt", "hi", "--workspace", str(workspace), env=env
    )


MALFORMED = [
    pytest.param("{not json", "not valid JSON (line 1, column 2", id="invalid-json"),
    pytest.param(
        {"permissions": {"alow": ["shell"]}},
        "permissions.alow: Extra inputs are not permitted",
        id="unknown-key",
    ),
    pytest.param(
        {"permissions": {"allow": ["shell(git"]}},
        "permissions.allow[0]: 'shell(git' is not a rule",
        id="rule-does-not-parse",
    ),
    pytest.param(
        {"permissions": {"deny": ["bash(rm:*)"]}},
        "permissions.deny[0]: 'bash(rm:*)' names no known tool",
        id="unknown-tool",
    ),
    pytest.param(
        {"permissions": {"defaultMode": "yolo"}},
        "permissions.defaultMode: Input should be 'default', 'accept-edits', 'plan' or 'bypass'",
        id="invalid-mode",
    ),
]


def write_settings(path: Path, content: str | Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("content", "problem"), MALFORMED)
def test_malformed_project_settings_stop_the_run_naming_the_file(
    tmp_path: Path, content: str | Mapping[str, Any], problem: str
) -> None:
    workspace = tmp_path / "ws"
    write_settings(workspace / PROJECT_SETTINGS, content)
    result = run_chapter_3(workspace)
    assert result.exit_code == 2
    assert result.stderr.startswith("配置错误：.tutorial/settings.json: ")
    assert problem in result.stderr.splitlines()[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("content", "problem"), MALFORMED)
def test_malformed_home_settings_stop_the_run_naming_the_file(
    tmp_path: Path, content: str | Mapping[str, Any], problem: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    write_settings(tmp_path / "home" / ".tutorial" / "settings.json", content)
    result = run_chapter_3(workspace)
    assert result.exit_code == 2
    assert result.stderr.startswith("配置错误：~/.tutorial/settings.json: ")
    assert problem in result.stderr.splitlines()[0]


def test_malformed_settings_stop_the_run_before_any_request(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_settings(workspace / PROJECT_SETTINGS, {"permissions": {"allow": ["shell("]}})
    with ChatServer([(200, response("should never be asked"))]) as server:
        result = run_chapter_3(workspace, env=model_env(server))
        requests = server.requests
    assert result.exit_code == 2
    assert result.stderr.startswith("配置错误：.tutorial/settings.json: ")
    assert requests == []


def test_other_top_level_keys_in_settings_are_allowed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write_settings(
        workspace / PROJECT_SETTINGS, {"hooks": {"PreToolUse": []}, "permissions": {"allow": []}}
    )
    with ChatServer([(200, response("all good"))]) as server:
        result = run_chapter_3(workspace, env=model_env(server))
        requests = server.completion_requests()
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "all good\n"
    assert len(requests) == 1


# --- 8. permissions check ------------------------------------------------------------------


def check(*args: str) -> Result:
    return tutorial("permissions", "check", *args)


def test_check_prints_the_decision_and_why(tmp_path: Path) -> None:
    result = check("--chapter", "3", "shell(git push origin main)")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ask: shell(git push origin main)",
        f"  because: {NO_RULE}",
        "  mode: default",
    ]


def test_check_an_ask_rule_beats_an_allow_rule_and_is_named_with_its_file(
    tmp_path: Path,
) -> None:
    write_settings(
        tmp_path / PROJECT_SETTINGS,
        {"permissions": {"ask": ["shell(git push:*)"], "allow": ["shell(git push:*)"]}},
    )
    result = check("--chapter", "3", "shell(git push origin main)")
    assert result.exit_code == 0, result.stderr
    first, because, _ = result.stdout.splitlines()
    assert first == "ask: shell(git push origin main)"
    assert because == "  because: rule shell(git push:*) from .tutorial/settings.json"


def test_check_with_deny_names_the_flag(tmp_path: Path) -> None:
    result = check(
        "--chapter", "3", "--workspace", str(tmp_path), "shell(git push origin main)",
        "--deny", "shell(git:*)",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    first, because, _ = result.stdout.splitlines()
    assert first == "deny: shell(git push origin main)"
    assert because == "  because: rule shell(git:*) from --deny"


def test_check_never_says_allow_for_the_expansion_that_ran_a_denied_rm(tmp_path: Path) -> None:
    # Issue 11: with only `ls` allowed and `rm` denied, this ran `rm -rf victim` unasked:
    # $_ holds the quoted text, and ${_@P} expands it as a prompt, running the $(...).
    result = check(
        "--chapter", "3", "shell(ls '$(rm -rf victim)'; ls ${_@P})",
        "--allow", "shell(ls:*)", "--deny", "shell(rm:*)",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ask: shell(ls '$(rm -rf victim)'; ls ${_@P})",
        "  because: not fully understood, so never auto-allowed: "
        "complex parameter expansion ${...}",
        "  mode: default",
    ]


def test_check_plan_mode_denies_a_write(tmp_path: Path) -> None:
    result = check("--chapter", "3", "write_file(notes.md)", "--mode", "plan")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "deny: write_file(notes.md)",
        "  because: mode plan (read-only)",
        "  mode: plan",
    ]


def test_check_chapter_1_has_no_policy(tmp_path: Path) -> None:
    result = check("--chapter", "1", "shell(ls)")
    assert result.exit_code == 2
    assert result.stderr.startswith("Chapter 1 has no permission policy")


@pytest.mark.parametrize(
    ("text", "problem"),
    [("shell(ls", "is not a rule"), ("bash(ls)", "names no known tool")],
)
def test_check_a_call_that_is_not_a_rule_is_a_usage_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    result = check("--chapter", "3", text)
    assert result.exit_code == 2
    assert problem in result.stderr.splitlines()[0]


def test_check_never_writes_an_audit_file(tmp_path: Path) -> None:
    for args in (
        ["shell(git push origin main)"],
        ["shell(rm -rf x)", "--deny", "shell(rm:*)"],
        ["read_file(a.txt)"],
    ):
        assert check("--chapter", "3", *args).exit_code == 0
    assert not (tmp_path / AUDIT_FILE).exists()
    assert not (tmp_path / ".tutorial").exists()


def test_check_lists_each_known_tool_once(tmp_path: Path) -> None:
    result = check("--chapter", "5", "Bash(ls)")
    assert result.exit_code == 2
    tools = result.stderr.splitlines()[0].split("tools: ", 1)[1].split(", ")
    assert sorted(tools) == tools and len(tools) == len(set(tools))
    assert "todo_write" in tools


def test_check_help_needs_no_chapter() -> None:
    for help_word in ("--help", "-h"):
        result = check(help_word)
        assert result.exit_code == 0, result.stderr
        assert "Usage: python -m tutorial permissions check --chapter 3" in result.stdout
        assert "--deny RULE" in result.stdout


def test_an_extra_argument_is_named_whole_with_its_parentheses() -> None:
    result = check("--chapter", "3", "shell(ls)", "shell(pwd)")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "Unknown argument: shell(pwd)"


def test_check_says_the_boundary_refuses_a_path_the_policy_allows(tmp_path: Path) -> None:
    result = check("--chapter", "3", "--workspace", str(tmp_path), "read_file(/etc/passwd)")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "allow: read_file(/etc/passwd)",
        "  because: mode default allows read calls",
    ]
    assert lines[3] == (
        "  then: the workspace boundary refuses it ('/etc/passwd' resolves outside the "
        "workspace); it would not run"
    )


def test_the_audit_records_what_came_of_each_call_that_ran(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(tmp_path, deny=["shell(rm:*)"])
    agent.run(
        turn(
            call("c1", "read_file", path="a.txt"),
            call("c2", "read_file", path="/etc/passwd"),
            shell("c3", "rm -rf x"),
        ),
        DONE,
    )
    decided = [(r["tool_call_id"], r["decision"]) for r in read_audit(agent.audit.path)]
    assert decided == [("c1", "allow"), ("c2", "allow"), ("c3", "deny")]
    outcomes = [(r["tool_call_id"], r["outcome"]) for r in read_outcomes(agent.audit.path)]
    assert outcomes == [("c1", "ok"), ("c2", "path_outside_workspace")]  # c3 never ran


def test_two_open_calls_with_one_id_each_get_their_own_outcome(tmp_path: Path) -> None:
    """Two agents that share a gate may both send an id like `call_1`; the second can be
    decided before the first one finished. Each outcome line must name its own call."""
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    agent = make_agent(tmp_path)
    snapshot = agent.tools.snapshot()
    gate = agent.gate
    assert isinstance(gate, PermissionGate)
    first, second = (
        PendingCall(cast(PreparedCall, snapshot.prepare(one)), agent=name)
        for one, name in (
            (
                ToolCall(
                    id="call_1",
                    function=FunctionCall(name="read_file", arguments='{"path": "a.txt"}'),
                ),
                "a",
            ),
            (
                ToolCall(
                    id="call_1", function=FunctionCall(name="glob", arguments='{"pattern": "*"}')
                ),
                "b",
            ),
        )
    )
    assert gate.authorize(first) is None and gate.authorize(second) is None
    gate.finish(first, ToolResult.success("ok"), ran=True)
    gate.finish(second, ToolResult.success("ok"), ran=True)
    outcomes = [(r["tool_call_id"], r["tool"]) for r in read_outcomes(agent.audit.path)]
    assert outcomes == [("call_1", "read_file"), ("call_1", "glob")]


# --- 9. the demo ---------------------------------------------------------------------------


@pytest.fixture
def demo_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real demo workspace (its settings included), made under tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = demo_module.make_demo_workspace()
    assert folder.parent == tmp_path
    keep_demo_folder(monkeypatch, folder)
    return folder


def test_demo_without_a_terminal_allows_denies_and_refuses(demo_folder: Path) -> None:
    echo, rm, third = demo_module.DEMO_COMMANDS
    result = tutorial("run", "--chapter", "3", "--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("[scripted]")
    assert f"- `{echo}` → ok: the command `{echo}` ran" in result.stdout
    assert (
        f"- `{rm}` → denied: shell({rm}) is not allowed "
        "(rule shell(rm:*) from .tutorial/settings.json)"
    ) in result.stdout
    assert f"- `{third}` → denied: the human refused this call" in result.stdout
    assert "无交互输入，默认拒绝。" in result.stderr
    lines = read_audit(demo_folder / AUDIT_FILE)
    assert [(line["tool_call_id"], line["decision"], line["source"]) for line in lines] == [
        ("call_1", "allow", "rule shell(echo:*) from .tutorial/settings.json"),
        ("call_2", "deny", "rule shell(rm:*) from .tutorial/settings.json"),
        ("call_3", "ask", NO_RULE),
        ("call_3", "deny", "human: no terminal"),
    ]


@pytest.mark.skipif(
    IS_WINDOWS, reason="the asked command runs in the real shell (PowerShell on Windows)"
)
def test_demo_with_a_terminal_runs_the_asked_command_on_yes(
    demo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = demo_module.DEMO_COMMANDS[2]
    monkeypatch.setattr(approval_module, "is_terminal", lambda stream: True)
    result = tutorial("run", "--chapter", "3", "--demo", stdin="y\n")
    assert result.exit_code == 0, result.stderr
    assert f"- `{asked}` → ok: the command `{asked}` ran" in result.stdout
    assert "asked first" in result.stderr  # what the real shell printed
    assert "无交互输入" not in result.stderr
    lines = read_audit(demo_folder / AUDIT_FILE)
    assert len(lines) == 4
    assert (lines[-1]["tool_call_id"], lines[-1]["decision"], lines[-1]["source"]) == (
        "call_3",
        "allow",
        "human: yes",
    )


# --- 10. over the real openai SDK ----------------------------------------------------------


def test_a_denied_and_an_allowed_call_over_the_real_sdk(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, allow=["shell(echo:*)"], deny=["shell(rm:*)"])
    replies = [
        (200, response(None, [shell("call_1", "rm -rf build"), shell("call_2", "echo hi")])),
        (200, response("One ran, one was denied.")),
    ]
    settings = Settings.model_validate(
        {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
    )
    with ChatServer(replies) as server:
        settings = settings.model_copy(update={"base_url": server.base_url})
        answer = agent.run(model=OpenAIChatModel(settings))
        bodies = [r.body for r in server.completion_requests()]
    assert answer == "One ran, one was denied."
    assert len(bodies) == 2
    tool_messages = [m for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2"]
    assert tool_messages[0]["content"].startswith("denied: shell(rm -rf build) is not allowed")
    assert tool_messages[1]["content"].startswith("ok: the command `echo hi` ran")
    assert agent.runner.commands == ["echo hi"]
    assert decisions(agent.audit_lines()) == [("call_1", "deny"), ("call_2", "allow")]


# --- 11. typed answers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "approved", "always", "feedback"),
    [
        ("y", True, False, ""),
        ("yes", True, False, ""),
        (" Y ", True, False, ""),
        ("y\n", True, False, ""),
        ("a", True, True, ""),
        ("always", True, True, ""),
        ("A", True, True, ""),
        ("", False, False, ""),
        ("n", False, False, ""),
        ("no", False, False, ""),
        ("N\n", False, False, ""),
        ("nope", False, False, ""),
        ("ok", True, False, ""),
        ("Yes please!", True, False, ""),
        ("好。", True, False, ""),
        ("n use X", False, False, "use X"),
        ("no, stop", False, False, "stop"),
        ("No. use git diff", False, False, "use git diff"),
        ("不，用 git diff", False, False, "用 git diff"),
    ],
)
def test_typed_answers_parse_to_yes_always_or_no_with_feedback(
    typed: str, approved: bool, always: bool, feedback: str
) -> None:
    answer = parse_answer(typed)
    assert (answer.approved, answer.always, answer.feedback) == (approved, always, feedback)
    if not approved:
        assert answer.how == ("no" + (f": {feedback}" if feedback else ""))


@pytest.mark.parametrize("typed", ["y please", "a please", "stop that", "maybe"])
def test_an_answer_that_is_neither_yes_nor_no_is_unclear_not_a_no_with_text(typed: str) -> None:
    """Words that are not a clear answer are asked about again (chapters/ch03/asking.py);
    `n <text>` is the way to say no with words for the model."""
    answer = parse_answer(typed)
    assert (answer.approved, answer.feedback, answer.how) == (False, "", UNCLEAR)

"""memory_read and memory_write inside the loop, behind chapter 3's permission gate: a read asks
nobody, a write is judged and audited like any write, its approval shows the memory as it will
be written, and a memory that breaks a rule or looks like a secret fails before anyone is asked."""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch02.tests.blocking import bounded, needs_fifo
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker, ScriptedAsker, TerminalAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Mode, Policy
from chapters.ch03.tests.support import read_audit, read_outcomes
from chapters.ch08.tests.support import answering, calling
from chapters.ch09.memory import INDEX_FILE, MEMORY_FOLDER, MemoryStore
from chapters.ch09.memory_tools import MEMORY_READ, MEMORY_WRITE, make_memory_tools
from chapters.ch09.secret_shapes import SECRET_SHAPES, secret_shape
from chapters.ch09.tests.support import memory_file, memory_text, plain_console
from shared.agent import AgentSpec
from shared.calls import CallPipeline
from shared.console import Console
from shared.messages import Message, ToolMessage
from shared.scripted import ScriptedModel, tool_call
from shared.tools import SideEffect, ToolRegistry

TABS = {
    "name": "tabs",
    "description": "Python files here are indented with tabs",
    "type": "feedback",
    "body": "The user asked for tabs, not spaces, in every Python file.",
}


@dataclass
class Rig:
    """Memory tools behind a real permission gate, in a workspace and a home of their own."""

    root: Path
    home: Path
    console: Console
    asker: Asker
    mode: Mode

    @property
    def audit_path(self) -> Path:
        return self.root / ".tutorial" / "audit.jsonl"

    def run(self, *calls: tuple[str, dict[str, Any]]) -> list[Message]:
        """One reply with these calls, then an answer; the history."""
        tools = make_memory_tools(MemoryStore(self.root, self.home))
        gate = PermissionGate(
            Policy(Workspace(self.root), self.mode),
            self.asker,
            AuditLog(self.audit_path),
            self.console,
        )
        model = ScriptedModel(
            [
                calling(
                    *(
                        tool_call(f"c{n}", name, json.dumps(args))
                        for n, (name, args) in enumerate(calls, 1)
                    )
                ),
                answering(),
            ]
        )
        spec = AgentSpec(
            model=model,
            tools=ToolRegistry(tools),
            calls=CallPipeline(authorize=[gate], finish=[gate]),
            console=self.console,
            system_prompt="You are a test agent.",
        )
        history: list[Message] = []
        run_agent("remember this", spec, history=history)
        return history

    def result(self, history: list[Message], call_id: str = "c1") -> str:
        (found,) = [
            m.content for m in history if isinstance(m, ToolMessage) and m.tool_call_id == call_id
        ]
        return found

    def decisions(self) -> list[tuple[str, str, str]]:
        return [(a["tool"], a["decision"], a["source"]) for a in read_audit(self.audit_path)]


def rig(tmp_path: Path, mode: Mode = Mode.DEFAULT, asker: Asker | None = None) -> Rig:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    console = plain_console()
    no_terminal = TerminalAsker(console, stdin=io.StringIO(""), interactive=False)
    return Rig(tmp_path / "ws", tmp_path / "home", console, asker or no_terminal, mode)


def project_file(rig: Rig, name: str = "tabs") -> Path:
    return rig.root / MEMORY_FOLDER / f"{name}.md"


# --- memory_read ------------------------------------------------------------------------------


def test_memory_read_is_a_read_that_may_run_beside_other_reads() -> None:
    tools = {tool.name: tool for tool in make_memory_tools(MemoryStore(Path("."), Path(".")))}
    assert tools[MEMORY_READ].side_effect is SideEffect.READ
    assert tools[MEMORY_READ].concurrency_safe
    assert tools[MEMORY_WRITE].side_effect is SideEffect.WRITE
    assert not tools[MEMORY_WRITE].concurrency_safe


def test_memory_read_returns_the_body_and_asks_nobody(tmp_path: Path) -> None:
    asker = ScriptedAsker([])  # fails the test if it is asked anything
    r = rig(tmp_path, asker=asker)
    memory_file(r.home, "role", memory_text("role", "A backend engineer", "user"))
    history = r.run((MEMORY_READ, {"name": "role"}))
    assert r.result(history) == (
        "ok: memory role [user] (~/.tutorial/memory/role.md): A backend engineer\n\nThe body."
    )
    assert asker.requests == []
    assert r.decisions() == [("memory_read", "allow", "mode default allows read calls")]


def test_memory_read_of_an_unknown_name_lists_the_names_there_are(tmp_path: Path) -> None:
    r = rig(tmp_path)
    memory_file(r.root, "tabs", memory_text("tabs"))
    memory_file(r.home, "role", memory_text("role", kind="user"))
    history = r.run((MEMORY_READ, {"name": "indent"}))
    assert r.result(history) == (
        "unknown_memory: there is no memory named 'indent'. The memories: role, tabs."
    )


def test_memory_read_of_a_broken_file_says_what_is_wrong_with_it(tmp_path: Path) -> None:
    r = rig(tmp_path)
    memory_file(r.root, "tabs", "no front matter\n")
    history = r.run((MEMORY_READ, {"name": "tabs"}))
    assert r.result(history).startswith("broken_memory: .tutorial/memory/tabs.md: line 1:")


# --- memory_write through the policy ------------------------------------------------------------


def test_without_a_terminal_memory_write_is_denied_and_audited(tmp_path: Path) -> None:
    r = rig(tmp_path)
    history = r.run((MEMORY_WRITE, TABS))
    assert r.result(history).startswith("denied: the human refused this call")
    assert not project_file(r).exists()
    assert r.decisions() == [
        ("memory_write", "ask", "no rule matched, and mode default does not allow write calls"),
        ("memory_write", "deny", "human: no terminal"),
    ]


def test_in_accept_edits_memory_write_is_allowed_audited_and_saved(tmp_path: Path) -> None:
    r = rig(tmp_path, Mode.ACCEPT_EDITS)
    history = r.run((MEMORY_WRITE, TABS))
    assert r.result(history) == (
        "ok: memory tabs [feedback] created in .tutorial/memory/tabs.md; it is listed in "
        ".tutorial/memory/MEMORY.md. memory_read returns it now; the system prompt lists it "
        "from the next session on."
    )
    assert project_file(r).read_text(encoding="utf-8") == (
        "---\nname: tabs\ndescription: Python files here are indented with tabs\n"
        "type: feedback\n---\n\nThe user asked for tabs, not spaces, in every Python file.\n"
    )
    assert r.decisions() == [("memory_write", "allow", "mode accept-edits allows write calls")]
    assert [o["outcome"] for o in read_outcomes(r.audit_path)] == ["ok"]


def test_in_plan_mode_memory_write_is_denied(tmp_path: Path) -> None:
    r = rig(tmp_path, Mode.PLAN)
    history = r.run((MEMORY_WRITE, TABS))
    assert r.result(history).startswith("denied: plan mode is read-only")
    assert not project_file(r).exists()


def test_the_approval_shows_the_memory_as_it_will_be_written(tmp_path: Path) -> None:
    asker = ScriptedAsker(["y", "y"])
    r = rig(tmp_path, asker=asker)
    r.run((MEMORY_WRITE, TABS))
    r.run((MEMORY_WRITE, {**TABS, "body": "Tabs, always.", "scope": "project"}))
    created, replaced = (request.preview for request in asker.requests)
    assert created is not None and replaced is not None
    assert created.startswith("--- /dev/null\n+++ b/.tutorial/memory/tabs.md\n")
    assert "+name: tabs\n+description: Python files here are indented with tabs\n" in created
    assert replaced.startswith("--- a/.tutorial/memory/tabs.md\n+++ b/.tutorial/memory/tabs.md\n")
    assert "-The user asked for tabs, not spaces, in every Python file.\n+Tabs, always.\n" in (
        replaced
    )
    assert asker.requests[0].tool_name == MEMORY_WRITE


def test_a_users_memory_is_written_in_the_home_folder_passed_in(tmp_path: Path) -> None:
    asker = ScriptedAsker(["y"])
    r = rig(tmp_path, asker=asker)
    history = r.run((MEMORY_WRITE, {**TABS, "scope": "user"}))
    assert "created in ~/.tutorial/memory/tabs.md" in r.result(history)
    assert (r.home / MEMORY_FOLDER / "tabs.md").is_file()
    assert (r.home / MEMORY_FOLDER / INDEX_FILE).is_file()
    assert not (r.root / MEMORY_FOLDER).exists()
    preview = asker.requests[0].preview
    assert preview is not None and "+++ b/~/.tutorial/memory/tabs.md" in preview


# --- refused before anyone is asked ------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"name": "../../etc/passwd"}, "bad_memory: name '../../etc/passwd' may hold only"),
        ({"name": "Tabs"}, "bad_memory: name 'Tabs' may hold only"),
        ({"name": "con"}, "bad_memory: name 'con' is reserved"),
        ({"description": "one\ntwo"}, "bad_memory: description must be one line"),
        ({"body": ""}, "bad_memory: body is 0 characters"),
    ],
)
def test_a_memory_that_breaks_a_rule_fails_before_anyone_is_asked(
    tmp_path: Path, change: dict[str, str], why: str
) -> None:
    asker = ScriptedAsker([])
    r = rig(tmp_path, asker=asker)
    history = r.run((MEMORY_WRITE, {**TABS, **change}))
    assert r.result(history).startswith(why)
    assert "Nothing was written." in r.result(history)
    assert asker.requests == [] and r.decisions() == []
    assert not (r.root / MEMORY_FOLDER).exists() and not (tmp_path / "etc").exists()


def test_a_type_that_is_not_one_of_the_four_is_invalid(tmp_path: Path) -> None:
    r = rig(tmp_path)
    history = r.run((MEMORY_WRITE, {**TABS, "type": "secret"}))
    assert r.result(history).startswith("invalid_arguments: memory_write rejected its arguments")
    assert "'user', 'feedback', 'project' or 'reference'" in r.result(history)


SECRETS = {
    "OpenAI key": "the key is sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234",
    "Anthropic key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "AWS access key id": "aws: AKIAIOSFODNN7EXAMPLE",
    "AWS session key id": "ASIAY34FZKBOKMUTVV7A",
    "GitHub token": "ghp_" + "a1B2" * 9,
    "Slack token": "xoxb-1234567890-abcdefghij",
    "Google API key": "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    "private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA=\n",
    "RSA private key": "-----BEGIN RSA PRIVATE KEY-----",
    "password assignment": "db: password=hunter2",
    "quoted password": 'PASSWORD = "correct horse"',
    "api_key assignment": "api_key=0123456789abcdef",
    "token assignment": "TOKEN=abc123",
}
NOT_SECRETS = {
    "the word sk": "use sk-learn's pipeline (sk-learn)",
    "a short sk-": "the flag sk-1 is fine",
    "a password rule": "never write a password to a file; the password manager holds it",
    "a colon, not an assignment": "password: ask the user",
    "a public key": "-----BEGIN PUBLIC KEY-----",
    "an AWS-like word": "AKIA is how AWS key ids start",
    "max_tokens": "max_tokens=4096 works for this model",
}


@pytest.mark.parametrize("text", SECRETS.values(), ids=SECRETS.keys())
def test_each_shape_of_a_secret_is_refused_and_the_result_says_why(
    tmp_path: Path, text: str
) -> None:
    asker = ScriptedAsker([])
    r = rig(tmp_path, asker=asker)
    history = r.run((MEMORY_WRITE, {**TABS, "body": f"Remember: {text}"}))
    result = r.result(history)
    assert result.startswith(
        "looks_like_secret: the memory was not written: it looks like it holds"
    )
    assert "say where it is kept, not what it is" in result
    assert text not in result and "hunter2" not in result  # the secret is not said back
    assert asker.requests == [] and not (r.root / MEMORY_FOLDER).exists()


def test_a_secret_in_the_description_is_refused_too(tmp_path: Path) -> None:
    r = rig(tmp_path)
    history = r.run((MEMORY_WRITE, {**TABS, "description": "key AKIAIOSFODNN7EXAMPLE"}))
    assert r.result(history).startswith("looks_like_secret:")


@pytest.mark.parametrize("text", NOT_SECRETS.values(), ids=NOT_SECRETS.keys())
def test_words_about_secrets_are_not_secrets(text: str) -> None:
    assert secret_shape(text) is None


def test_every_shape_is_tested() -> None:
    seen = {secret_shape(text) for text in SECRETS.values()}
    assert seen == {shape for shape, _ in SECRET_SHAPES}


def test_writing_the_same_memory_again_changes_nothing(tmp_path: Path) -> None:
    r = rig(tmp_path, Mode.ACCEPT_EDITS)
    r.run((MEMORY_WRITE, TABS))
    history = r.run((MEMORY_WRITE, TABS))
    assert r.result(history) == "no_change: .tutorial/memory/tabs.md already says exactly this."


def test_a_memory_written_in_a_run_can_be_read_back_in_the_same_run(tmp_path: Path) -> None:
    r = rig(tmp_path, Mode.ACCEPT_EDITS)
    history = r.run((MEMORY_WRITE, TABS), (MEMORY_READ, {"name": "tabs"}))
    assert r.result(history, "c2").startswith(
        "ok: memory tabs [feedback] (.tutorial/memory/tabs.md)"
    )


@needs_fifo
def test_memory_write_over_a_named_pipe_never_blocks_on_it(tmp_path: Path) -> None:
    r = rig(tmp_path, Mode.ACCEPT_EDITS)
    fifo = project_file(r)
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    history, hung = bounded(fifo, lambda: r.run((MEMORY_WRITE, TABS)))
    assert not hung, "memory_write blocked on a named pipe"
    assert isinstance(history, list)
    assert r.result(history).startswith("ok: memory tabs [feedback] ")
    assert project_file(r).read_text(encoding="utf-8").startswith("---\nname: tabs\n")

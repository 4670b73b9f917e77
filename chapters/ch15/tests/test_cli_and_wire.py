"""Chapter 15's command line: the `team` listing, --team and its check against --task-list, the
banner; the teammates' tagged whole lines beside the lead's untagged ones; approvals one at a
time, each naming its agent, and none without a terminal; a team run over the real `openai` SDK,
streamed, to the local server (chapters/ch01/tests/chat_server.py); and the demo.

The local server answers every member of a team from its own script, chosen by the prompt its
history starts with (`Routed`), since the lead and its teammates ask side by side, in no fixed
order. Where the order matters, a reply waits for an event (at most `BOUND` seconds).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import (
    ChatServer,
    RecordedRequest,
    Reply,
    ScriptedReply,
    StreamReply,
    openai_error,
)
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch03.asking import HumanAnswer, parse_answer
from chapters.ch03.tests.support import read_audit, tutorial
from chapters.ch07.scripted_stream import AgentStep, calls_stream, text_stream, tool_call
from chapters.ch13.providers import DELIVERY_VARIABLE
from chapters.ch14.clock import NOW_VARIABLE
from chapters.ch15.agent import RECIPE
from chapters.ch15.demo import DEMO_PROMPT
from chapters.ch15.mailbox import LEAD, Mailboxes, MailMessage
from chapters.ch15.team_config import MemberStatus, TeamConfig
from chapters.ch15.tests.support import (
    BOUND,
    Agent15,
    doing,
    gated,
    mail_from,
    system_prompt,
    teammate_threads,
    wait_for,
)
from shared.approval import ApprovalRequest

pytestmark = pytest.mark.usefixtures("isolated", "no_provider_settings")

chapter15 = command_line(RECIPE.command(), "python -m chapters.ch15")  # in this process
PROMPT = "How many tests are there? Ask a teammate."
ALICE = "Count the test files in tests/ and report the number."
BOB = "Write b.txt."
FRAME_POLL = 0.005  # seconds between two looks at a thread's frame
TASK_TOOLS = {"task_create", "task_update", "task_get", "task_list"}
Step = Callable[[Mapping[str, Any]], Any] | Sequence[Any] | StreamReply


@pytest.fixture
def no_provider_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fallback, no delivery setting and no clock from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
                 DELIVERY_VARIABLE, NOW_VARIABLE):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


# --- a server for a team -------------------------------------------------------------------------


def first_user(body: Mapping[str, Any]) -> str:
    return next((str(m["content"]) for m in body["messages"] if m["role"] == "user"), "")


@dataclass
class Routed:
    """The server's answers: each request from the script of the member whose history starts
    with its prompt, in order. A step is chunks, a `StreamReply` (which may wait before its
    first event: outside the server's lock), or a function of the request's body."""

    scripts: Mapping[str, Sequence[Step]]
    used: dict[str, int] = field(default_factory=dict)

    def __call__(self, request: RecordedRequest) -> ScriptedReply:  # under the server's lock
        prompt = first_user(request.body)
        steps, done = self.scripts.get(prompt, ()), self.used.get(prompt, 0)
        if done == len(steps):
            return Reply(500, openai_error(f"no reply {done + 1} for {prompt[:40]!r}"))
        self.used[prompt] = done + 1
        step = steps[done]
        made = step(request.body) if callable(step) else step
        return made if isinstance(made, StreamReply) else sse(*made)


def bodies(server: ChatServer, prompt: str) -> list[dict[str, Any]]:
    """The requests of the member whose history starts with `prompt`, in order."""
    return [r.body for r in server.completion_requests() if first_user(r.body) == prompt]


def call(number: int, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    return calls_stream(tool_call(number, tool, arguments))


def spawn(number: int, name: str, prompt: str, agent: str = "general") -> list[dict[str, Any]]:
    return call(number, "spawn_teammate", name=name, prompt=prompt, agent=agent)


def waiting_for(event: threading.Event, *pieces: str) -> StreamReply:
    """A text reply whose first event leaves once `event` is set (at most `BOUND` seconds)."""
    reply = sse(*text_stream(*pieces))

    def before(number: int) -> None:
        if number == 0:
            wait_for(event, "the reply's gate")

    return StreamReply(reply.events, before_event=before)


def from_alice(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lead's reply: alice's report once it has it, else that it waits."""
    heard = mail_from(body, "alice")
    if heard:
        return text_stream("alice reports: ", heard[-1])
    return text_stream("Waiting for alice.")


def run15(server: ChatServer, workspace: Path, *args: str) -> Any:
    return chapter15("--workspace", str(workspace), "--max-retries", "0", "--team-wait",
                     str(BOUND), *args, env=model_env(server))  # fmt: skip


# --- the listing ---------------------------------------------------------------------------------


def team(*args: str) -> Any:
    return tutorial("team", "--chapter", "15", *args, env={"COLUMNS": "200"})


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_an_empty_team_is_said_and_the_listing_makes_nothing(tmp_path: Path) -> None:
    result = team("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"Team default in .tutorial/teams/default/ of {tmp_path.resolve()} has no members yet: "
        "a run of chapter 15 there starts them with spawn_teammate.\n"
    )
    assert not (tmp_path / ".tutorial").exists()


def test_the_members_their_status_and_undelivered_mail_are_listed(tmp_path: Path) -> None:
    config, mail = TeamConfig(tmp_path, "crew"), Mailboxes(tmp_path, "crew")
    config.join("alice", "explore", tmp_path)
    config.join("bob", "general", tmp_path)
    config.set_status("bob", MemberStatus.IDLE)
    config.join("carol", "general", tmp_path)
    config.set_status("carol", MemberStatus.FAILED)
    for number in range(3):
        mail.send(LEAD, MailMessage.new("alice", f"report {number}"))
    mail.mark_delivered(LEAD, 1)
    mail.send("bob", MailMessage.new(LEAD, "one more thing"))
    before = tree(tmp_path)
    result = team("--workspace", str(tmp_path), "--team", "crew")
    assert result.exit_code == 0, result.stderr
    title, *lines = result.stdout.splitlines()
    assert title == f"team crew in .tutorial/teams/crew/ of {tmp_path.resolve()} (lead: lead@crew):"
    assert [line.split() for line in lines] == [
        ["name", "agent", "status", "undelivered"],
        ["lead", "-", "-", "2"],
        ["alice", "explore", "working", "0"],
        ["bob", "general", "idle", "1"],
        ["carol", "general", "failed", "0"],
    ]
    header = lines[0]
    columns = [header.index(word) for word in header.split()]
    for line in lines[1:]:  # every cell starts under its heading
        assert [line.index(cell, at) for cell, at in zip(line.split(), columns, strict=True)] == (
            columns
        ), result.stdout
    assert tree(tmp_path) == before  # nothing written, nothing delivered
    assert team("--workspace", str(tmp_path)).stdout.startswith("Team default ")  # another team


@pytest.mark.parametrize("name", ["a b", "../up", "x" * 65])
def test_a_bad_team_name_is_exit_2(tmp_path: Path, name: str) -> None:
    result = team("--workspace", str(tmp_path), "--team", name)
    assert result.exit_code == 2
    assert "Invalid value for --team" in result.stderr and "it names a folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".tutorial").exists()


def test_teams_start_at_chapter_15() -> None:
    result = tutorial("team", "--chapter", "14")
    assert result.exit_code == 2
    assert "Chapter 14 has no teams; teammates run from chapter 15 on" in result.stderr


# --- --team --------------------------------------------------------------------------------------


def test_a_team_and_another_task_list_is_a_usage_error_naming_the_fix(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = run15(server, tmp_path, "--prompt", "hi", "--team", "crew", "--task-list", "x")
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "--team crew and --task-list x name two lists" in result.stderr
    assert "Give one of them (--team crew)" in result.stderr
    assert not (tmp_path / ".tutorial").exists()
    with ChatServer([sse(*text_stream("Hi."))]) as server:  # the same name twice: one list
        same = run15(server, tmp_path, "--prompt", "hi", "--team", "crew", "--task-list", "crew")
    assert same.exit_code == 0, same.stderr


def test_team_alone_is_the_teammates_task_list_and_the_banner_says_it(tmp_path: Path) -> None:
    scripts: dict[str, list[Step]] = {
        PROMPT: [spawn(1, "alice", ALICE), from_alice, from_alice, from_alice],
        ALICE: [call(1, "task_create", subject="Count the tests"), text_stream("Task 1 made.")],
    }
    with ChatServer(respond=Routed(scripts)) as server:
        result = run15(server, tmp_path, "--prompt", PROMPT, "--team", "crew")
        (alice, _) = bodies(server, ALICE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "alice reports: Task 1 made.\n"
    assert "team: crew (.tutorial/teams/crew/) · waits up to 30s for teammates\n" in result.stderr
    assert "tasks: .tutorial/tasks/crew/ (empty)\n" in result.stderr
    assert system_prompt(alice).startswith('You are teammate "alice" in team "crew".\n')
    created = json.loads((tmp_path / ".tutorial/tasks/crew/1.json").read_text(encoding="utf-8"))
    assert created["subject"] == "Count the tests"
    assert not (tmp_path / ".tutorial/tasks/default").exists()
    assert [m.name for m in TeamConfig(tmp_path, "crew").members()] == ["alice"]
    assert not (tmp_path / ".tutorial/teams/default").exists()


# --- over the wire -------------------------------------------------------------------------------


def test_over_the_wire_the_leads_answer_holds_its_teammates_message(tmp_path: Path) -> None:
    lead_waits = threading.Event()  # the lead's second request: it has answered once

    def answered_once(body: Mapping[str, Any]) -> list[dict[str, Any]]:
        lead_waits.set()
        return from_alice(body)

    report = "There are 2 test files in tests/."
    scripts: dict[str, list[Step]] = {
        PROMPT: [spawn(1, "alice", ALICE, "explore"), answered_once, from_alice],
        ALICE: [waiting_for(lead_waits, report)],
    }
    with ChatServer(respond=Routed(scripts)) as server:
        result = run15(server, tmp_path, "--prompt", PROMPT)
        lead, alice = bodies(server, PROMPT), bodies(server, ALICE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"alice reports: {report}\n"
    assert len(lead) == 3 and len(alice) == 1
    assert [mail_from(body, "alice") for body in lead] == [[], [], [report]]
    lead_tools = {t["function"]["name"] for t in lead[0]["tools"]}
    assert {"spawn_teammate", "send_message"} <= lead_tools
    (asked,) = alice
    assert system_prompt(asked).startswith('You are teammate "alice" in team "default".\n')
    assert [m["role"] for m in asked["messages"]] == ["system", "user"]  # nothing of the lead's
    tools = {t["function"]["name"] for t in asked["tools"]}
    assert tools == {"read_file", "glob", "grep", "send_message", *TASK_TOOLS}  # explore's
    assert f"[alice] {report}\n" in result.stderr
    assert "team: stopped 1 teammate as the run ended" in result.stderr
    assert [(m.name, m.status) for m in TeamConfig(tmp_path, "default").members()] == [
        ("alice", MemberStatus.STOPPED)
    ]
    mail = Mailboxes(tmp_path, "default")
    assert (mail.delivered(LEAD), mail.undelivered(LEAD)) == (1, 0)
    assert teammate_threads() == []


def test_without_a_terminal_a_teammates_side_effect_is_denied_as_the_leads(
    tmp_path: Path,
) -> None:
    lead_first = calls_stream(
        tool_call(1, "spawn_teammate", {"name": "alice", "prompt": ALICE}),
        tool_call(2, "write_file", {"path": "lead.txt", "content": "lead\n"}),
    )
    scripts: dict[str, list[Step]] = {
        PROMPT: [lead_first, from_alice, from_alice],
        ALICE: [
            call(1, "write_file", path="alice.txt", content="alice\n"),
            text_stream("I may not write."),
        ],
    }
    with ChatServer(respond=Routed(scripts)) as server:
        result = run15(server, tmp_path, "--prompt", PROMPT)
        (_, alice_denied) = bodies(server, ALICE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "alice reports: I may not write.\n"
    assert not (tmp_path / "lead.txt").exists() and not (tmp_path / "alice.txt").exists()
    assert alice_denied["messages"][-1]["content"].startswith("denied:")
    decisions = [
        (d["key"], d["decision"], d["source"])
        for d in read_audit(tmp_path / ".tutorial" / "audit.jsonl")
    ]
    denied = [key for key, decision, source in decisions if source == "human: no terminal"]
    assert sorted(denied) == ["alice.txt", "lead.txt"]
    assert ("alice", "allow", "mode default allows state calls") in decisions  # no question
    assert result.stderr.count("工具 tool: write_file\n") == 2
    assert (
        result.stderr.count("智能体 agent: alice\n工具 tool: write_file\n") == 1
    )  # the lead's: none


# --- approvals, one at a time --------------------------------------------------------------------


def blocked_in(thread_name: str, function: str) -> bool:
    """Whether the thread named so is, right now, inside `function` (waiting for its lock)."""
    thread = next((t for t in threading.enumerate() if t.name == thread_name), None)
    frame = sys._current_frames().get(thread.ident) if thread and thread.ident else None
    return frame is not None and frame.f_code.co_name == function


@dataclass
class OneAtATime:
    """A human who answers yes and records each question. The first question is answered only
    once the other teammate waits to ask too (it is blocked in the pipeline's authorize_call),
    or is asking already: two questions at once are seen, not missed."""

    teammates: tuple[str, str]
    requests: list[ApprovalRequest] = field(default_factory=list)
    timeline: list[tuple[str, str | None]] = field(default_factory=list)
    asking: int = 0
    most_at_once: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        with self.changed:
            self.requests.append(request)
            self.timeline.append(("asked", request.agent))
            self.asking += 1
            self.most_at_once = max(self.most_at_once, self.asking)
            self.changed.notify_all()
            if len(self.requests) == 1:
                other = next(name for name in self.teammates if name != request.agent)
                deadline = time.monotonic() + BOUND
                while len(self.requests) == 1 and not blocked_in(
                    f"teammate {other}", "authorize_call"
                ):
                    left = deadline - time.monotonic()
                    assert left > 0, f"{other} never came to ask"
                    self.changed.wait(min(left, FRAME_POLL))  # a frame cannot notify: look again
            self.asking -= 1
            self.timeline.append(("answered", request.agent))
        return parse_answer("y")


def test_two_teammates_approvals_come_one_at_a_time_each_naming_its_agent(
    tmp_path: Path,
) -> None:
    both_started = threading.Event()  # the lead's second request: both spawns are done
    human = OneAtATime(("alice", "bob"))
    alice_prompt = "Write a.txt."

    def writes(path: str) -> list[AgentStep]:
        first = gated(both_started, call(1, "write_file", path=path, content=f"{path}\n"))
        return [first, text_stream(f"Wrote {path}.")]

    def heard_both(body: Mapping[str, Any]) -> list[dict[str, Any]]:
        heard = [who for who in ("alice", "bob") if mail_from(body, who)]
        return text_stream(f"Heard from {', '.join(heard) or 'nobody'}.")

    lead: list[AgentStep] = [
        calls_stream(
            tool_call(1, "spawn_teammate", {"name": "alice", "prompt": alice_prompt}),
            tool_call(2, "spawn_teammate", {"name": "bob", "prompt": BOB}),
        ),
        doing(lambda body: both_started.set(), heard_both),
        heard_both,
        heard_both,
    ]
    rig = Agent15(
        tmp_path,
        {PROMPT: lead, alice_prompt: writes("a.txt"), BOB: writes("b.txt")},
        mode=None,  # the default mode: a write asks
        asker=human,
    )
    answer = rig.run(PROMPT)
    assert answer == "Heard from alice, bob."
    assert human.most_at_once == 1
    first, second = (request.agent for request in human.requests)
    assert {first, second} == {"alice", "bob"}
    assert human.timeline == [
        ("asked", first),
        ("answered", first),
        ("asked", second),
        ("answered", second),
    ]
    assert [request.tool_name for request in human.requests] == ["write_file", "write_file"]
    assert (rig.root / "a.txt").read_text() == "a.txt\n" and (rig.root / "b.txt").exists()
    decisions = [(d["tool"], d["source"]) for d in read_audit(rig.root / ".tutorial/audit.jsonl")]
    assert decisions.count(("write_file", "human: yes")) == 2


# --- the demo and the console --------------------------------------------------------------------


def test_the_demo_tags_each_teammates_whole_lines_and_stops_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        RECIPE.main(["--demo"])
    out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    lines = err.splitlines()
    assert f"user: {DEMO_PROMPT}" in lines
    alice = [line for line in lines if line.startswith("[alice] ")]
    bob = [line for line in lines if line.startswith("[bob] ")]
    # whole lines: the streamed answer, in pieces of six words, is one line, tagged once
    assert (
        "[alice] [scripted] tests/test_cart.py: the tests of the project, run by pytest." in alice
    )
    assert "[bob] [scripted] I read shop/cart.py." in bob
    assert "[alice] [glob → ok]" in alice and "[bob] [read_file → ok]" in bob
    assert all(line.count("[alice]") + line.count("[bob]") <= 1 for line in lines)
    for line in lines:  # the teammates' texts only on their own lines, or in the lead's answer
        if "run by pytest" in line:
            assert line.startswith("[alice] ") or line.startswith("- alice: "), line
    # the lead's lines carry no tag
    lead = [
        "[scripted] Two questions, two teammates: alice finds the tests, bob reads the code.",
        "[scripted] Both teammates are at work; I will answer when both have reported.",
        "[scripted] Heard from alice; still waiting for bob.",
        "team: the lead waits for alice, bob",
    ]
    assert all(line in lines for line in lead), err
    assert "team: stopped 2 teammates as the run ended" in lines
    assert lines.index("team: stopped 2 teammates as the run ended") > lines.index(alice[-1])
    assert out.startswith("[scripted] Both teammates reported:\n- alice: tests/test_cart.py")
    assert teammate_threads() == []

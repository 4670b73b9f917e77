"""spawn_teammate and send_message (chapters/ch15/team_tools.py) on a real `Team` in tmp_path: what
each refuses, as `invalid_arguments` and before anything starts or is written; what a valid call
starts and writes; that neither asks anybody; and how a long answer is cut to fit a message.

No model: a teammate's `life` is a function of the test that waits until the team stops (at
most `BOUND` seconds), or goes idle first. Every team is stopped at the end of its test, and
no teammate's thread is left.
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest

from chapters.ch03.tests.support import tutorial
from chapters.ch06.definitions import AgentCatalog, AgentDefinition, built_in_agents
from chapters.ch13.inbox import Inbox
from chapters.ch15.mailbox import (
    HARNESS,
    LEAD,
    MAX_SUMMARY,
    MAX_TEXT,
    Mailboxes,
    MailMessage,
    envelope,
)
from chapters.ch15.team import SUMMARY_CHARS, Seat, Team, fitting, summary_of
from chapters.ch15.team_config import MemberStatus, TeamConfig
from chapters.ch15.team_tools import (
    SEND_MESSAGE,
    SPAWN_TEAMMATE,
    SpawnArgs,
    make_send_tool,
    make_spawn_tool,
)
from chapters.ch15.tests.support import BOUND, teammate_threads, wait_for
from shared.console import Console
from shared.tools import PydanticTool, SideEffect, Status, ToolResult

TEAM = "demo"
TEAM_FOLDER = Path(".tutorial") / "teams" / TEAM
Life = Callable[[Seat], None]


# --- the rig -------------------------------------------------------------------------------------


@dataclass
class Rig:
    """A real team of a workspace, the lead's inbox, a plain recorded console, the built-in
    agents, and the spawn tool's starts, recorded."""

    root: Path
    team: Team
    agents: AgentCatalog = field(
        default_factory=lambda: AgentCatalog({a.name: a for a in built_in_agents()})
    )
    started: list[tuple[str, str, str]] = field(default_factory=list)  # name, prompt, agent

    def waiting(self) -> Life:
        """A teammate that works until the team stops."""
        return lambda seat: wait_for(self.team.stopping, f"{seat.name}: the team's end")

    def idling(self, answer: str, idle: threading.Event) -> Life:
        """A teammate that answers at once (so it is idle), then waits until the team stops."""

        def life(seat: Seat) -> None:
            self.team.answered(seat, answer)
            idle.set()
            wait_for(self.team.stopping, f"{seat.name}: the team's end")

        return life

    def spawn_tool(self, life: Life | None = None) -> PydanticTool:
        def start(args: SpawnArgs, definition: AgentDefinition) -> None:
            self.started.append((args.name, args.prompt, definition.name))
            self.team.spawn(args.name, definition.name, life or self.waiting())

        return make_spawn_tool(self.team, self.agents, start)

    def spawned(self, name: str, life: Life | None = None, agent: str = "general") -> None:
        """`name` on the team, started through the tool."""
        result = call(self.spawn_tool(life), name=name, prompt=f"{name}'s work", agent=agent)
        assert result.ok, result.content

    def files(self) -> dict[str, bytes]:
        """Every file of the team's folder (config, mailboxes, counts), with its bytes."""
        folder = self.root / TEAM_FOLDER
        if not folder.exists():
            return {}
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")
        }

    def lines(self, name: str) -> list[dict[str, Any]]:
        """`name`'s mailbox, each line as JSON."""
        path = self.root / TEAM_FOLDER / "inboxes" / f"{name}.jsonl"
        if not path.exists():
            return []
        raw = path.read_bytes()
        assert raw == b"" or raw.endswith(b"\n"), raw
        return [json.loads(line) for line in raw.splitlines()]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    team = Team(tmp_path, TEAM, Inbox(), console, stop_wait=BOUND)
    made = Rig(tmp_path, team)
    try:
        yield made
    finally:
        team.stop_all()
        assert teammate_threads() == []


def call(tool: PydanticTool, **raw: Any) -> ToolResult:
    """The call as the pipeline makes it: validated, previewed (a refusal there ends it, and
    nobody is asked), then run."""
    arguments = tool.validate(raw)
    assert not isinstance(arguments, str), arguments
    previewed = tool.preview_call(arguments)
    if isinstance(previewed, ToolResult):
        return previewed
    return tool.invoke(arguments)


def refused(tool: PydanticTool, **raw: Any) -> str:
    """The `invalid_arguments` refusal of the call, the same in preview and in run."""
    arguments = tool.validate(raw)
    assert not isinstance(arguments, str), arguments
    previewed = tool.preview_call(arguments)
    assert isinstance(previewed, ToolResult), previewed
    assert (previewed.keyword, previewed.status) == ("invalid_arguments", Status.INVALID)
    ran = tool.invoke(arguments)  # run checks again: a caller that skips preview is refused too
    assert ran == previewed
    return previewed.content


def offers(content: str, **members: str | None) -> bool:
    """Whether `content` offers exactly these recipients besides `*`, each by its quoted name,
    and says each teammate's state (`bob is idle`); the lead has none (None)."""
    offered = re.findall(r'"([a-z0-9-]+)"', content.split("You may send to ", 1)[-1])
    states = [f"{name} is {state}" for name, state in members.items() if state is not None]
    return (
        "You may send to " in content
        and offered == list(members)
        and '"*"' in content
        and all(state in content for state in states)
    )


# --- spawn_teammate ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Alice", "must be 1 to 32 characters, each a lowercase letter"),
        ("a" * 33, "must be 1 to 32 characters"),
        ("al_ice", "must be 1 to 32 characters"),
        (LEAD, "is reserved"),
        (HARNESS, "is reserved"),
    ],
)
def test_spawn_refuses_a_bad_name_before_anything_starts(rig: Rig, name: str, why: str) -> None:
    rig.spawned("bob")
    before = rig.files()
    content = refused(rig.spawn_tool(), name=name, prompt="work")
    assert content.startswith("invalid_arguments: ") and why in content
    assert "nothing started" in content
    assert [s[0] for s in rig.started] == ["bob"]  # nothing more was started
    assert [t.name for t in teammate_threads()] == ["teammate bob"]
    assert rig.files() == before


def test_a_name_of_33_characters_is_refused_and_one_of_32_is_taken(rig: Rig) -> None:
    assert "must be 1 to 32" in refused(rig.spawn_tool(), name="b" * 33, prompt="work")
    rig.spawned("b" * 32)
    assert rig.team.member_names() == ["b" * 32]


def test_spawn_refuses_an_unknown_agent_and_lists_the_agents(rig: Rig) -> None:
    content = refused(rig.spawn_tool(), name="alice", prompt="work", agent="reviewer")
    assert content.startswith("invalid_arguments: there is no agent named 'reviewer'")
    assert "nothing started" in content
    assert content.endswith(f"Available agents: {', '.join(rig.agents.names)}.")
    assert rig.agents.names == ("general", "explore")
    assert rig.started == [] and teammate_threads() == []
    assert rig.files() == {}  # not even the team's folder


def test_spawn_refuses_the_name_of_a_live_member_and_the_config_is_unchanged(rig: Rig) -> None:
    rig.spawned("alice")
    before = rig.files()
    content = refused(rig.spawn_tool(), name="alice", prompt="other work", agent="explore")
    assert content.startswith("invalid_arguments: alice is on the team already and still running")
    assert offers(content, alice="working")
    assert [s[0] for s in rig.started] == ["alice"]
    assert [t.name for t in teammate_threads()] == ["teammate alice"]
    assert rig.files() == before
    members = TeamConfig(rig.root, TEAM).members()
    assert [(m.name, m.agentType) for m in members] == [("alice", "general")]


def test_a_valid_spawn_starts_a_thread_and_the_config_shows_it_working(rig: Rig) -> None:
    began = threading.Event()

    def life(seat: Seat) -> None:
        began.set()
        wait_for(rig.team.stopping, "the team's end")

    result = call(rig.spawn_tool(life), name="alice", prompt="find the tests", agent="explore")
    assert result.ok, result.content
    assert result.content.startswith("spawned alice (explore) in team demo: it works on its own")
    assert offers(result.content, alice="working")
    assert rig.started == [("alice", "find the tests", "explore")]
    wait_for(began, "alice's life")
    (thread,) = teammate_threads()
    assert thread.name == "teammate alice" and thread.daemon
    assert thread is not threading.current_thread()
    config = json.loads((rig.root / TEAM_FOLDER / "config.json").read_text(encoding="utf-8"))
    assert config["name"] == TEAM and config["leadAgentId"] == "lead@demo"
    (member,) = config["members"]
    assert {k: member[k] for k in ("agentId", "name", "agentType", "status", "cwd")} == {
        "agentId": "alice@demo",
        "name": "alice",
        "agentType": "explore",
        "status": "working",
        "cwd": str(rig.root),
    }
    assert rig.team.working() == ["alice"]


def test_spawn_with_no_agent_is_a_general_teammate(rig: Rig) -> None:
    result = call(rig.spawn_tool(), name="carol", prompt="work")
    assert result.ok and result.content.startswith("spawned carol (general) in team demo")
    assert TeamConfig(rig.root, TEAM).members()[0].agentType == "general"


# --- send_message --------------------------------------------------------------------------------


@pytest.fixture
def three(rig: Rig) -> Rig:
    """alice and carol working, bob idle (his answer is in the lead's mailbox)."""
    idle = threading.Event()
    rig.spawned("alice")
    rig.spawned("bob", rig.idling("bob's report", idle))
    wait_for(idle, "bob idle")
    rig.spawned("carol")
    assert rig.team.working() == ["alice", "carol"]
    return rig


def test_an_unknown_recipient_is_refused_listing_the_members_and_nothing_is_sent(
    three: Rig,
) -> None:
    before = three.files()
    content = refused(make_send_tool(three.team, "alice"), to="dave", message="hello")
    assert content.startswith("invalid_arguments: ") and "nothing was sent" in content
    assert "there is no member named 'dave'" in content
    assert offers(content, lead=None, bob="idle", carol="working")
    assert '"alice"' not in content  # the sender is not offered itself
    assert three.files() == before
    from_lead = refused(make_send_tool(three.team, LEAD), to="dave", message="hello")
    assert offers(from_lead, alice="working", bob="idle", carol="working")
    assert '"lead"' not in from_lead


def test_a_message_to_yourself_is_refused(three: Rig) -> None:
    before = three.files()
    content = refused(make_send_tool(three.team, "alice"), to="alice", message="note to self")
    assert content.startswith("invalid_arguments: ") and "nothing was sent" in content
    assert "alice is you: send to someone else" in content
    assert offers(content, lead=None, bob="idle", carol="working")
    assert three.files() == before
    assert "lead is you" in refused(make_send_tool(three.team, LEAD), to=LEAD, message="hi")
    assert three.files() == before


def test_star_reaches_everyone_but_the_sender_once_and_wakes_them(three: Rig) -> None:
    lead_lines = len(three.lines(LEAD))  # bob's answer
    result = call(make_send_tool(three.team, "alice"), to="*", message="found it", summary="news")
    assert result.ok and result.content == "sent to lead, bob, carol"
    for name in ("bob", "carol"):
        assert [(m["from"], m["text"], m["summary"]) for m in three.lines(name)] == [
            ("alice", "found it", "news")
        ]
    assert three.lines(LEAD)[lead_lines:] == [three.lines("bob")[0]]
    assert three.lines("alice") == []
    assert three.team.lead_inbox.pending()
    seats = {seat.name: seat for seat in three.team.seats()}
    assert seats["bob"].inbox.pending() and seats["carol"].inbox.pending()
    assert not seats["alice"].inbox.pending()
    assert three.team.working() == ["alice", "bob", "carol"]  # bob woke: working again


def test_star_with_nobody_else_on_the_team_is_refused(rig: Rig) -> None:
    content = refused(make_send_tool(rig.team, LEAD), to="*", message="anyone?")
    assert content.startswith("invalid_arguments: ") and "nothing was sent" in content
    assert "no other member of the team is running" in content
    assert rig.files() == {}


def test_a_sent_message_is_one_line_of_the_recipients_mailbox(three: Rig) -> None:
    text = 'two lines\nand "quotes" & <tags>'
    result = call(make_send_tool(three.team, LEAD), to="carol", message=text)
    assert result.ok and result.content == "sent to carol"
    raw = (three.root / TEAM_FOLDER / "inboxes" / "carol.jsonl").read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    (line,) = three.lines("carol")
    assert set(line) == {"from", "text", "timestamp"}  # no summary given: none written
    assert (line["from"], line["text"]) == (LEAD, text)
    assert Mailboxes(three.root, TEAM).undelivered("carol") == 1


@pytest.mark.parametrize(
    ("message", "summary", "why"),
    [
        ("", None, "the message is empty"),
        ("   \n ", None, "the message is empty"),
        ("x" * (MAX_TEXT + 1), None, f"at most {MAX_TEXT:,}"),
        ("<" * (MAX_TEXT // 4 + 1), None, "as its envelope carries it"),  # 4 characters each
        ("hello", "s" * (MAX_SUMMARY + 1), f"at most {MAX_SUMMARY}"),
    ],
)
def test_an_empty_or_too_long_message_or_summary_is_refused_and_nothing_written(
    three: Rig, message: str, summary: str | None, why: str
) -> None:
    before = three.files()
    raw = {"to": "*", "message": message, **({"summary": summary} if summary else {})}
    content = refused(make_send_tool(three.team, "alice"), **raw)
    assert content.startswith("invalid_arguments: ") and why in content
    assert "nothing was sent" in content
    assert three.files() == before


def test_a_message_and_a_summary_at_their_bounds_are_sent(three: Rig) -> None:
    text, summary = "y" * MAX_TEXT, "s" * MAX_SUMMARY
    result = call(make_send_tool(three.team, "alice"), to="bob", message=text, summary=summary)
    assert result.ok, result.content
    assert [(m["text"], m["summary"]) for m in three.lines("bob")] == [(text, summary)]


# --- neither asks --------------------------------------------------------------------------------


def test_both_tools_change_only_the_team_state(rig: Rig) -> None:
    spawn, send = rig.spawn_tool(), make_send_tool(rig.team, LEAD)
    assert (spawn.name, send.name) == (SPAWN_TEAMMATE, SEND_MESSAGE)
    assert spawn.side_effect is SideEffect.STATE
    assert send.side_effect is SideEffect.STATE


@pytest.mark.parametrize("tool", [SPAWN_TEAMMATE, SEND_MESSAGE])
def test_the_default_mode_allows_both_without_asking(tool: str) -> None:
    result = tutorial("permissions", "check", "--chapter", "15", tool)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"allow: {tool}\n  because: mode default allows state calls\n")


# --- a long answer, cut --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unit", "count"),
    [
        ("a", 2 * MAX_TEXT),
        ("<", 2 * MAX_TEXT),
        ("&", MAX_TEXT // 2),  # fewer characters than a message holds, but & is &amp; in it
        (">", MAX_TEXT // 4 + 1),
    ],
)
def test_an_answer_longer_than_a_message_is_cut_says_so_and_fits(unit: str, count: int) -> None:
    answer = "first line\n" + unit * count
    cut = fitting(answer)
    assert len(escape(cut)) <= MAX_TEXT
    assert cut.endswith(
        f"\n… (cut: the answer had {len(answer):,} characters; a message holds {MAX_TEXT:,})"
    )
    kept = cut[: cut.rindex("\n… (cut:")]
    assert answer.startswith(kept) and len(kept) > MAX_TEXT // 8  # its beginning, not a scrap
    message = MailMessage.new("alice", cut, summary_of(cut))  # raises if it does not fit
    assert len(envelope(message)) < MAX_TEXT + 500


def test_an_answer_that_fits_is_not_cut() -> None:
    assert fitting("y" * MAX_TEXT) == "y" * MAX_TEXT
    assert fitting("short") == "short"
    assert fitting("y" * (MAX_TEXT + 1)) != "y" * (MAX_TEXT + 1)


def test_a_long_answer_reaches_the_lead_cut(rig: Rig) -> None:
    answer = "z" * (MAX_TEXT + 100)
    idle = threading.Event()
    rig.spawned("alice", rig.idling(answer, idle))
    wait_for(idle, "alice idle")
    (line,) = rig.lines(LEAD)
    assert line["from"] == "alice" and line["text"] == fitting(answer)
    assert line["summary"] == summary_of(fitting(answer))
    assert TeamConfig(rig.root, TEAM).members()[0].status is MemberStatus.IDLE


def test_summary_of_is_the_first_line_in_a_few_words() -> None:
    assert summary_of("  Found   two\ttests.  \nThe rest of it.") == "Found two tests."
    assert summary_of("\n\n  second line first\n") == "second line first"
    assert summary_of("") == summary_of(" \n ") == "(empty)"
    long = "word " * 40
    short = summary_of(long)
    assert len(short) == SUMMARY_CHARS <= MAX_SUMMARY and short.endswith("…")
    assert long.startswith(short[:-1])
    assert summary_of("w" * SUMMARY_CHARS) == "w" * SUMMARY_CHARS

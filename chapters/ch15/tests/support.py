"""What chapter 15's run tests share: chapter 15's agent (chapters/ch15/agent.py) on scripted
streams, one script per member, in tmp_path/ws, its plain console recorded, no terminal.

    rig = Agent15(tmp_path, {PROMPT: [lead's replies], ALICE: [alice's replies]})
    answer = rig.run(PROMPT)
    rig.requests_of(ALICE)       # alice's requests, in order (her history starts with ALICE)
    rig.printed()                # what the run printed on stderr (teammates' lines: "[alice] ")
    rig.mailbox("lead")          # (lines, delivered) of .tutorial/teams/<team>/inboxes/lead.*
    rig.statuses()               # {name: status} of .tutorial/teams/<team>/config.json

or, in one call, `run_team(tmp_path, scripts, PROMPT, team_wait=0)`, which returns a `TeamRun`
(the answer or the error, what was printed, the model, the workspace, the rig).

Each member's script is chosen by the prompt its history starts with (chapter 7's
`AgentStreams`): the lead's by the run's prompt, a teammate's by the prompt
`spawn_teammate` gave it. A reply may be made from the request it answers, and may
wait for something first: `gated(event, reply)` waits for a `threading.Event` (at
most `BOUND` seconds; then it raises, so a test fails instead of hanging), which is
how a test fixes the order of members that run side by side, without sleeping.
`TeamConsole.team_waits` is set once the lead starts to wait for its team;
`rig.team_of_run.stopping` once the run ends; `rig.inbox.wait_lines(n)` returns once n
lines of the lead's mailbox have reached the lead's inbox.

The rig is chapter 14's (chapters/ch14/tests/support.py) with chapter 15's recipe:
--stay-for 0, real commands, every call allowed (mode bypass), no retries, and
--team-wait `BOUND` unless a test gives another.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import unescape

from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, tool_call
from chapters.ch09.session_log import SessionLog
from chapters.ch11.tests.composed import STARTED
from chapters.ch13.inbox import Event
from chapters.ch13.tests.support import BOUND as BOUND  # the bound of every wait: 30 s
from chapters.ch13.tests.support import WatchedInbox, WatchingConsole
from chapters.ch14.tests.support import Agent14
from chapters.ch15.mailbox import EVENT_SOURCE, LEAD, Mailboxes
from chapters.ch15.team import LeadMail, Team
from chapters.ch15.team_config import TeamConfig

TEAM = "default"  # the team of a run given no --team (and no --task-list)
THREAD_PREFIX = "teammate "  # a teammate's thread is named "teammate <name>"
TEAM_WAITS = "waiting for teammates' messages"  # how the lead's wait starts, on its console
LEAD_MAIL = f"{EVENT_SOURCE}:{LEAD}"  # the source of the lead's mail in its inbox

Reply = list[dict[str, Any]]
Step = Callable[[Mapping[str, Any]], Sequence[Any]]
_ENVELOPE = re.compile(
    r'<teammate-message teammate_id="(?P<sender>[^"]*)"(?: summary="(?P<summary>[^"]*)")?>'
    r"(?P<text>.*?)</teammate-message>",
    re.S,
)


class TeamInbox(WatchedInbox):
    """The lead's inbox, which also says how many lines of the lead's mailbox reached it (each
    line once, whatever its key)."""

    def __init__(self) -> None:
        super().__init__()
        self._lines = threading.Condition()
        self.mail_lines = 0

    def post(self, event: Event) -> bool:
        added = super().post(event)
        if added and event.source == LEAD_MAIL:
            with self._lines:
                self.mail_lines += 1
                self._lines.notify_all()
        return added

    def wait_lines(self, count: int, timeout: float = BOUND) -> None:
        """Until `count` lines of the lead's mailbox were sent to it (TimeoutError after
        `timeout` seconds)."""
        with self._lines:
            if not self._lines.wait_for(lambda: self.mail_lines >= count, timeout):
                raise TimeoutError(f"{self.mail_lines} of {count} lines reached the lead")


class TeamConsole(WatchingConsole):
    """A plain recorded console that also says when the lead starts to wait for its team."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.team_waits = threading.Event()

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        with super().waiting(what):
            if what.startswith(TEAM_WAITS):
                self.team_waits.set()
            yield


@dataclass
class Agent15(Agent14):
    """One run of chapter 15's agent in tmp_path/ws on scripted streams (one per member).

    `team_wait` is --team-wait, `max_requests` --max-requests (None: its default), `team`
    --team (None: not given; the team is then the task list's, `default`). Other options
    and services by name in `options`, as `agent_of` takes them.
    """

    chapter = 15
    team_wait: float = BOUND
    max_requests: int | None = None
    team: str | None = None
    inbox: TeamInbox = field(default_factory=TeamInbox)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.console = TeamConsole(
            out=self.console.out, err=self.console.err, fancy=False, clock=self.clock
        )

    @property
    def team_console(self) -> TeamConsole:
        assert isinstance(self.console, TeamConsole)
        return self.console

    def given(self) -> dict[str, Any]:
        given = {**super().given(), "log": SessionLog.new(self.root, 15, STARTED)}
        given["team_wait"] = self.team_wait
        if self.max_requests is not None:
            given["max_requests"] = self.max_requests
        if self.team is not None:
            given["options"] = {"team": self.team}  # agent_of's own `options`: the option
        return given

    @property
    def team_of_run(self) -> Team:
        """The run's `Team`, made with the agent (ask once the run has started)."""
        assert self.spec is not None, "the agent is not built yet"
        found = [f.team for f in self.spec.features if isinstance(f, LeadMail)]
        assert len(found) == 1, f"the lead has {len(found)} LeadMail features"
        return found[0]

    @property
    def team_name(self) -> str:
        return self.team or TEAM

    def requests_of(self, prompt: str) -> list[dict[str, Any]]:
        """The requests of the member whose history starts with `prompt`, in order."""
        assert self.model is not None, "the rig has not run"
        return self.model.requests_of(prompt)

    def mailbox(self, name: str) -> tuple[int, int]:
        """(lines in `name`'s mailbox, how many of them are counted delivered)."""
        return mailbox_state(self.root, self.team_name, name)

    def statuses(self) -> dict[str, str]:
        """Each member's status in the team's config.json, by name (the latest entry)."""
        return statuses(self.root, self.team_name)


@dataclass
class TeamRun:
    """What `run_team` returns: the answer (None if the run raised `error`), what the run
    printed on stderr, the model (`model.requests_of(prompt)`), the workspace and the rig."""

    answer: str | None
    error: BaseException | None
    printed: str
    model: AgentStreams
    workspace: Path
    rig: Agent15 = field(repr=False)


def run_team(
    tmp_path: Path,
    scripts: Mapping[str, Sequence[AgentStep]],
    prompt: str,
    **fields: Any,
) -> TeamRun:
    """Chapter 15's agent run once on `scripts`, with `fields` of `Agent15` (team_wait,
    max_requests, max_turns, options, ...). An `Exception` the run raises is returned,
    not raised (a KeyboardInterrupt is raised)."""
    rig = Agent15(tmp_path, scripts, **fields)
    answer: str | None = None
    error: BaseException | None = None
    try:
        answer = rig.run(prompt)
    except Exception as raised:
        error = raised
    assert rig.model is not None
    return TeamRun(answer, error, rig.printed(), rig.model, rig.root, rig)


# --- replies ---------------------------------------------------------------------------------


def calls(*made: tuple[str, str, str], text: str = "") -> Reply:
    """A reply of tool calls, each `tool_call(number, tool, arguments)`."""
    return calls_stream(*made, text=text)


def spawn(number: int, name: str, prompt: str, agent: str | None = None) -> tuple[str, str, str]:
    """The call `spawn_teammate {name, prompt, agent?}`, with id call_<number>."""
    arguments = {"name": name, "prompt": prompt, **({"agent": agent} if agent else {})}
    return tool_call(number, "spawn_teammate", arguments)


def send(number: int, to: str, message: str, summary: str | None = None) -> tuple[str, str, str]:
    """The call `send_message {to, message, summary?}`, with id call_<number>."""
    arguments = {"to": to, "message": message, **({"summary": summary} if summary else {})}
    return tool_call(number, "send_message", arguments)


def wait_for(event: threading.Event, what: str, timeout: float = BOUND) -> None:
    """Wait until `event` is set; TimeoutError (naming `what`) after `timeout` seconds."""
    if not event.wait(timeout):
        raise TimeoutError(f"{what}: not within {timeout:g} s")


def gated(
    event: threading.Event | Callable[[], threading.Event],
    reply: AgentStep,
    what: str = "the gate",
) -> Step:
    """A reply given only once `event` is set (at most `BOUND` seconds). `event` may be a
    function that returns it when the reply is asked for (`lambda: rig.team_of_run.stopping`:
    the team is made with the agent)."""

    def made(request: Mapping[str, Any]) -> Sequence[Any]:
        wait_for(event if isinstance(event, threading.Event) else event(), what)
        return reply(request) if callable(reply) else reply

    return made


def doing(action: Callable[[Mapping[str, Any]], None], reply: AgentStep) -> Step:
    """A reply made after `action(request)` ran (a check, or an event set)."""

    def made(request: Mapping[str, Any]) -> Sequence[Any]:
        action(request)
        return reply(request) if callable(reply) else reply

    return made


# --- what a request holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class Mail:
    """One `<teammate-message>` a request carries (its escapes undone)."""

    sender: str
    summary: str | None
    text: str


def mail_in(request: Mapping[str, Any]) -> list[Mail]:
    """Every `<teammate-message>` in `request`'s user and tool messages, in order."""
    found = []
    for message in request["messages"]:
        if message["role"] in ("user", "tool"):
            for match in _ENVELOPE.finditer(str(message.get("content") or "")):
                summary = match["summary"]
                found.append(
                    Mail(
                        _unescaped(match["sender"]),
                        None if summary is None else _unescaped(summary),
                        _unescaped(match["text"]),
                    )
                )
    return found


def _unescaped(text: str) -> str:
    return unescape(text, {"&quot;": '"'})


def mail_from(request: Mapping[str, Any], sender: str) -> list[str]:
    """The texts of the messages from `sender` that `request` carries, in order."""
    return [mail.text for mail in mail_in(request) if mail.sender == sender]


def system_prompt(request: Mapping[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system", first
    return str(first["content"])


# --- the team's files and threads --------------------------------------------------------------


def mailbox_state(root: Path, team: str, name: str) -> tuple[int, int]:
    """(lines in `name`'s mailbox, how many of them are counted delivered)."""
    boxes = Mailboxes(root, team)
    delivered = boxes.delivered(name)
    return delivered + boxes.undelivered(name), delivered


def statuses(root: Path, team: str) -> dict[str, str]:
    """Each member's status in `team`'s config.json, by name (a name's latest entry)."""
    return {member.name: member.status.value for member in TeamConfig(root, team).members()}


def config_file(root: Path, team: str = TEAM) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (root / ".tutorial" / "teams" / team / "config.json").read_text(encoding="utf-8")
    )
    return data


def teammate_threads() -> list[threading.Thread]:
    """The teammates' threads alive now."""
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX) and t.is_alive()]

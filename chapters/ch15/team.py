"""The team while a run lasts: teammates on threads of their own, their mail, and their end.

A sub-agent (chapter 6) is a function call: the parent waits, the child answers
once, its history is gone. A teammate is a second loop that runs beside the lead
for as long as the run lasts, on its own thread, with its own history, and the
two talk only through mailboxes (chapters/ch15/mailbox.py):

    lead                                   teammate "alice" (its own thread)
    spawn_teammate ──► Team.spawn ───────► run_agent(prompt, its spec)
    send_message ────► Team.send ────────► alice.jsonl ─► its inbox ─► its next request
    its next request ◄─ its inbox ◄─ lead.jsonl ◄─ Team.send ◄── its answer (it goes idle)

How mail reaches a history is chapter 13's: a message becomes an inbox event
(`Team.event`), `DeliverEvents` puts the pending events into the history before a
request, and only after that are they counted as delivered in the mailbox
(`MailCount`). A message sent in this process is posted to the recipient's inbox
at once, so it wakes a member that waits; a member that waits also reads its
mailbox file again every `MAIL_POLL` seconds, for what another process wrote.

A teammate that answers sends its answer to the lead as a message, and goes idle
(`TeammateMail.on_stop`): it waits for its mailbox; a message wakes it and the
loop goes on. Going idle tells nobody: the lead is woken only by mail.

The lead's answer ends the run only when no teammate is working and no message
is waiting for the lead (`LeadMail.on_stop`); until then it waits, at most
`team_wait` seconds, and a message sends it back to work. When the run ends, for
whatever reason, every teammate is stopped at its next request boundary
(`EndTeam`): an idle one at once, a working one when its request and its calls are
done, each waited for at most `STOP_WAIT` seconds.

Bounds: `MAX_MEMBERS` live teammates (chapters/ch15/team_config.py); `team_wait`
at most `MAX_TEAM_WAIT`; a message `MAX_TEXT` characters (a longer answer is
cut, and says so); every request of every member counts against chapter 6's
family budget, and when it runs out the whole team stops.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from chapters.ch03.harness_files import harness_folder
from chapters.ch06.budget import LIMIT_NAME
from chapters.ch13.inbox import EVENTS_PER_MESSAGE, Event, Inbox, delivered_in
from chapters.ch15.mailbox import (
    EVENT_SOURCE,
    HARNESS,
    LEAD,
    MAX_SUMMARY,
    MAX_TEXT,
    TEAMS_FOLDER,
    MailboxError,
    Mailboxes,
    MailMessage,
    envelope,
    mail_event,
)
from chapters.ch15.team_config import MemberStatus, TeamConfig, TeamError, TeamFileError
from shared.agent import Feature, Run
from shared.console import waited
from shared.errors import AgentError, AgentLimitError, one_line
from shared.messages import Message

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from shared.console import Console

MAIL_POLL = 0.5  # seconds: how often a waiting member reads its mailbox file again
STOP_WAIT = 30.0  # seconds the run's end waits for the teammates' threads, all together
STOP_WAIT_INTERRUPTED = 2.0  # ... after Ctrl-C: a person waits; what is left ends with the program
DEFAULT_TEAM_WAIT = 600.0  # seconds the lead waits, after an answer, for a teammate's message
MAX_TEAM_WAIT = 3_600.0
FAILED = "teammate_failed"
LEAD_LOCK = "lead.lock"  # in the team's folder: held by the run that leads the team
IDLE_SOURCE = "team:idle"  # what a teammate's inbox expects while it waits for mail
SUMMARY_CHARS = 60  # of an answer's first line: the summary of the message that carries it
MAIL_READ = 100  # mailbox lines read into the inbox at a time


def identity_line(name: str, team: str) -> str:
    """The first line of every teammate's system prompt."""
    return f'You are teammate "{name}" in team "{team}".'


class TeamLed(TeamError):
    """Another run leads the team: it holds the team's lead lock."""


class TeamStopped(AgentError):
    """The run ended: a teammate stops at its next request boundary."""


@dataclass
class Seat:
    """One teammate of this run: its name, its inbox, its thread."""

    name: str
    agent_type: str
    number: int  # the order it joined in this run (its colour)
    inbox: Inbox = field(default_factory=Inbox)
    thread: threading.Thread | None = None
    ended: bool = False  # it ended on its own (failed, spent the budget, left), not stopped
    turns: int = 0  # its start, and each wake by mail
    leaving: bool = False  # it agreed to stop: the error that ends it is no failure
    team_tools: set[str] = field(default_factory=set)  # its tools as a teammate, not a child


class Team:
    """The team of one run: who runs in this process, the mail between them, the end rule.

    Every method may be called from any thread. One condition guards who is
    working; it is notified when that changes, when mail is sent and when the
    team stops, and a counter (`generation`) lets a waiter miss nothing.
    """

    def __init__(
        self,
        root: Path,
        name: str,
        lead_inbox: Inbox,
        console: Console,
        *,
        mail_poll: float = MAIL_POLL,
        stop_wait: float = STOP_WAIT,
        before_turn: Callable[[Seat, int, threading.Event], None] | None = None,
        render: Callable[[MailMessage], str] = envelope,
    ) -> None:
        """`before_turn(seat, turn, stopping)`: called on a teammate's thread before its turn
        `turn` (1: its start, 2 and on: each time mail wakes it) goes on; the demo fixes
        the order its members print in with it. `render`: what
        the model reads of a message (its envelope, by default)."""
        self.root = root
        self.name = name
        self.lead_inbox = lead_inbox
        self.console = console
        self.mail_poll = mail_poll
        self.stop_wait = stop_wait
        self.before_turn = before_turn
        self.render = render
        self.mailboxes = Mailboxes(root, name)
        self.config = TeamConfig(root, name)
        self.stopping = threading.Event()
        self.fatal: AgentLimitError | None = None  # the family's budget ran out in a teammate
        self._changed = threading.Condition()
        self._generation = 0
        self._seats: dict[str, Seat] = {}
        self._working: set[str] = set()
        self._joined = 0
        self._lead_lock: BaseFileLock | None = None  # held from the first spawn to the end

    # --- who is on the team ---------------------------------------------------------------

    def open(self) -> None:
        """Once, before the first teammate starts: take the team's lead lock, held until
        `stop_all` (`TeamLed` if another run holds it: two runs that both thought they
        led a team would share its mailboxes and mark each other's members); then the
        members a run left working or idle (it was killed, so nothing stopped them) are
        marked stopped, so their names are free."""
        if self._lead_lock is not None:
            return
        from filelock import FileLock, Timeout  # only a run that starts a teammate needs it

        try:
            folder = harness_folder(self.root, TEAMS_FOLDER / self.name, create=True)
        except OSError as error:
            raise TeamFileError(f"{TEAMS_FOLDER.as_posix()}/{self.name}/: {error}") from None
        lock = FileLock(folder / LEAD_LOCK, thread_local=False, fallback_to_soft=False)
        try:
            lock.acquire(blocking=False)
        except Timeout:
            raise TeamLed(
                f"team {self.name} is led by another run in this folder (it holds "
                f"{TEAMS_FOLDER.as_posix()}/{self.name}/{LEAD_LOCK}); wait for it to end, or "
                "use another team (--team NAME)"
            ) from None
        self._lead_lock = lock
        for member in self.config.live():
            self._set_status(member.name, MemberStatus.STOPPED)

    def seats(self) -> list[Seat]:
        with self._changed:
            return list(self._seats.values())

    def member_names(self) -> list[str]:
        """The teammates of this run that are working or idle, in the order they joined."""
        return [seat.name for seat in self.seats()]

    def is_working(self, name: str) -> bool:
        with self._changed:
            return name in self._working

    def working(self) -> list[str]:
        """The teammates working now: making requests, or woken by mail not yet read."""
        with self._changed:
            return [name for name in self._seats if name in self._working]

    def generation(self) -> int:
        with self._changed:
            return self._generation

    def wait_for_change(self, seen: int, timeout: float) -> None:
        """Until something changed since `generation()` was `seen`, or `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._generation == seen:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(left)

    def _touch(self) -> None:
        """Under `_changed`: wake every waiter."""
        self._generation += 1
        self._changed.notify_all()

    # --- starting a teammate --------------------------------------------------------------

    def spawn(self, name: str, agent_type: str, life: Callable[[Seat], None]) -> Seat:
        """Join `name` to the team and start `life(seat)` on a thread of its own.

        `TeamError` (a live member has the name, the team is full, its file cannot be
        used) or `ValueError` (a name that can never be one) before anything starts.
        """
        if self.stopping.is_set():
            raise TeamStopped("the run is ending: no teammate starts now")
        self.open()
        self.config.join(name, agent_type, self.root)
        with self._changed:
            self._joined += 1
            seat = Seat(name, agent_type, self._joined)
            self._seats[name] = seat
            self._working.add(name)
            self._touch()
        seat.thread = threading.Thread(
            target=self._life, args=(seat, life), name=f"teammate {name}", daemon=True
        )
        seat.thread.start()
        return seat

    def _life(self, seat: Seat, life: Callable[[Seat], None]) -> None:
        """A teammate's whole run, on its thread: it ends stopped, failed, or out of budget.

        What its end says (its status, a failure's message to the lead) is written
        before it stops counting as working: the lead's end rule never misses it, and
        the run's end waits for this thread to have written it."""
        status, why = MemberStatus.STOPPED, ""
        try:
            self._turn(seat)
            life(seat)
        except TeamStopped:
            seat.ended = not self.stopping.is_set()  # it left on its own; the run goes on
        except AgentLimitError as error:
            seat.ended = True  # first: whoever stops the team next does not count it
            if error.limit == LIMIT_NAME:  # the family's: the whole team stops
                with self._changed:
                    self.fatal = self.fatal or error
                    self.stopping.set()
                    self._touch()
            elif not seat.leaving:
                status, why = MemberStatus.FAILED, f"it used all {error.max_turns} turns it may"
        except Exception as error:  # a provider error, a bug: the lead hears of it
            seat.ended = True
            if not seat.leaving:
                status, why = MemberStatus.FAILED, f"{type(error).__name__}: {error}"
        try:
            self._set_status(seat.name, status)
            if status is MemberStatus.FAILED:
                text = f"{FAILED}: {seat.name}: {one_line(why, 500)}"
                self.console.notice(f"team: {text}")
                self.send_or_say(HARNESS, LEAD, text, f"{seat.name} failed")
        finally:
            with self._changed:
                self._seats.pop(seat.name, None)
                self._working.discard(seat.name)
                self._touch()

    def leaving(self, name: str) -> None:
        """`name` agreed to stop: whatever ends its run now (its turn limit, say) ends it as
        stopped, not failed."""
        with self._changed:
            seat = self._seats.get(name)
            if seat is not None:
                seat.leaving = True

    def _turn(self, seat: Seat) -> None:
        """A teammate's next turn begins (its start, or a wake): the hook first, if any."""
        seat.turns += 1
        if self.before_turn is not None:
            self.before_turn(seat, seat.turns, self.stopping)

    def _set_status(self, name: str, status: MemberStatus) -> None:
        try:
            self.config.set_status(name, status)
        except TeamError as error:  # the roster is for people to read: the run goes on
            self.console.notice(f"team: {name} could not be marked {status.value}: {error}")

    # --- mail -----------------------------------------------------------------------------

    def recipients(self, sender: str, to: str) -> list[str] | str:
        """Who `to` names for `sender` (`*`: everyone else), or why nobody can be sent to."""
        members = self.member_names()
        everyone = [LEAD, *members]
        if to == "*":
            named = [name for name in everyone if name != sender]
            return named or "no other member of the team is running; spawn a teammate first"
        if to == sender:
            return f"{to} is you: send to someone else ({self.described(sender)})"
        if to in everyone:
            return [to]
        return f"there is no member named {to!r}. {self.described(sender)}"

    def described(self, sender: str) -> str:
        """`You may send to "lead", "alice", "bob", or "*" for all of them (alice is working,
        bob is idle).`: the names alone, quoted, so that a model copies a name, not a note."""
        names = [LEAD] if sender != LEAD else []
        states = []
        for name in self.member_names():
            if name != sender:
                names.append(name)
                states.append(f"{name} is {'working' if self.is_working(name) else 'idle'}")
        if not names:
            return "No other member of the team is running."
        quoted = ", ".join(f'"{name}"' for name in names)
        said = f" ({', '.join(states)})" if states else ""
        return f'You may send to {quoted}, or "*" for all of them{said}.'

    def send(self, sender: str, to: list[str], text: str, summary: str | None) -> None:
        """Append the message to each recipient's mailbox, and wake it if it runs here.
        `MailboxError` names the first mailbox it could not be written to."""
        message = MailMessage.new(sender, text, summary)  # ValueError: before anything is sent
        for name in to:
            self._deliver(name, message)

    def send_or_say(self, sender: str, to: str, text: str, summary: str | None) -> None:
        """A message the harness sends on its own (an answer, a failure): one that cannot be
        sent is said on the console, and the run goes on."""
        try:
            self._deliver(to, MailMessage.new(sender, text, summary))
        except (MailboxError, ValueError) as error:
            self.console.notice(f"team: a message to {to} was not sent: {error}")

    def _deliver(self, to: str, message: MailMessage) -> None:
        index = self.mailboxes.send(to, message)
        with self._changed:
            inbox = self.lead_inbox if to == LEAD else None
            seat = self._seats.get(to)
            if seat is not None:
                inbox = seat.inbox
                self._working.add(to)  # woken: working from now, so the lead does not stop
            if inbox is not None:
                inbox.post(self.event(to, index, message))
            self._touch()

    def event(self, name: str, index: int, message: MailMessage) -> Event:
        """Line `index` of `name`'s mailbox as its inbox event, as `render` shows it."""
        return mail_event(name, index, message, self.render)

    def read_mail(self, name: str, inbox: Inbox) -> None:
        """Post `name`'s undelivered lines to its inbox (it knows those it has already)."""
        try:
            unread = self.mailboxes.unread(name, MAIL_READ)
        except MailboxError as error:
            self.console.notice(f"team: {error}; its messages wait")
            return
        for index, message in unread:
            inbox.post(self.event(name, index, message))

    def already_read(self, name: str, inbox: Inbox, history: Sequence[Message]) -> None:
        """For a resumed history: the undelivered lines whose envelopes it holds already (the
        run that added them stopped before it counted them) are delivered, not sent again."""
        try:
            unread = self.mailboxes.unread(name, MAIL_READ)
        except MailboxError:
            return  # read_mail says what is wrong
        events = [self.event(name, index, message) for index, message in unread]
        held = delivered_in(history, events)
        inbox.delivered(event for event in events if event.ident in held)

    def count_delivered(self, name: str, inbox: Inbox) -> None:
        """Move `name`'s count past every line its inbox has delivered, in order: a line is
        counted only once it, and every line before it, is in the history."""
        source = f"{EVENT_SOURCE}:{name}"
        delivered = inbox.delivered_keys
        try:
            start = upto = self.mailboxes.delivered(name)
            while (source, str(upto)) in delivered:
                upto += 1
            if upto > start:
                self.mailboxes.mark_delivered(name, upto)
        except (MailboxError, ValueError) as error:  # the same lines come again: not twice
            self.console.notice(f"team: {error}")

    # --- idle -----------------------------------------------------------------------------

    def answered(self, seat: Seat, answer: str) -> None:
        """A teammate's answer: to the lead as a message from it; then it is idle."""
        text = fitting(answer.strip() or "(an empty answer)")
        self.send_or_say(seat.name, LEAD, text, summary_of(text))
        self.read_mail(seat.name, seat.inbox)
        with self._changed:
            if not seat.inbox.pending():
                self._working.discard(seat.name)
            idle = seat.name not in self._working
            self._touch()
        if idle:
            self._set_status(seat.name, MemberStatus.IDLE)

    def wait_for_mail(self, seat: Seat) -> None:
        """Until a message is in the teammate's inbox (then it works again), or the team
        stops (`TeamStopped`). Reads the mailbox file every `mail_poll` seconds."""
        seat.inbox.expect(IDLE_SOURCE)
        try:
            while not seat.inbox.pending():
                if self.stopping.is_set():
                    raise TeamStopped(f"{seat.name} was stopped while idle")
                self.read_mail(seat.name, seat.inbox)
                if seat.inbox.pending():
                    break
                seat.inbox.wait(self.mail_poll)
        finally:
            seat.inbox.done(IDLE_SOURCE)
        self._turn(seat)
        with self._changed:
            self._working.add(seat.name)
            self._touch()
        self._set_status(seat.name, MemberStatus.WORKING)  # the same status writes nothing

    # --- the end --------------------------------------------------------------------------

    def stop_all(self, wait: float | None = None) -> None:
        """Stop every teammate at its next request boundary; wait for them (`wait` seconds,
        else `stop_wait`)."""
        with self._changed:
            self.stopping.set()
            seats = list(self._seats.values())
            self._touch()
        for seat in seats:
            seat.inbox.done(IDLE_SOURCE)  # an idle one wakes, and stops
        bound = self.stop_wait if wait is None else wait
        deadline = time.monotonic() + bound
        for seat in seats:
            if seat.thread is not None:
                seat.thread.join(max(0.0, deadline - time.monotonic()))
        left = [seat for seat in seats if seat.thread is not None and seat.thread.is_alive()]
        for seat in left:
            self._set_status(seat.name, MemberStatus.STOPPED)
        if self._lead_lock is not None:
            self._lead_lock.release()  # the OS would let it go with the process anyway
            self._lead_lock = None
        stopped = [seat for seat in seats if not seat.ended]
        if stopped:
            count = len(stopped)
            line = f"team: stopped {count} teammate{'s' if count != 1 else ''} as the run ended"
            if left:
                names = ", ".join(seat.name for seat in left)
                line += (
                    f"; {names} did not stop within {bound:g}s (a request or a "
                    "command still running) and end with this program"
                )
            self.console.info(line)


def fitting(text: str) -> str:
    """`text` as one message carries it: cut, and saying so, when its envelope would pass
    `MAX_TEXT` characters."""
    if len(escape(text)) <= MAX_TEXT:
        return text
    note = f"\n… (cut: the answer had {len(text):,} characters; a message holds {MAX_TEXT:,})"
    cut = text
    while len(escape(cut)) + len(note) > MAX_TEXT:
        cut = cut[: len(cut) - max(1, (len(escape(cut)) + len(note) - MAX_TEXT) // 5)]
    return cut + note


def summary_of(text: str) -> str:
    """A few words of `text`: its first line, cut to `SUMMARY_CHARS`."""
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else "(empty)"
    limit = min(SUMMARY_CHARS, MAX_SUMMARY)
    return first if len(first) <= limit else first[: limit - 1] + "…"


# --- the features ----------------------------------------------------------------------------


@dataclass
class TeammateMail(Feature):
    """A teammate's side: stop at a request boundary once the team stops, read its mail
    before each request, and go idle after each answer until mail comes."""

    team: Team
    seat: Seat

    def before_request(self, run: Run) -> None:
        if self.team.stopping.is_set():
            raise TeamStopped(f"{self.seat.name} was stopped: the run ended")
        self.team.read_mail(self.seat.name, self.seat.inbox)

    def on_stop(self, run: Run, answer: str) -> str:
        self.team.answered(self.seat, answer)
        self.team.wait_for_mail(self.seat)  # chapter 13's DeliverEvents, next, sends it
        return answer


@dataclass
class MailCount(Feature):
    """After chapter 13's DeliverEvents: count as delivered, in the mailbox file, what the
    inbox has put into the history. At every moment after a delivery, and at the end."""

    team: Team
    name: str
    inbox: Inbox

    def before_request(self, run: Run) -> None:
        self.team.count_delivered(self.name, self.inbox)

    def on_stop(self, run: Run, answer: str) -> str:
        self.team.count_delivered(self.name, self.inbox)
        return answer

    def on_end(self, run: Run, error: BaseException | None) -> None:
        self.team.count_delivered(self.name, self.inbox)


Waiting = Callable[[Run, float], AbstractContextManager[object]]


def waiting_for_team(run: Run, seconds: float) -> AbstractContextManager[object]:
    """What the console shows while the lead waits: its spinner, with the bound."""
    return run.agent.console.waiting(
        f"waiting for teammates' messages (at most {waited(math.ceil(seconds))})"
    )


@dataclass
class LeadMail(Feature):
    """The lead's side: its mail before each request, and the end rule after each answer.

    Before chapter 13's DeliverEvents, which sends what this posts to the inbox.
    """

    team: Team
    team_wait: float = DEFAULT_TEAM_WAIT
    waiting: Waiting = waiting_for_team
    _looked: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if not (0 <= self.team_wait <= MAX_TEAM_WAIT):
            raise ValueError(f"team_wait must be 0 to {MAX_TEAM_WAIT:g} seconds: {self.team_wait}")

    def before_request(self, run: Run) -> None:
        if self.team.fatal is not None:
            raise self.team.fatal
        if not self._looked:  # a resumed session may hold mail its last run did not count
            self._looked = True
            self.team.already_read(LEAD, self.team.lead_inbox, run.history)
        self.team.read_mail(LEAD, self.team.lead_inbox)

    def on_stop(self, run: Run, answer: str) -> str:
        """Let the run end only when no teammate works and no message waits for the lead."""
        if self.team.fatal is not None:
            raise self.team.fatal
        console = run.agent.console
        deadline = time.monotonic() + self.team_wait
        shown = False
        with ExitStack() as wait:
            while True:
                seen = self.team.generation()
                working = self.team.working()  # first: an answer is sent before going idle
                self.team.read_mail(LEAD, self.team.lead_inbox)
                if self.team.fatal is not None:
                    raise self.team.fatal
                if self.team.lead_inbox.pending(EVENTS_PER_MESSAGE) or not working:
                    return answer  # a message: DeliverEvents sends the lead back to work
                if run.turn >= run.agent.max_turns:
                    console.notice(
                        f"team: the lead has made its {run.agent.max_turns} requests "
                        f"(--max-turns): it does not wait for {_names(working)}"
                    )
                    return answer
                left = deadline - time.monotonic()
                if left <= 0:
                    waited_for = (
                        f"no message came in {self.team_wait:g}s (--team-wait)"
                        if self.team_wait
                        else "the lead does not wait (--team-wait 0)"
                    )
                    console.notice(
                        f"team: {waited_for}; the run ends with {_names(working)} still working"
                    )
                    return answer
                if not shown:  # once, and only if the lead has to wait
                    shown = True
                    console.info(f"team: the lead waits for {_names(working)}")
                    wait.enter_context(self.waiting(run, left))
                self.team.wait_for_change(seen, min(left, self.team.mail_poll))


@dataclass
class EndTeam(Feature):
    """When the run ends, however: every teammate stops, and is marked stopped."""

    team: Callable[[], Team | None]  # None: no teammate was ever started

    def on_end(self, run: Run, error: BaseException | None) -> None:
        team = self.team()
        if team is not None:
            interrupted = isinstance(error, KeyboardInterrupt)
            team.stop_all(STOP_WAIT_INTERRUPTED if interrupted else None)


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "nobody"

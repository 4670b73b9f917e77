"""The inbox: what happens outside the loop reaches the model exactly once, just before a request.

Until now everything the model reads came from the loop itself: the prompt,
its own replies, the results of its calls. A command running in the
background ends while the model does something else, on another thread; so
will, later, any source of news from outside the loop (a scheduled prompt, a
teammate's message, a server's notice). Each posts an `Event` to the `Inbox`;
none of them touches the history. The history is the loop's alone, and there
is one safe place to add to it from outside: `before_request`, between two
requests, when no tool call is open and nothing is being sent.

    a source (any thread)        Inbox                    DeliverEvents (the loop's thread)
    post(event) ───────────────► pending, in order ─────► before_request: ONE message
    expect(k) / done(k)          the keys delivered  ◄─── delivered(events), after run.add
                                 wait(timeout)       ◄─── on_stop: the model answered while
                                                          a source may still post: wait

Exactly once, in three rules:

- An event is known by `(source, key)`. A key already pending or delivered
  is ignored when posted again, so a source that posts twice, or posts after
  the delivery, cannot make the model read it twice.
- An event is marked delivered only after `run.add` has returned: every
  feature has heard of the message by then, so the session log has written
  it. A delivery that fails half-way leaves the event pending, and it goes
  with the next request: marking first and writing second is how a message
  gets lost (Claude Code lost notifications that way).
- A resumed session starts its inbox with the keys its history already
  holds (`Inbox(delivered_keys=delivered_in(history, events))`), so what the
  model read before the pause is not read again.

Where the message goes is a setting of the provider, not a branch in the
loop: `Delivery.USER_MESSAGE` adds a `user` message; `Delivery.APPEND_TO_TOOL`
appends the events to the last `tool` message when the history ends with one,
for providers (Mistral is one) that reject a `user` message right after a
`tool` message.

Bounds: one event's text is at most `EVENT_CHARS` characters (a task
notification's summary is cut to `SUMMARY_CHARS`); one message carries at most
`EVENTS_PER_MESSAGE` events, the rest go with the next request, in order; when
the model answers while a source may still post, the run waits at most
`background_wait` seconds (`DEFAULT_BACKGROUND_WAIT`, never more than
`MAX_BACKGROUND_WAIT`; 0: never waits) for each answer, and each wait needs an
event to go on, so the number of extra requests is bounded by the events
posted and by `max_turns`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath
from xml.sax.saxutils import escape

from shared.agent import Feature, KeepGoing, Run
from shared.errors import AgentLimitError
from shared.messages import Message, ToolMessage, UserMessage

JOB_SOURCE = "job"  # the source a background job posts as
EVENT_CHARS = 8_000  # the most one event's text may hold
SUMMARY_CHARS = 1_000  # of a task notification's summary; longer is cut, ending in "…"
EVENTS_PER_MESSAGE = 20  # delivered in one message; more wait for the next request
DEFAULT_BACKGROUND_WAIT = 600.0  # seconds the run waits, when the model answers, for an event
MAX_BACKGROUND_WAIT = 3_600.0  # the longest wait a run may be given

EventKey = tuple[str, str]  # (source, key): what makes an event the same event


@dataclass(frozen=True)
class Event:
    """Something that happened outside the loop, as the model will read it.

    `key` is unique within its `source` ("bg1" for job bg1): posting the same
    key twice is one event. `text` is the whole envelope the model reads; the
    inbox never looks inside it, so any source can say anything in its own form.
    """

    source: str
    key: str
    text: str

    def __post_init__(self) -> None:
        if not self.source or not self.key:
            raise ValueError(f"an event needs a source and a key: {self.source!r}, {self.key!r}")
        if not self.text.strip():
            raise ValueError(f"event {self.source} {self.key} has no text")
        if len(self.text) > EVENT_CHARS:
            raise ValueError(
                f"event {self.source} {self.key} has {len(self.text)} characters; "
                f"at most {EVENT_CHARS}"
            )

    @property
    def ident(self) -> EventKey:
        return (self.source, self.key)


def task_notification(
    task_id: str,
    status: str,
    summary: str,
    *,
    exit_code: int | None = None,
    output_file: str | PurePath | None = None,
    source: str = JOB_SOURCE,
) -> Event:
    """Claude Code's envelope for a task that ended, one line, its values XML-escaped:

    <task-notification><task-id>bg1</task-id><status>completed</status><exit-code>0</exit-code>
    <output-file>.tutorial/jobs/bg1.log</output-file><summary>...</summary></task-notification>

    (without the line break). The exit code and the output file are left out when
    there are none; a path is written with forward slashes on every system.
    """
    fields = [("task-id", task_id), ("status", status)]
    if exit_code is not None:
        fields.append(("exit-code", str(exit_code)))
    if output_file is not None:
        path = output_file.as_posix() if isinstance(output_file, PurePath) else output_file
        fields.append(("output-file", path))
    fields.append(("summary", _cut(summary, SUMMARY_CHARS)))
    body = "".join(f"<{tag}>{escape(value)}</{tag}>" for tag, value in fields)
    return Event(source, task_id, f"<task-notification>{body}</task-notification>")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Inbox:
    """Events from any thread, pending until the loop says they are in the history.

    Every method may be called from any thread: one lock guards the state, and
    its condition wakes a waiter when an event is posted or a source is done.
    """

    def __init__(self, delivered_keys: Iterable[EventKey] = ()) -> None:
        """`delivered_keys`: what a resumed session's history already holds."""
        self._changed = threading.Condition()
        self._pending: dict[EventKey, Event] = {}  # in posting order
        self._delivered: set[EventKey] = set(delivered_keys)
        self._expected: set[str] = set()  # sources that may still post

    def post(self, event: Event) -> bool:
        """Add `event` unless its key is pending or delivered already; True if it was added."""
        with self._changed:
            if event.ident in self._pending or event.ident in self._delivered:
                return False
            self._pending[event.ident] = event
            self._changed.notify_all()
            return True

    def pending(self, limit: int | None = None) -> list[Event]:
        """The events not delivered yet, oldest first (at most `limit`). Marks nothing."""
        with self._changed:
            events = list(self._pending.values())
        return events if limit is None else events[:limit]

    def delivered(self, events: Iterable[Event]) -> None:
        """These events are in the history: never pending, never posted again."""
        with self._changed:
            for event in events:
                self._pending.pop(event.ident, None)
                self._delivered.add(event.ident)

    @property
    def delivered_keys(self) -> frozenset[EventKey]:
        with self._changed:
            return frozenset(self._delivered)

    def expect(self, source_key: str) -> None:
        """A source (a running job: "job:bg1") may still post; `done` says it will not."""
        with self._changed:
            self._expected.add(source_key)

    def done(self, source_key: str) -> None:
        """The source will post nothing more. Post its last event first, then say done."""
        with self._changed:
            self._expected.discard(source_key)
            self._changed.notify_all()

    def expecting(self) -> bool:
        """Whether some source may still post."""
        with self._changed:
            return bool(self._expected)

    def wait(self, timeout: float) -> bool:
        """Block until an event is pending, no source may post any more, or `timeout`
        seconds pass; True if an event is pending. Woken by the condition, never by polling.
        """
        if not (math.isfinite(timeout) and timeout >= 0):
            raise ValueError(f"timeout must be a number of seconds, 0 or more: {timeout}")
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._pending and self._expected:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return bool(self._pending)


def delivered_in(history: Sequence[Message], events: Iterable[Event]) -> frozenset[EventKey]:
    """The keys of those `events` whose text the history already holds, in a user or a
    tool message: what a resumed session must not deliver again, whichever way it went."""
    read = [m.content for m in history if isinstance(m, UserMessage | ToolMessage)]
    return frozenset(e.ident for e in events if any(e.text in content for content in read))


class Delivery(Enum):
    """Where the events go in the history: a provider's setting, not a branch in the loop."""

    USER_MESSAGE = "user_message"  # one `user` message
    APPEND_TO_TOOL = "append_to_tool"  # at the end of the last `tool` message, if it is last


Waiting = Callable[[Run, float], AbstractContextManager[object]]


def spinner_while_waiting(run: Run, seconds: float) -> AbstractContextManager[object]:
    """What the console shows while the run waits for an event: its spinner, with the bound."""
    return run.agent.console.waiting(f"waiting for a background event (at most {seconds:g}s)")


@dataclass
class _Sent:
    """The message a refused stop sent back to the loop, and the events it carries."""

    message: UserMessage
    events: tuple[Event, ...]
    entered: bool = False  # heard in on_message: the loop is adding it


@dataclass
class DeliverEvents(Feature):
    """The inbox's events into the history, once each, before a request; and a stop that
    waits for them while a source may still post.

    before_request  the pending events (at most `EVENTS_PER_MESSAGE`) as one message,
                    placed as `delivery` says, then marked delivered
    on_stop         events pending: the loop goes on with them. None, but a source may
                    still post: wait up to `background_wait` seconds inside `waiting`
                    (the console's spinner by default) and go on if one came; else the
                    run ends with its answer
    """

    inbox: Inbox
    delivery: Delivery = Delivery.USER_MESSAGE
    background_wait: float = DEFAULT_BACKGROUND_WAIT
    waiting: Waiting = spinner_while_waiting
    _sent: _Sent | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not (0 <= self.background_wait <= MAX_BACKGROUND_WAIT):
            raise ValueError(
                f"background_wait must be 0 to {MAX_BACKGROUND_WAIT:g} seconds: "
                f"{self.background_wait}"
            )

    def before_request(self, run: Run) -> None:
        self._settle()  # a refused stop's message was added: its events are delivered
        events = self.inbox.pending(EVENTS_PER_MESSAGE)
        if not events:
            return
        text = envelopes(events)
        last = run.history[-1] if run.history else None
        if self.delivery is Delivery.APPEND_TO_TOOL and isinstance(last, ToolMessage):
            # The result leaves and comes back longer: it enters through `add`, so every
            # feature hears of it (the session log writes it) before it is marked.
            run.replace_history(run.history[:-1])
            run.add(
                ToolMessage(tool_call_id=last.tool_call_id, content=f"{last.content}\n\n{text}")
            )
        else:
            run.add(UserMessage(content=text))
        self.inbox.delivered(events)  # only now: in the history, and in the log
        run.agent.console.info(f"inbox: {_named(events)} delivered to the model")

    def on_message(self, run: Run, message: Message) -> None:
        if self._sent is not None and message is self._sent.message:
            self._sent.entered = True

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        events = self.inbox.pending(EVENTS_PER_MESSAGE)
        if not events and self.background_wait > 0 and self.inbox.expecting():
            with self.waiting(run, self.background_wait):
                self.inbox.wait(self.background_wait)
            events = self.inbox.pending(EVENTS_PER_MESSAGE)
        if not events:
            return answer
        # After an answer the last message is the assistant's: a user message suits every
        # provider. The loop adds it; the next before_request (or on_end) marks it.
        message = UserMessage(content=envelopes(events))
        self._sent = _Sent(message, tuple(events))
        run.agent.console.info(f"inbox: {_named(events)} came after the answer; asking again")
        return KeepGoing(message)

    def on_end(self, run: Run, error: BaseException | None) -> None:
        # Out of turns right after a refused stop: the loop added its message, whole. Any
        # other error may have come from that very `add` (a log that failed, Ctrl-C): when
        # unsure, leave it pending, since marking early is how an event gets lost.
        if error is None or isinstance(error, AgentLimitError):
            self._settle()
        self._sent = None

    def _settle(self) -> None:
        sent, self._sent = self._sent, None
        if sent is not None and sent.entered:
            self.inbox.delivered(sent.events)


def envelopes(events: Sequence[Event]) -> str:
    """What the model reads: each event's text, one after the other, a line each."""
    return "\n".join(event.text for event in events)


def _named(events: Sequence[Event]) -> str:
    return ", ".join(f"{event.source} {event.key}" for event in events)

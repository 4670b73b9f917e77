"""Mailboxes: a teammate's messages, one line each, appended and never rewritten.

    .tutorial/teams/<team>/inboxes/      the team (its name: 1-64 of A-Z a-z 0-9 _ -)
        alice.jsonl          alice's mailbox, oldest first, one message a line (UTF-8):
                                 {"from": "lead", "text": "...", "summary": "...",
                                  "timestamp": "2026-05-01T09:30:00.123Z"}
                             (`summary` left out when there is none)
        alice.delivered      how many of those lines are already in alice's history (decimal)
        alice.delivered.lock taken while that count moves (`filelock`)

A member's name is 1-32 of a-z 0-9 -; `lead` is the lead's mailbox, and
`harness` is who speaks for the harness (neither is a teammate's name).

Why append-only. Both references lost messages by changing the mailbox when
they read it. learn-claude-code reads `alice.jsonl` and then empties it: a line
appended between the read and the emptying is gone. Claude Code keeps a JSON
array and sets `"read": true` on what it takes, before the message is in the
model's history: a crash or an abort in between, and the message counts as read
but was never seen. Here nothing is ever rewritten: the mailbox only grows, and
the count beside it says how far its owner has got.

Sending takes no lock. `send` opens the mailbox with O_APPEND and writes the
whole line, newline included, with ONE `os.write`. On Linux and macOS, on a
local file system, finding the end and writing there are one step (POSIX: "no
intervening file modification operation shall occur between changing the file
offset and the write operation"), and the kernel holds the file's lock while it
copies the line in, so lines from any number of processes never overlap or
interleave (the tests check it: two processes, 1,000 lines). Not on NFS, where
the client only imitates O_APPEND: keep a team on a local disk. On Windows,
Python's O_APPEND is the C runtime's, which seeks to the end and then writes,
two steps: two senders can write at the same offset, one line over the other.
There, and only there, a send takes `<name>.jsonl.lock`.

Reading takes only complete lines. A reader may look while a line is being
written and see part of it; a line counts once it ends in "\\n", so a partial
last line is left for the next read. A complete line that cannot be read (not
JSON, not a message, too long) is returned once, in its place, as a message from
`harness` that says so: it is delivered and counted like any other, so it never
blocks the lines after it, and the model learns that a message may be lost.

Delivery, in this order (the loop's side is chapters/ch13/inbox.py):

    unread(name)            the lines after the count, each with its index
    inbox.post(mail_event)  one event per line: source "mail:<name>", key the line's index
    ...                     the loop adds the envelopes to the history (and its log)
    mark_delivered(name, i + 1)   only now: every line before index i+1 is in the history

Marking comes last because marking first is exactly the references' bug. Stopped
between the history and the mark, the next `unread` returns the same lines
again; chapter 13's inbox knows their keys (or, after a restart, finds their
envelopes in the history: `delivered_in`) and delivers none of them twice. The
count never moves backwards, and never past the lines there are.

Bounds: a message's text at most `MAX_TEXT` characters as its envelope carries
it (escaped; see `MAX_TEXT`), its summary `MAX_SUMMARY`; a line at most
`MAX_LINE_BYTES` (every valid message fits); a mailbox takes no message once it
holds `MAX_MAILBOX_BYTES`, and at most `READ_LIMIT` bytes of it are read.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from chapters.ch02.text_files import atomic_write, read_open_file
from chapters.ch03.harness_files import harness_folder, open_harness_file
from chapters.ch13.inbox import Event
from shared.errors import TutorialError

TEAMS_FOLDER = Path(".tutorial") / "teams"  # below the workspace
INBOXES = "inboxes"  # a team's folder of mailboxes
MEMBER_NAME = re.compile(r"[a-z0-9-]{1,32}")  # a mailbox's name: a teammate's, or LEAD
TEAM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # as chapter 12's task lists: it names a folder
LEAD = "lead"  # the lead's mailbox; never a teammate's name
HARNESS = "harness"  # the sender of what the harness says; never a teammate's name
RESERVED = (LEAD, HARNESS)
MAILBOX_SUFFIX = ".jsonl"
DELIVERED_SUFFIX = ".delivered"
LOCK_SUFFIX = ".lock"
LOCK_TIMEOUT = 10.0  # seconds a count's move (or, on Windows, a send) waits for another's
EVENT_SOURCE = "mail"  # a mailbox's events come from "mail:<name>"
MAX_SUMMARY = 200  # characters: a preview, a few words
# Characters of the text as the envelope carries it: escaped, & as &amp; and < > as &lt; &gt;,
# so that what a model reads is bounded whatever the text holds. The largest envelope: the
# tags and a 32-character sender (95), a summary of 200 characters that each become &quot;
# (1,200), and this: 7,295 characters, within chapter 13's EVENT_CHARS (8,000) with 705 to spare.
MAX_TEXT = 6_000
# Of a line in a mailbox, as read. A message at every bound, every character of it written as
# a 6-byte \u escape, is under 38 KB: every message `send` takes fits.
MAX_LINE_BYTES = 64 * 1024
MAX_MAILBOX_BYTES = 8 * 1024 * 1024  # a send is refused once its line would pass this
# Of a mailbox, read: a sender checks the size and then writes, so senders racing at the bound
# can pass it by a line each; twice the bound is room for 128 such lines of the largest size.
READ_LIMIT = 2 * MAX_MAILBOX_BYTES
MAX_COUNT_BYTES = 64  # a .delivered file: a number
MAX_REASON = 300  # characters of why a line could not be read, in the harness's message
_COUNT = re.compile(r"[0-9]{1,18}")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_KEYS = ("from", "text", "summary", "timestamp")
_CHUNK = 1024 * 1024  # bytes read at a time when counting the lines before a new one


class MailboxError(TutorialError):
    """A mailbox, or its count, cannot be used; the message names the file and what to do."""


class MailboxFull(MailboxError):
    """The mailbox holds `MAX_MAILBOX_BYTES` already: the message was not sent."""


def team_name_problem(team: str) -> str | None:
    """Why `team` cannot name a team (it is a folder's name); None if it can."""
    if TEAM_NAME.fullmatch(team):
        return None
    return (
        f"team name {team!r} must be 1 to 64 characters, each a letter, a digit, - or _ "
        "(it names a folder)"
    )


def member_name_problem(name: str) -> str | None:
    """Why `name` cannot be a teammate's name (it names a mailbox file); None if it can."""
    if not MEMBER_NAME.fullmatch(name):
        return (
            f"teammate name {name!r} must be 1 to 32 characters, each a lowercase letter, "
            "a digit or - (it names a mailbox file)"
        )
    if name in RESERVED:
        return f"the name {name!r} is reserved ({LEAD} is the lead, {HARNESS} the harness)"
    return None


def mailbox_name_problem(name: str) -> str | None:
    """Why there can be no mailbox `name`; None for the lead's and any teammate name's."""
    if name == LEAD:
        return None
    problem = member_name_problem(name)
    return f"no mailbox can be named {name!r}: {problem}" if problem else None


def now_timestamp() -> str:
    """This moment as a message's timestamp: ISO 8601, UTC, milliseconds, `Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class MailMessage:
    """One message, exactly what its line holds. A message that breaks a bound cannot be made:
    every `MailMessage` fits a line and an event."""

    sender: str  # `from` in the line: a teammate's name, LEAD or HARNESS
    text: str
    summary: str | None  # a preview of a few words; left out of the line when None
    timestamp: str  # 2026-05-01T09:30:00.123Z

    def __post_init__(self) -> None:
        problem = _message_problem(self)
        if problem:
            raise ValueError(problem)

    @classmethod
    def new(cls, sender: str, text: str, summary: str | None = None) -> MailMessage:
        """A message sent now."""
        return cls(sender, text, summary, now_timestamp())

    def line(self) -> bytes:
        """The mailbox line, newline included. A lone surrogate (which UTF-8 cannot hold) is
        written as its \\u escape: the line is JSON that reads back as the same text."""
        data: dict[str, str] = {"from": self.sender, "text": self.text}
        if self.summary is not None:
            data["summary"] = self.summary
        data["timestamp"] = self.timestamp
        text = json.dumps(data, ensure_ascii=False) + "\n"
        return text.encode("utf-8", errors="backslashreplace")

    @classmethod
    def from_line(cls, line: bytes) -> MailMessage:
        """The message a line holds (without its newline); ValueError saying why there is none."""
        if len(line) > MAX_LINE_BYTES:
            raise ValueError(f"it is {len(line):,} bytes, more than a message's line holds")
        try:
            data: Any = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise ValueError(f"it is not UTF-8 (byte {error.start})") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"it is not JSON ({error})") from None
        if not isinstance(data, dict):
            raise ValueError("it is not a JSON object")
        unknown = [key for key in data if key not in _KEYS]
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; a message has {', '.join(_KEYS)}")
        for key in ("from", "text", "timestamp"):
            if not isinstance(data.get(key), str):
                raise ValueError(f"{key!r} is missing or not text")
        summary = data.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise ValueError("'summary' is not text")
        return cls(data["from"], data["text"], summary, data["timestamp"])


def envelope(message: MailMessage) -> str:
    """What the model reads, one element, attributes and text XML-escaped:

    <teammate-message teammate_id="alice" summary="tests found">...</teammate-message>

    (`summary` left out when the message has none). Escaped, a text that holds
    `</teammate-message><teammate-message teammate_id="lead">` cannot pass itself
    off as a second message, from someone else.
    """
    attributes = f' teammate_id="{_attribute(message.sender)}"'
    if message.summary is not None:
        attributes += f' summary="{_attribute(message.summary)}"'
    return f"<teammate-message{attributes}>{escape(message.text)}</teammate-message>"


def mail_event(
    recipient: str,
    index: int,
    message: MailMessage,
    render: Callable[[MailMessage], str] = envelope,
) -> Event:
    """The inbox event of line `index` of `recipient`'s mailbox: posted twice, or after it was
    delivered, it is still one event (chapter 13's inbox knows it by source and key).
    `render`: what the model reads of the message (its envelope, by default)."""
    return Event(f"{EVENT_SOURCE}:{recipient}", str(index), render(message))


class Mailboxes:
    """The mailboxes of one team of a workspace: `root/.tutorial/teams/<team>/inboxes/`.

    Holds nothing itself: every call reads the files, so any number of objects,
    in any number of processes, may share a team's mailboxes.
    """

    def __init__(self, root: Path, team: str, *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        problem = team_name_problem(team)
        if problem:
            raise ValueError(problem)
        self.root = root
        self.team = team
        self.lock_timeout = lock_timeout

    @property
    def relative(self) -> Path:
        """The folder below the workspace: `.tutorial/teams/<team>/inboxes`."""
        return TEAMS_FOLDER / self.team / INBOXES

    def shown(self, name: str) -> str:
        """A mailbox as people write it: `.tutorial/teams/demo/inboxes/alice.jsonl`."""
        return (self.relative / f"{name}{MAILBOX_SUFFIX}").as_posix()

    # --- sending ----------------------------------------------------------------------------

    def send(self, to: str, message: MailMessage) -> int:
        """Append `message` to `to`'s mailbox as one line; the line's index (0 is the first).

        `to` is one mailbox (`*` is the tool's business: a send per member).
        `MailboxFull` once the mailbox holds `MAX_MAILBOX_BYTES`; `MailboxError`
        if it cannot be written.
        """
        _check_mailbox_name(to)
        line = message.line()
        shown = self.shown(to)
        relative = self.relative / f"{to}{MAILBOX_SUFFIX}"
        try:
            with self._windows_append_lock(to):
                # Read and write: the same handle counts the lines before the one it wrote.
                descriptor = open_harness_file(
                    self.root, relative, os.O_RDWR | os.O_APPEND | os.O_CREAT
                )
                try:
                    return self._append(descriptor, line, shown)
                finally:
                    os.close(descriptor)
        except OSError as error:
            raise MailboxError(
                f"{shown} cannot be written ({error}); the message was not sent"
            ) from None

    def _append(self, descriptor: int, line: bytes, shown: str) -> int:
        size = os.fstat(descriptor).st_size
        if size + len(line) > MAX_MAILBOX_BYTES:
            raise MailboxFull(
                f"{shown} holds {size:,} bytes, as much as a mailbox may "
                f"({MAX_MAILBOX_BYTES:,}); the message was not sent. When no member of the "
                f"team runs, delete .tutorial/teams/{self.team}/{INBOXES}/, or use a new team"
            )
        written = append_whole(descriptor, line)
        if written != len(line):  # the piece is delivered as a line that cannot be read
            raise MailboxError(
                f"{shown}: only {written:,} of the line's {len(line):,} bytes were written "
                "(is the disk full?); the message was not sent"
            )
        start = os.lseek(descriptor, 0, os.SEEK_CUR) - len(line)  # O_APPEND: just after ours
        try:
            return _newlines_before(descriptor, start)
        except OSError as error:  # not "not sent": sending it again would make two
            raise MailboxError(
                f"{shown}: the message was sent, but its index could not be counted ({error})"
            ) from None

    @contextlib.contextmanager
    def _windows_append_lock(self, name: str) -> Iterator[None]:
        if os.name != "nt":  # O_APPEND is one step: see the module's docstring
            yield
            return
        from filelock import FileLock, Timeout

        folder = harness_folder(self.root, self.relative, create=True)
        lock = FileLock(
            folder / f"{name}{MAILBOX_SUFFIX}{LOCK_SUFFIX}",
            timeout=self.lock_timeout,
            fallback_to_soft=False,
        )
        try:
            lock.acquire()
        except Timeout:
            raise MailboxError(
                f"{self.shown(name)} is locked by another sender (waited "
                f"{self.lock_timeout:g} s); the message was not sent"
            ) from None
        try:
            yield
        finally:
            lock.release()

    # --- reading ----------------------------------------------------------------------------

    def unread(self, name: str, limit: int | None = None) -> list[tuple[int, MailMessage]]:
        """The complete lines after the count, oldest first (at most `limit`), each with its
        index. Marks nothing: call `mark_delivered` once they are in the history.

        A line that cannot be read comes as a message from `harness` saying so.
        `MailboxError` if the mailbox or its count cannot be used.
        """
        _check_mailbox_name(name)
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be 0 or more: {limit}")
        count = self._count(name)  # first: lines only grow, so the count is never past them
        lines = self._lines(name)
        self._check_count(name, count, len(lines))
        end = len(lines) if limit is None else min(len(lines), count + limit)
        return [(index, self._message(name, index, lines[index])) for index in range(count, end)]

    def undelivered(self, name: str) -> int:
        """How many complete lines of the mailbox are not delivered yet."""
        _check_mailbox_name(name)
        count = self._count(name)
        lines = self._lines(name)
        self._check_count(name, count, len(lines))
        return len(lines) - count

    def delivered(self, name: str) -> int:
        """The count: how many lines of the mailbox are in its owner's history."""
        _check_mailbox_name(name)
        return self._count(name)

    def mark_delivered(self, name: str, upto: int) -> None:
        """Every line before index `upto` is in the history: the count becomes `upto`.

        Written atomically, under `<name>.delivered.lock`; a count at or past `upto`
        already is left as it is (never moves backwards). ValueError if the mailbox
        holds fewer than `upto` complete lines.
        """
        _check_mailbox_name(name)
        if upto < 0:
            raise ValueError(f"upto must be 0 or more: {upto}")
        from filelock import FileLock, Timeout  # only a team's run needs it

        if upto <= self._count(name):
            return  # already counted: nothing to write, no lock to take
        shown = self._shown_count(name)
        try:
            folder = harness_folder(self.root, self.relative, create=True)
            with FileLock(
                folder / f"{name}{DELIVERED_SUFFIX}{LOCK_SUFFIX}",
                timeout=self.lock_timeout,
                fallback_to_soft=False,
            ):
                if upto <= self._count(name):  # read again under the lock
                    return
                lines = len(self._lines(name))
                if upto > lines:
                    raise ValueError(
                        f"cannot count {upto} lines of {self.shown(name)} as delivered: it "
                        f"holds {lines} complete lines"
                    )
                atomic_write(folder / f"{name}{DELIVERED_SUFFIX}", str(upto).encode("ascii"))
        except Timeout:
            raise MailboxError(
                f"{shown} is locked by another process (waited {self.lock_timeout:g} s); "
                "the count did not move: the same messages come again, and are not delivered twice"
            ) from None
        except OSError as error:
            raise MailboxError(f"{shown} cannot be written ({error})") from None

    # --- inside -----------------------------------------------------------------------------

    def _lines(self, name: str) -> list[bytes]:
        """The mailbox's complete lines, without their newlines (at most `READ_LIMIT` bytes)."""
        shown = self.shown(name)
        try:
            descriptor = open_harness_file(
                self.root, self.relative / f"{name}{MAILBOX_SUFFIX}", os.O_RDONLY
            )
            data = read_open_file(descriptor, READ_LIMIT)
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as error:  # ValueError: not a regular file
            raise MailboxError(f"{shown} cannot be read ({error})") from None
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits
        return complete.split(b"\n")[:-1]

    def _count(self, name: str) -> int:
        """The number in `<name>.delivered`; 0 when there is none yet."""
        shown = self._shown_count(name)
        try:
            descriptor = open_harness_file(
                self.root, self.relative / f"{name}{DELIVERED_SUFFIX}", os.O_RDONLY
            )
            data = read_open_file(descriptor, MAX_COUNT_BYTES + 1)
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as error:
            raise MailboxError(f"{shown} cannot be read ({error})") from None
        text = data.decode("ascii", errors="replace").strip()
        if len(data) > MAX_COUNT_BYTES or not _COUNT.fullmatch(text):
            raise MailboxError(
                f"{shown} is not a number: it counts the lines of {self.shown(name)} already "
                "delivered. Write that number in it, or delete it to deliver every line again; "
                "it is never overwritten"
            )
        return int(text)

    def _check_count(self, name: str, count: int, lines: int) -> None:
        """A count past the lines there are: the mailbox lost lines, and new ones would be
        skipped."""
        if count > lines:
            raise MailboxError(
                f"{self._shown_count(name)} says {count} lines were delivered, but "
                f"{self.shown(name)} holds {lines}: the mailbox was cut or replaced, and its next "
                f"messages would be skipped. Delete {name}{DELIVERED_SUFFIX} to deliver every "
                "line it holds (again)"
            )

    def _message(self, name: str, index: int, line: bytes) -> MailMessage:
        try:
            return MailMessage.from_line(line)
        except ValueError as error:
            why = str(error)
            if len(why) > MAX_REASON:
                why = why[: MAX_REASON - 1] + "…"
            return MailMessage.new(
                HARNESS,
                f"line {index + 1} of your mailbox {self.shown(name)} could not be read: {why}. "
                "A message may be lost: if you are waiting for one, ask its sender to send it "
                "again.",
            )

    def _shown_count(self, name: str) -> str:
        return (self.relative / f"{name}{DELIVERED_SUFFIX}").as_posix()


def append_whole(descriptor: int, data: bytes) -> int:
    """Append `data` (whole lines) with ONE `os.write`; the bytes written. When fewer went
    (the disk is full), the piece is ended with a newline: it becomes one line that cannot be
    read, and the next writer's line starts a line of its own."""
    written = os.write(descriptor, data)
    if written != len(data):
        with contextlib.suppress(OSError):
            os.write(descriptor, b"\n")
    return written


def _check_mailbox_name(name: str) -> None:
    problem = mailbox_name_problem(name)
    if problem:
        raise ValueError(problem)


def _newlines_before(descriptor: int, end: int) -> int:
    """How many newlines the first `end` bytes of the open file hold: the index of the line
    that starts there."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    count, left = 0, end
    while left > 0:
        chunk = os.read(descriptor, min(_CHUNK, left))
        if not chunk:
            break
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count


def _attribute(value: str) -> str:
    return escape(value, {'"': "&quot;"})


def _message_problem(message: MailMessage) -> str | None:
    if not MEMBER_NAME.fullmatch(message.sender):
        return (
            f"sender {message.sender!r} is not a member's name (1 to 32 of a-z 0-9 -), "
            f"{LEAD} or {HARNESS}"
        )
    if not message.text.strip():
        return "the message is empty; say something"
    carried = len(escape(message.text))
    if carried > MAX_TEXT:
        return (
            f"the message is {carried:,} characters as its envelope carries it (& < > are "
            f"escaped, as &amp; &lt; &gt;); at most {MAX_TEXT:,}"
        )
    if message.summary is not None and len(message.summary) > MAX_SUMMARY:
        return f"the summary is {len(message.summary):,} characters; at most {MAX_SUMMARY}"
    if not _TIMESTAMP.fullmatch(message.timestamp):
        return (
            f"timestamp {message.timestamp!r} is not ISO 8601 UTC with milliseconds "
            "(2026-05-01T09:30:00.123Z)"
        )
    try:
        datetime.fromisoformat(message.timestamp)
    except ValueError:
        return f"timestamp {message.timestamp!r} is not a moment that exists"
    return None

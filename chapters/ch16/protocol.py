"""Team protocols: a request with an id, one answer that matches it, and a log of both.

Chapter 15's messages are free text: a lead that writes "please stop" cannot
tell whether it was read, agreed to, or ignored, and a teammate cannot tell a
real request from a sentence that looks like one. Two things a lead must be able
to rely on need more: that a teammate stops when asked, and that a teammate
shows its plan and waits for a yes before it changes anything. Both are a
request and a response, tied by an id, with a status that moves once:

    pending ──► approved | rejected     answered by the one it was sent to
            └─► expired                 no answer within the timeout

The messages are Claude Code's, as JSON in a mail message's `text`
(chapters/ch15/mailbox.py), each with its `request_id`:

    shutdown_request       {"type", "request_id", "reason"}
    shutdown_response      {"type", "request_id", "approve", "reason"?}
    plan_approval_request  {"type", "request_id", "plan"}
    plan_approval_response {"type", "request_id", "approve", "feedback"?}

`parse_protocol` tells them from free text (a teammate may write JSON in a normal
message: anything that is not exactly one of these is free text), and
`readable` is what the model reads instead of raw JSON: what it is and how to
answer it.

The log, `.tutorial/teams/<team>/requests.jsonl`, is the truth about every
request; the messages only carry news of it. learn-claude-code keeps a file per
request and rewrites it on each answer, without looking at the request's status,
its type or who answers: a second answer overwrites the first. Here every request
and every change of its status is one line appended (UTF-8 JSON), nothing is ever
rewritten, and an answer that does not fit is logged and changes nothing:

    {"at": "2026-05-01T09:30:00.123Z", "request_id": "7f3a2c1e", "kind": "shutdown",
     "from": "lead", "to": "alice", "status": "pending", "reason": "..."}     a request
    {"at": ..., "request_id": ..., "status": "approved", "by": "alice", "reason": ...}
    {"at": ..., "request_id": ..., "status": "expired"}
    {"at": ..., "request_id": "<as given>", "ignored": "already approved",
     "type": "shutdown_response", "by": "bob"}                        an answer that changed nothing

(`kind` is "shutdown" with a `reason`, or "plan_approval" with a `plan`; an
answer's text is `reason` or `feedback` by the same kind, left out when there is
none.) A request's state is those lines folded, in order.

Why a lock. Answering is read, check, write: "is it still pending?", then
"approved". Two answers that both read "pending" before either wrote would both
win. So every change takes `requests.jsonl.lock` (`filelock`, an OS lock: gone
with its process), reads the file fresh, checks, and appends its line with ONE
`os.write` (O_APPEND); of two answers racing, in threads or in processes, the
second reads the first's line and is ignored. Reads take no lock: they use only
complete lines (a line counts once it ends in "\\n"), so a line being written is
read next time. A line that cannot be read is skipped and reported in
`warnings`, never rewritten: the log is not guessed, and one bad line does not
hide the ones after it.

Bounds. A reason or feedback at most `MAX_REASON` characters, a plan `MAX_PLAN`,
counted as the envelope carries them (`carried_length`: JSON escapes, then
& < > as &amp; &lt; &gt;), so every message fits chapter 15's MAX_TEXT whatever
its text holds; the log at most `MAX_LOG_BYTES` (a change that would pass it is
refused: `RequestLogFull`), and no more of it is read; a line at most
`MAX_LINE_BYTES`; at most `MAX_WARNINGS` warnings a read.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from xml.sax.saxutils import escape

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, ValidationError

from chapters.ch02.text_files import read_open_file
from chapters.ch03.harness_files import APPEND, harness_folder, open_harness_file
from chapters.ch15.mailbox import (
    MAX_TEXT,
    TEAMS_FOLDER,
    append_whole,
    mailbox_name_problem,
    team_name_problem,
)
from shared.errors import TutorialError

REQUESTS_FILE = "requests.jsonl"
LOCK_FILE = "requests.jsonl.lock"
LOCK_TIMEOUT = 10.0  # seconds a change waits for another's
MAX_LOCK_TIMEOUT = 600.0  # a wait is always bounded: no "wait forever" (-1 to filelock)
# Characters as the envelope carries them (`carried_length`). The largest message, a plan
# request at MAX_PLAN, is 4,066 such characters: within MAX_TEXT (6,000) with room to spare.
MAX_REASON = 2_000  # a reason (either way) or a plan's feedback
MAX_PLAN = 4_000
MAX_LOG_BYTES = 8 * 1024 * 1024  # the log: no change past it, and no more of it read
# Of a line. The largest line the log writes, a plan of MAX_PLAN lone surrogates each written
# as a 6-byte \u escape, is under 25 KB.
MAX_LINE_BYTES = 64 * 1024
MAX_WARNINGS = 20  # a read reports at most this many bad lines, then how many more
MAX_ID_TRIES = 32  # new ids drawn before `open` gives up (random ids collide about never)
MAX_GIVEN_ID = 64  # characters of an answer's unknown request_id kept in its ignored line
MAX_TIMEOUT = 86_400.0  # seconds: the longest timeout `expire` takes (a day)
REQUEST_ID = re.compile(r"[0-9a-f]{8}")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")


class RequestKind(StrEnum):
    SHUTDOWN = "shutdown"
    PLAN_APPROVAL = "plan_approval"


class RequestStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


BODY_KEY = {RequestKind.SHUTDOWN: "reason", RequestKind.PLAN_APPROVAL: "plan"}
ANSWER_KEY = {RequestKind.SHUTDOWN: "reason", RequestKind.PLAN_APPROVAL: "feedback"}
REQUEST_TYPE = {
    RequestKind.SHUTDOWN: "shutdown_request",
    RequestKind.PLAN_APPROVAL: "plan_approval_request",
}
RESPONSE_TYPE = {
    RequestKind.SHUTDOWN: "shutdown_response",
    RequestKind.PLAN_APPROVAL: "plan_approval_response",
}
_LIMITS = {"reason": MAX_REASON, "feedback": MAX_REASON, "plan": MAX_PLAN}


# --- the texts' bounds ------------------------------------------------------------------------


def carried_length(text: str) -> int:
    """Characters `text` takes inside a message's JSON as the envelope carries it: JSON's
    escapes first (\\" \\\\ \\n, a control character as \\u0001), then & < > as &amp; &lt;
    &gt;. The same count as chapter 15's MAX_TEXT, so bounds in it add up."""
    return len(escape(json.dumps(text, ensure_ascii=False))) - 2  # less the quotes


def field_problem(name: str, text: str) -> str | None:
    """Why `text` cannot be a message's `name` ("reason", "feedback" or "plan"); None if it
    can. A tool checks with this before it asks, and tells the model the fix."""
    limit = _LIMITS[name]
    if not text.strip():
        return f"the {name} is empty; say something (or leave an optional {name} out)"
    carried = carried_length(text)
    if carried > limit:
        return (
            f"the {name} is {carried:,} characters as a message carries it (quotes, \\ and "
            f"control characters are escaped for JSON, & < > as &amp; &lt; &gt;); at most "
            f"{limit:,}: shorten it"
        )
    return None


def _bounded(name: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        problem = field_problem(name, text)
        if problem:
            raise ValueError(problem)
        return text

    return check


RequestId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]
Reason = Annotated[str, AfterValidator(_bounded("reason"))]
Feedback = Annotated[str, AfterValidator(_bounded("feedback"))]
Plan = Annotated[str, AfterValidator(_bounded("plan"))]


# --- the messages -----------------------------------------------------------------------------


class _Message(BaseModel):
    """A protocol message: exactly its keys, each of its type (`approve` a real true or false)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def text(self) -> str:
        """The compact JSON a mail message's `text` holds; an absent optional key is left out.
        A lone surrogate stays as it is: the mailbox writes it as its \\u escape."""
        data = self.model_dump(exclude_none=True)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class ShutdownRequest(_Message):
    type: Literal["shutdown_request"] = "shutdown_request"
    request_id: RequestId
    reason: Reason


class ShutdownResponse(_Message):
    type: Literal["shutdown_response"] = "shutdown_response"
    request_id: RequestId
    approve: bool
    reason: Reason | None = None


class PlanApprovalRequest(_Message):
    type: Literal["plan_approval_request"] = "plan_approval_request"
    request_id: RequestId
    plan: Plan


class PlanApprovalResponse(_Message):
    type: Literal["plan_approval_response"] = "plan_approval_response"
    request_id: RequestId
    approve: bool
    feedback: Feedback | None = None


ProtocolMessage = ShutdownRequest | ShutdownResponse | PlanApprovalRequest | PlanApprovalResponse
MESSAGE_TYPES: Mapping[str, type[ProtocolMessage]] = {
    "shutdown_request": ShutdownRequest,
    "shutdown_response": ShutdownResponse,
    "plan_approval_request": PlanApprovalRequest,
    "plan_approval_response": PlanApprovalResponse,
}


def parse_protocol(text: str) -> ProtocolMessage | None:
    """The protocol message `text` is, or None: free text, or JSON that is not exactly one of
    the four (another shape, a key too many, a bound broken) is a normal message."""
    if len(text) > MAX_TEXT or not text.lstrip().startswith("{"):
        return None  # no protocol message is longer: every one fits a mail message
    try:
        data: Any = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
        return None
    if not isinstance(data, dict):
        return None
    kind = MESSAGE_TYPES.get(data["type"]) if isinstance(data.get("type"), str) else None
    if kind is None:
        return None
    try:
        return kind.model_validate(data)
    except ValidationError:
        return None


def readable(message: ProtocolMessage, sender: str) -> str:
    """What the model reads inside the <teammate-message> envelope instead of the JSON: what
    the message is, who sent it, and how to answer it (with the tool that does)."""
    rid = message.request_id
    if isinstance(message, ShutdownRequest):
        return (
            f"shutdown_request {rid} from {sender}: {_sentence(message.reason)} Answer with "
            f'shutdown_response {{"request_id": "{rid}", "approve": true}} to stop now, or '
            "approve false with a reason to go on."
        )
    if isinstance(message, PlanApprovalRequest):
        return (
            f"plan_approval_request {rid} from {sender}:\n{message.plan}\nAnswer with "
            f'review_plan {{"request_id": "{rid}", "approve": true|false, "feedback": "..."}}.'
        )
    if isinstance(message, ShutdownResponse):
        if message.approve:
            return f"shutdown_response {rid} from {sender}: approved; {sender} stops now." + (
                f" Reason: {_sentence(message.reason)}" if message.reason else ""
            )
        return (
            f"shutdown_response {rid} from {sender}: rejected; {sender} goes on. Reason: "
            f"{_sentence(message.reason) if message.reason else '(none given).'}"
        )
    if message.approve:
        return f"plan_approval_response {rid} from {sender}: approved; go ahead with the plan." + (
            f" Feedback: {_sentence(message.feedback)}" if message.feedback else ""
        )
    return (
        f"plan_approval_response {rid} from {sender}: rejected. Feedback: "
        f"{_sentence(message.feedback) if message.feedback else '(none given).'} Revise the "
        "plan and submit it again with submit_plan."
    )


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(_SENTENCE_ENDS) else text + "."


# --- the log ----------------------------------------------------------------------------------


class ProtocolError(TutorialError):
    """The request log cannot be read or changed; the message names the file and what to do."""


class RequestsBusy(ProtocolError):
    """Another process held the log's lock for `lock_timeout` seconds: nothing changed."""


class RequestLogFull(ProtocolError):
    """The log holds `MAX_LOG_BYTES` already: nothing changed."""


@dataclass(frozen=True)
class Request:
    """One request as its lines say, folded."""

    id: str
    kind: RequestKind
    sender: str  # `from`: who asked
    recipient: str  # `to`: the only one whose answer counts
    status: RequestStatus
    body: str  # the reason to stop, or the plan
    opened_at: datetime
    answered_at: datetime | None = None  # when it was approved, rejected or expired
    answer: str | None = None  # the answer's reason or feedback, if it gave one


@dataclass(frozen=True)
class Answered:
    """The answer counted: `request` as it is now, approved or rejected."""

    request: Request


@dataclass(frozen=True)
class Ignored:
    """The answer changed nothing (and was logged as such): `why`, in a few words."""

    why: str


def request_message(request: Request) -> ShutdownRequest | PlanApprovalRequest:
    """The message that carries `request` to its recipient."""
    if request.kind is RequestKind.SHUTDOWN:
        return ShutdownRequest(request_id=request.id, reason=request.body)
    return PlanApprovalRequest(request_id=request.id, plan=request.body)


def now() -> datetime:
    """The default clock: this moment, aware, in UTC."""
    return datetime.now(UTC)


def random_id() -> str:
    """The default id: 8 random hex digits (4 billion of them: a draw repeats about never)."""
    return secrets.token_hex(4)


@dataclass
class _Read:
    requests: dict[str, Request]  # in the order opened
    warnings: list[str]
    ends_whole: bool  # the file is empty or ends in "\n"


class RequestLog:
    """The requests of one team of a workspace: `root/.tutorial/teams/<team>/requests.jsonl`.

    Holds nothing but `warnings` (those of its last read): every call reads the
    file, so any number of objects, in any number of processes, share a team's
    requests. `clock` says when (an aware datetime); `new_id` draws an id (8 hex
    digits): both given by tests, random and now by default.
    """

    def __init__(
        self,
        root: Path,
        team: str,
        *,
        clock: Callable[[], datetime] = now,
        new_id: Callable[[], str] = random_id,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        problem = team_name_problem(team)
        if problem:
            raise ValueError(problem)
        if not 0 <= lock_timeout <= MAX_LOCK_TIMEOUT:
            raise ValueError(f"lock_timeout must be 0 to {MAX_LOCK_TIMEOUT:g} s: {lock_timeout}")
        self.root = root
        self.team = team
        self.clock = clock
        self.new_id = new_id
        self.lock_timeout = lock_timeout
        self.warnings: list[str] = []

    @property
    def relative(self) -> Path:
        """The file below the workspace: `.tutorial/teams/<team>/requests.jsonl`."""
        return TEAMS_FOLDER / self.team / REQUESTS_FILE

    @property
    def shown(self) -> str:
        return self.relative.as_posix()

    # --- reading ----------------------------------------------------------------------------

    def requests(self) -> list[Request]:
        """Every request, in the order opened, as its lines say. Takes no lock."""
        return list(self._read().requests.values())

    def pending(self) -> list[Request]:
        """The requests still waiting for an answer: what a listing shows as open."""
        return [each for each in self.requests() if each.status is RequestStatus.PENDING]

    def get(self, request_id: str) -> Request | None:
        """The request with that id as it is now; None if no line opened it."""
        return self._read().requests.get(request_id)

    # --- changing ---------------------------------------------------------------------------

    def open(self, kind: RequestKind | str, sender: str, recipient: str, body: str) -> Request:
        """A new pending request from `sender` to `recipient`, its id unique in the log.

        `body` is the reason to stop (shutdown) or the plan (plan_approval). ValueError
        for what can never be a request; `RequestsBusy`, `RequestLogFull`, `ProtocolError`
        if the log cannot be changed.
        """
        kind = _kind(kind)
        problem = (
            mailbox_name_problem(sender)
            or mailbox_name_problem(recipient)
            or (f"{sender} cannot send a request to itself" if sender == recipient else None)
            or field_problem(BODY_KEY[kind], body)
        )
        if problem:
            raise ValueError(problem)
        with self._locked():
            state = self._read()
            request_id = self._unused_id(state.requests)
            request = Request(
                request_id, kind, sender, recipient, RequestStatus.PENDING, body, self._now()
            )
            self._append(
                state,
                [
                    {
                        "at": _timestamp(request.opened_at),
                        "request_id": request_id,
                        "kind": kind.value,
                        "from": sender,
                        "to": recipient,
                        "status": RequestStatus.PENDING.value,
                        BODY_KEY[kind]: body,
                    }
                ],
            )
            return request

    def answer(
        self,
        request_id: str,
        responder: str,
        response_type: str,
        approve: bool,
        text: str | None = None,
    ) -> Answered | Ignored:
        """Approve or reject a pending request: `Answered` only when the id is known, the
        request is still pending, `response_type` is its kind's and `responder` is its
        recipient. Otherwise an ignored line is appended and `Ignored(why)` returned;
        nothing else changes.

        `text` is the answer's reason (shutdown) or feedback (plan_approval). ValueError
        for arguments that can never be an answer (a name that is no mailbox's, a type
        that is no response's, a text past its bound).
        """
        problem = mailbox_name_problem(responder)
        if not problem and response_type not in RESPONSE_TYPE.values():
            known = " or ".join(RESPONSE_TYPE.values())
            problem = f"response type {response_type!r} is not {known}"
        if not problem and text is not None:
            is_plan = response_type == RESPONSE_TYPE[RequestKind.PLAN_APPROVAL]
            problem = field_problem("feedback" if is_plan else "reason", text)
        if problem:
            raise ValueError(problem)
        with self._locked():
            state = self._read()
            request = state.requests.get(request_id)
            if request is None:
                return self._ignore(
                    state, request_id, "unknown request_id", responder, response_type
                )
            why = _why_ignored(request, responder, response_type)
            if why:
                return self._ignore(state, request_id, why, responder, response_type)
            status = RequestStatus.APPROVED if approve else RequestStatus.REJECTED
            moment = self._now()
            line = {
                "at": _timestamp(moment),
                "request_id": request.id,
                "status": status.value,
                "by": responder,
            }
            if text is not None:
                line[ANSWER_KEY[request.kind]] = text
            self._append(state, [line])
            return Answered(replace(request, status=status, answered_at=moment, answer=text))

    def expire(self, timeout_seconds: float) -> list[Request]:
        """Every pending request opened more than `timeout_seconds` ago becomes expired (a
        line each, in one write); those, expired, so the caller can tell who asked."""
        if not (math.isfinite(timeout_seconds) and 0 < timeout_seconds <= MAX_TIMEOUT):
            raise ValueError(
                f"timeout_seconds must be more than 0 and at most {MAX_TIMEOUT:,.0f}: "
                f"{timeout_seconds}"
            )
        with self._locked():
            state = self._read()
            moment = self._now()
            limit = timedelta(seconds=timeout_seconds)
            expired = [
                replace(each, status=RequestStatus.EXPIRED, answered_at=moment)
                for each in state.requests.values()
                if each.status is RequestStatus.PENDING and moment - each.opened_at > limit
            ]
            if expired:
                at = _timestamp(moment)
                self._append(
                    state,
                    [
                        {"at": at, "request_id": each.id, "status": RequestStatus.EXPIRED.value}
                        for each in expired
                    ],
                )
            return expired

    # --- inside -----------------------------------------------------------------------------

    def _now(self) -> datetime:
        """The clock's moment in UTC, to the millisecond: as a line writes it and reads back."""
        moment = self.clock()
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"the clock said {moment}, with no time zone; give an aware time")
        return moment.astimezone(UTC).replace(microsecond=moment.microsecond // 1000 * 1000)

    def _ignore(
        self, state: _Read, given: str, why: str, responder: str, response_type: str
    ) -> Ignored:
        """Log an answer that changes nothing: the id as given (cut to `MAX_GIVEN_ID`)."""
        line = {
            "at": _timestamp(self._now()),
            "request_id": _cut(given, MAX_GIVEN_ID),
            "ignored": why,
            "type": response_type,
            "by": responder,
        }
        self._append(state, [line])
        return Ignored(why)

    def _unused_id(self, requests: Mapping[str, Request]) -> str:
        for _ in range(MAX_ID_TRIES):
            drawn = self.new_id()
            if not REQUEST_ID.fullmatch(drawn):
                raise ValueError(f"new_id gave {drawn!r}; a request id is 8 of 0-9 a-f")
            if drawn not in requests:
                return drawn
        raise ProtocolError(
            f"{MAX_ID_TRIES} ids drawn for a new request were all taken in {self.shown}; "
            "nothing was changed. Is new_id random? (the default is)"
        )

    def _read(self) -> _Read:
        """The log folded; its bad lines in `warnings`. Complete lines only."""
        try:
            descriptor = open_harness_file(self.root, self.relative, os.O_RDONLY)
            data = read_open_file(descriptor, MAX_LOG_BYTES + 1)
        except FileNotFoundError:
            self.warnings = []
            return _Read({}, [], ends_whole=True)
        except (OSError, ValueError) as error:  # ValueError: not a regular file
            raise ProtocolError(f"{self.shown} cannot be read ({error})") from None
        warnings: list[str] = []
        if len(data) > MAX_LOG_BYTES:
            data = data[:MAX_LOG_BYTES]
            warnings.append(
                f"{self.shown} is more than {MAX_LOG_BYTES:,} bytes: only that much was read. "
                "When no member of the team runs, move it away to start a new log"
            )
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits
        requests: dict[str, Request] = {}
        bad = 0
        for number, line in enumerate(complete.split(b"\n")[:-1], start=1):
            why = _fold_line(requests, line)
            if why is None:
                continue
            bad += 1
            if bad <= MAX_WARNINGS:
                warnings.append(
                    f"{self.shown} line {number} was skipped: {why}. It is never rewritten; "
                    "if it held a request or an answer, that one is lost: ask or answer again"
                )
        if bad > MAX_WARNINGS:
            warnings.append(f"{self.shown}: {bad - MAX_WARNINGS:,} more lines were skipped")
        self.warnings = warnings
        return _Read(requests, warnings, ends_whole=not data or data.endswith(b"\n"))

    def _append(self, state: _Read, lines: list[dict[str, str]]) -> None:
        """Append `lines` with ONE write, under the lock the caller holds."""
        encoded = [
            (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
            for line in lines
        ]
        if any(len(each) > MAX_LINE_BYTES + 1 for each in encoded):  # not within the bounds
            raise ProtocolError(f"a line for {self.shown} would pass {MAX_LINE_BYTES:,} bytes")
        # A last line left without its newline (a hand edit): end it, so ours starts a line.
        data = (b"" if state.ends_whole else b"\n") + b"".join(encoded)
        try:
            descriptor = open_harness_file(self.root, self.relative, APPEND)
        except OSError as error:
            raise ProtocolError(
                f"{self.shown} cannot be written ({error}); nothing was changed"
            ) from None
        try:
            size = os.fstat(descriptor).st_size
            if size + len(data) > MAX_LOG_BYTES:
                raise RequestLogFull(
                    f"{self.shown} holds {size:,} bytes, as much as the log may "
                    f"({MAX_LOG_BYTES:,}); nothing was changed. When no member of the team "
                    f"runs, move it away to start a new log, or use a new team"
                )
            written = append_whole(descriptor, data)
            if written != len(data):  # the piece is one bad line, skipped when read
                raise ProtocolError(
                    f"{self.shown}: only {written:,} of {len(data):,} bytes were written (is "
                    "the disk full?); nothing was changed"
                )
        except OSError as error:
            raise ProtocolError(
                f"{self.shown} cannot be written ({error}); nothing was changed"
            ) from None
        finally:
            os.close(descriptor)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import FileLock, Timeout  # only a team's run needs it

        shown_lock = f"{self.shown}.lock"
        try:
            folder = harness_folder(self.root, self.relative.parent, create=True)
            lock = FileLock(folder / LOCK_FILE, timeout=self.lock_timeout, fallback_to_soft=False)
            lock.acquire()
        except Timeout:
            raise RequestsBusy(
                f"{shown_lock} is held by another process (waited {self.lock_timeout:g} s); "
                "nothing was changed: try again"
            ) from None
        except OSError as error:
            raise ProtocolError(f"{shown_lock} cannot be taken ({error})") from None
        try:
            yield
        finally:
            lock.release()


def _kind(kind: RequestKind | str) -> RequestKind:
    try:
        return RequestKind(kind)
    except ValueError:
        known = " or ".join(each.value for each in RequestKind)
        raise ValueError(f"kind {kind!r} is not {known}") from None


def _why_ignored(request: Request, responder: str, response_type: str) -> str | None:
    """Why an answer to a known request changes nothing; None if it counts."""
    expected = RESPONSE_TYPE[request.kind]
    if response_type != expected:
        return f"wrong type: request {request.id} is answered with {expected}"
    if responder != request.recipient:
        return f"wrong responder: request {request.id} is for {request.recipient}"
    if request.status is RequestStatus.EXPIRED:
        return "expired"
    if request.status is not RequestStatus.PENDING:
        return f"already {request.status.value}"
    return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _timestamp(moment: datetime) -> str:
    """ISO 8601, UTC, milliseconds, `Z`: chapter 15's timestamps."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_moment(value: object) -> datetime | None:
    if not isinstance(value, str) or not _TIMESTAMP.fullmatch(value):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:  # 2026-02-30
        return None


# --- folding a line ---------------------------------------------------------------------------

_REQUEST_KEYS = {"at", "request_id", "kind", "from", "to", "status"}
_ANSWER_KEYS = {"at", "request_id", "status", "by"}
_EXPIRED_KEYS = {"at", "request_id", "status"}
_IGNORED_KEYS = {"at", "request_id", "ignored", "type", "by"}


def _fold_line(requests: dict[str, Request], line: bytes) -> str | None:
    """Apply one line to `requests`; why it cannot be applied (and nothing changed), or None."""
    if len(line) > MAX_LINE_BYTES:
        return f"it is {len(line):,} bytes, more than a line holds ({MAX_LINE_BYTES:,})"
    try:
        data: Any = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        return f"it is not UTF-8 (byte {error.start})"
    except (ValueError, RecursionError) as error:
        return f"it is not JSON ({error})"
    if not isinstance(data, dict):
        return "it is not a JSON object"
    at = _parse_moment(data.get("at"))
    if at is None:
        return "'at' is missing or not a moment like 2026-05-01T09:30:00.123Z"
    if not isinstance(data.get("request_id"), str):
        return "'request_id' is missing or not text"
    if "ignored" in data:  # an answer that changed nothing: nothing to fold
        return _keys_problem(data, _IGNORED_KEYS) or _texts_problem(data, _IGNORED_KEYS)
    if "kind" in data:
        return _fold_request(requests, data, at)
    return _fold_change(requests, data, at)


def _fold_request(requests: dict[str, Request], data: dict[str, Any], at: datetime) -> str | None:
    if data["kind"] not in tuple(RequestKind):
        return f"kind {data['kind']!r} is not a request's (shutdown or plan_approval)"
    kind = RequestKind(data["kind"])
    body_key = BODY_KEY[kind]
    problem = _keys_problem(data, _REQUEST_KEYS | {body_key}) or _texts_problem(
        data, _REQUEST_KEYS | {body_key}
    )
    if problem:
        return problem
    request_id = data["request_id"]
    if not REQUEST_ID.fullmatch(request_id):
        return f"request_id {request_id!r} is not 8 of 0-9 a-f"
    if request_id in requests:
        return f"request {request_id} was opened on an earlier line"
    if data["status"] != RequestStatus.PENDING:
        return f"a request opens as pending, not {data['status']!r}"
    problem = (
        mailbox_name_problem(data["from"])
        or mailbox_name_problem(data["to"])
        or field_problem(body_key, data[body_key])
    )
    if problem:
        return problem
    requests[request_id] = Request(
        request_id, kind, data["from"], data["to"], RequestStatus.PENDING, data[body_key], at
    )
    return None


def _fold_change(requests: dict[str, Request], data: dict[str, Any], at: datetime) -> str | None:
    request_id = data["request_id"]
    request = requests.get(request_id)
    if request is None:
        return f"it changes request {request_id!r}, which no earlier line opened"
    status = data.get("status")
    if status == RequestStatus.EXPIRED:
        problem = _keys_problem(data, _EXPIRED_KEYS)
    elif status in (RequestStatus.APPROVED, RequestStatus.REJECTED):
        text_key = ANSWER_KEY[request.kind]
        problem = _keys_problem(
            data, _ANSWER_KEYS, optional=frozenset({text_key})
        ) or _texts_problem(data, _ANSWER_KEYS | {text_key})
        if not problem and data["by"] != request.recipient:
            problem = f"it is answered by {data['by']!r}, not {request.recipient}"
        if not problem and text_key in data:
            problem = field_problem(text_key, data[text_key])
    else:
        return f"status {status!r} is not approved, rejected or expired"
    if problem:
        return problem
    if request.status is not RequestStatus.PENDING:
        return f"it changes request {request_id}, which is {request.status.value} already"
    requests[request_id] = replace(
        request,
        status=RequestStatus(status),
        answered_at=at,
        answer=data.get(ANSWER_KEY[request.kind]) if status != RequestStatus.EXPIRED else None,
    )
    return None


def _keys_problem(
    data: dict[str, Any], required: set[str], optional: frozenset[str] = frozenset()
) -> str | None:
    missing = sorted(required - data.keys())
    if missing:
        return f"key {missing[0]!r} is missing"
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        return f"unknown key {unknown[0]!r}"
    return None


def _texts_problem(data: dict[str, Any], keys: set[str]) -> str | None:
    for key in sorted(keys):
        if key in data and not isinstance(data[key], str):
            return f"{key!r} is not text"
    return None

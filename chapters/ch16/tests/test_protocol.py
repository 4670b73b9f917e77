"""The protocol's promises: Claude Code's four messages, exact and bounded so that each fits a
mail message; free text and foreign JSON left as they are; a readable form that says how to
answer; and a request log where a request moves once (answered by its recipient with its
kind's response, or expired), every other answer is logged and changes nothing, and racing
answers or opens, in threads or in processes, never both win and never lose a line.

Nothing sleeps: expiry runs on an injected clock, threads meet at a barrier and processes
are released through a pipe once all said `ready`; every wait has a bound (`DEADLINE`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from pydantic import ValidationError

from chapters.ch03.tests.support import link
from chapters.ch12.tests.contender import released_together
from chapters.ch15 import mailbox
from chapters.ch15.mailbox import MailMessage
from chapters.ch16 import protocol
from chapters.ch16.protocol import (
    MAX_GIVEN_ID,
    MAX_ID_TRIES,
    MAX_LINE_BYTES,
    MAX_PLAN,
    MAX_REASON,
    MAX_TIMEOUT,
    MAX_WARNINGS,
    Answered,
    Ignored,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ProtocolError,
    ProtocolMessage,
    Request,
    RequestKind,
    RequestLog,
    RequestLogFull,
    RequestsBusy,
    RequestStatus,
    ShutdownRequest,
    ShutdownResponse,
    carried_length,
    field_problem,
    parse_protocol,
    readable,
    request_message,
)

DEADLINE = 60.0  # seconds: far more than a healthy run takes; only a hung one waits it out
LOG = Path(".tutorial/teams/demo/requests.jsonl")
START = datetime(2026, 5, 1, 9, 30, 0, 123000, tzinfo=UTC)
AT = "2026-05-01T09:30:00.123Z"


class Clock:
    """A clock that stands still until the test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def move(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def counting_ids() -> Iterator[str]:
    return iter(f"{n:08x}" for n in range(1, 10_000))


def request_log(root: Path, clock: Clock | None = None, **options: Any) -> RequestLog:
    ids = counting_ids()
    options.setdefault("new_id", lambda: next(ids))
    return RequestLog(root, "demo", clock=clock or Clock(), **options)


def log_lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG).read_text(encoding="utf-8").splitlines()]


# --- the messages -----------------------------------------------------------------------------

EXAMPLES: list[tuple[ProtocolMessage, str]] = [
    (
        ShutdownRequest(request_id="7f3a2c1e", reason="done"),
        '{"type":"shutdown_request","request_id":"7f3a2c1e","reason":"done"}',
    ),
    (
        ShutdownResponse(request_id="7f3a2c1e", approve=True),
        '{"type":"shutdown_response","request_id":"7f3a2c1e","approve":true}',
    ),
    (
        ShutdownResponse(request_id="7f3a2c1e", approve=False, reason="mid-edit"),
        '{"type":"shutdown_response","request_id":"7f3a2c1e","approve":false,"reason":"mid-edit"}',
    ),
    (
        PlanApprovalRequest(request_id="1b2c3d4e", plan="1. read\n2. write"),
        '{"type":"plan_approval_request","request_id":"1b2c3d4e","plan":"1. read\\n2. write"}',
    ),
    (
        PlanApprovalResponse(request_id="1b2c3d4e", approve=False, feedback="add tests"),
        '{"type":"plan_approval_response","request_id":"1b2c3d4e","approve":false,'
        '"feedback":"add tests"}',
    ),
    (
        PlanApprovalResponse(request_id="1b2c3d4e", approve=True),
        '{"type":"plan_approval_response","request_id":"1b2c3d4e","approve":true}',
    ),
]


@pytest.mark.parametrize(("message", "text"), EXAMPLES)
def test_each_message_is_claude_codes_compact_json_and_parses_back_as_itself(
    message: ProtocolMessage, text: str
) -> None:
    assert message.text() == text
    assert parse_protocol(text) == message
    assert parse_protocol(json.dumps(json.loads(text), indent=2)) == message  # any layout


@pytest.mark.parametrize(
    "body", ['quotes " and \\ and\nlines', "中文 ünïcødé 🙂", "a lone surrogate \ud800", "<&>"]
)
def test_a_message_travels_through_a_mailbox_line_unchanged(body: str) -> None:
    message = PlanApprovalRequest(request_id="1b2c3d4e", plan=body)
    line = MailMessage("alice", message.text(), None, AT).line()
    assert parse_protocol(MailMessage.from_line(line[:-1]).text) == message


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda: ShutdownRequest(request_id="7F3A2C1E", reason="r"), "pattern"),
        (lambda: ShutdownRequest(request_id="7f3a2c1", reason="r"), "pattern"),
        (lambda: ShutdownRequest(request_id="7f3a2c1e", reason=" \n"), "empty"),
        (lambda: ShutdownRequest.model_validate({"request_id": "7f3a2c1e"}), "Field required"),
        (
            lambda: ShutdownResponse.model_validate({"request_id": "7f3a2c1e", "approve": "true"}),
            "boolean",
        ),
        (
            lambda: ShutdownResponse.model_validate({"request_id": "7f3a2c1e", "approve": 1}),
            "boolean",
        ),
        (
            lambda: PlanApprovalRequest.model_validate(
                {"request_id": "1b2c3d4e", "plan": "p", "extra": 1}
            ),
            "Extra",
        ),
        (
            lambda: ShutdownRequest.model_validate(
                {"type": "shutdown_response", "request_id": "7f3a2c1e", "reason": "r"}
            ),
            "literal",
        ),
        (lambda: PlanApprovalResponse(request_id="1b2c3d4e", approve=True, feedback=""), "empty"),
    ],
)
def test_a_message_that_breaks_a_rule_cannot_be_made(make: Any, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        make()


LENGTHENED = ["x", "&", "<", '"', "\n", "\x01", "中"]  # as carried: 1, 5, 4, 2, 2, 6, 1
FIELDS = [
    (lambda text: ShutdownRequest(request_id="7f3a2c1e", reason=text), "reason", MAX_REASON),
    (
        lambda text: ShutdownResponse(request_id="7f3a2c1e", approve=False, reason=text),
        "reason",
        MAX_REASON,
    ),
    (lambda text: PlanApprovalRequest(request_id="1b2c3d4e", plan=text), "plan", MAX_PLAN),
    (
        lambda text: PlanApprovalResponse(request_id="1b2c3d4e", approve=False, feedback=text),
        "feedback",
        MAX_REASON,
    ),
]


@pytest.mark.parametrize("char", LENGTHENED)
@pytest.mark.parametrize(("make", "name", "limit"), FIELDS)
def test_every_field_is_bounded_as_carried_and_the_largest_message_fits_a_mail_message(
    make: Any, name: str, limit: int, char: str
) -> None:
    width = carried_length(char)
    rest = limit - 1  # one "x": a text of newlines alone is empty
    text = "x" + char * (rest // width) + "x" * (rest % width)  # exactly at the bound
    assert carried_length(text) == limit and field_problem(name, text) is None
    message = make(text)
    for carried in (message.text(), readable(message, "a" * 32)):
        mail = MailMessage("a" * 32, carried, None, AT)  # refuses past MAX_TEXT, escaped
        assert len(mail.line()) <= mailbox.MAX_LINE_BYTES
    assert parse_protocol(message.text()) == message
    with pytest.raises(ValidationError, match=f"the {name} is {limit + 1:,} characters as"):
        make(text + "x")


@pytest.mark.parametrize(
    "text",
    [
        "please stop",
        "",
        "{not json",
        "[1, 2]",
        '"shutdown_request"',
        "42",
        '{"note": "a teammate may write JSON"}',
        '{"type": "note", "request_id": "7f3a2c1e"}',
        '{"type": "shutdown_request", "request_id": "7f3a2c1e"}',
        '{"type": "shutdown_request", "request_id": "7f3a2c1e", "reason": "r", "by": "x"}',
        '{"type": "shutdown_response", "request_id": "7f3a2c1e", "approve": "yes"}',
        '{"type": ["shutdown_request"], "request_id": "7f3a2c1e", "reason": "r"}',
        '{"type": "shutdown_request", "request_id": "7f3a2c1e", "reason": "r"} and more',
        '{"":' + "[" * 2_900 + "]" * 2_900 + "}",  # deeper than Python's stack, within MAX_TEXT
    ],
)
def test_parse_protocol_leaves_free_text_and_foreign_json_alone(text: str) -> None:
    assert parse_protocol(text) is None


def test_parse_protocol_reads_no_text_longer_than_any_message() -> None:
    padded = " " * mailbox.MAX_TEXT + EXAMPLES[0][1]
    assert parse_protocol(padded[-mailbox.MAX_TEXT :]) is not None
    assert parse_protocol(padded) is None


@pytest.mark.parametrize(
    ("message", "sender", "expected"),
    [
        (
            ShutdownRequest(request_id="7f3a2c1e", reason="the work is done"),
            "lead",
            "shutdown_request 7f3a2c1e from lead: the work is done. Answer with "
            'shutdown_response {"request_id": "7f3a2c1e", "approve": true} to stop now, or '
            "approve false with a reason to go on.",
        ),
        (
            ShutdownRequest(request_id="7f3a2c1e", reason="All done!"),
            "lead",
            "shutdown_request 7f3a2c1e from lead: All done! Answer with shutdown_response "
            '{"request_id": "7f3a2c1e", "approve": true} to stop now, or approve false with a '
            "reason to go on.",
        ),
        (
            PlanApprovalRequest(request_id="1b2c3d4e", plan="1. read\n2. write"),
            "alice",
            "plan_approval_request 1b2c3d4e from alice:\n1. read\n2. write\nAnswer with "
            'review_plan {"request_id": "1b2c3d4e", "approve": true|false, "feedback": "..."}.',
        ),
        (
            ShutdownResponse(request_id="7f3a2c1e", approve=True),
            "alice",
            "shutdown_response 7f3a2c1e from alice: approved; alice stops now.",
        ),
        (
            ShutdownResponse(request_id="7f3a2c1e", approve=False, reason="mid-edit"),
            "alice",
            "shutdown_response 7f3a2c1e from alice: rejected; alice goes on. Reason: mid-edit.",
        ),
        (
            ShutdownResponse(request_id="7f3a2c1e", approve=False),
            "alice",
            "shutdown_response 7f3a2c1e from alice: rejected; alice goes on. Reason: (none given).",
        ),
        (
            PlanApprovalResponse(request_id="1b2c3d4e", approve=True, feedback="keep it small"),
            "lead",
            "plan_approval_response 1b2c3d4e from lead: approved; go ahead with the plan. "
            "Feedback: keep it small.",
        ),
        (
            PlanApprovalResponse(request_id="1b2c3d4e", approve=False, feedback="add tests."),
            "lead",
            "plan_approval_response 1b2c3d4e from lead: rejected. Feedback: add tests. Revise "
            "the plan and submit it again with submit_plan.",
        ),
    ],
)
def test_readable_says_what_it_is_and_how_to_answer(
    message: ProtocolMessage, sender: str, expected: str
) -> None:
    assert readable(message, sender) == expected


# --- opening ----------------------------------------------------------------------------------


def test_open_appends_one_pending_line_and_returns_the_request(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    shutdown = log.open("shutdown", "lead", "alice", "the work is done")
    plan = log.open(RequestKind.PLAN_APPROVAL, "alice", "lead", "1. edit\n2. test")
    assert (tmp_path / LOG).read_text(encoding="utf-8") == (
        '{"at": "2026-05-01T09:30:00.123Z", "request_id": "00000001", "kind": "shutdown", '
        '"from": "lead", "to": "alice", "status": "pending", "reason": "the work is done"}\n'
        '{"at": "2026-05-01T09:30:00.123Z", "request_id": "00000002", "kind": "plan_approval", '
        '"from": "alice", "to": "lead", "status": "pending", "plan": "1. edit\\n2. test"}\n'
    )
    assert shutdown == Request(
        "00000001", RequestKind.SHUTDOWN, "lead", "alice", RequestStatus.PENDING,
        "the work is done", START,
    )  # fmt: skip
    assert log.requests() == [shutdown, plan] and log.warnings == []
    assert request_message(shutdown) == ShutdownRequest(
        request_id="00000001", reason="the work is done"
    )
    assert request_message(plan) == PlanApprovalRequest(
        request_id="00000002", plan="1. edit\n2. test"
    )


@pytest.mark.parametrize(
    ("kind", "sender", "recipient", "body", "why"),
    [
        ("stop", "lead", "alice", "r", "kind 'stop' is not shutdown or plan_approval"),
        ("shutdown", "Lead", "alice", "r", "teammate name 'Lead'"),
        ("shutdown", "lead", "harness", "r", "reserved"),
        ("shutdown", "lead", "lead", "r", "cannot send a request to itself"),
        ("shutdown", "lead", "alice", " ", "the reason is empty"),
        ("shutdown", "lead", "alice", "&" * (MAX_REASON // 5 + 1), "the reason is 2,005"),
        ("plan_approval", "alice", "lead", "x" * (MAX_PLAN + 1), "the plan is 4,001"),
    ],
)
def test_open_refuses_what_can_never_be_a_request_and_writes_nothing(
    tmp_path: Path, kind: str, sender: str, recipient: str, body: str, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        request_log(tmp_path).open(kind, sender, recipient, body)
    assert not (tmp_path / ".tutorial").exists()


def test_an_id_already_in_the_log_is_drawn_again_and_the_draws_are_bounded(
    tmp_path: Path,
) -> None:
    drawn = iter(["0000000a", "0000000a", "0000000a", "0000000b"])
    log = request_log(tmp_path, new_id=lambda: next(drawn))
    assert [log.open("shutdown", "lead", "alice", "r").id for _ in range(2)] == [
        "0000000a",
        "0000000b",
    ]
    stuck = request_log(tmp_path, new_id=lambda: "0000000a")
    with pytest.raises(ProtocolError, match=f"{MAX_ID_TRIES} ids drawn .* all taken"):
        stuck.open("shutdown", "lead", "alice", "r")
    with pytest.raises(ValueError, match="new_id gave 'XYZ'"):
        request_log(tmp_path, new_id=lambda: "XYZ").open("shutdown", "lead", "alice", "r")
    assert len(log_lines(tmp_path)) == 2
    assert len(RequestLog(tmp_path, "demo").open("shutdown", "lead", "alice", "r").id) == 8


def test_the_clock_and_the_lock_wait_must_make_sense(tmp_path: Path) -> None:
    naive = RequestLog(tmp_path, "demo", clock=lambda: datetime(2026, 5, 1))
    with pytest.raises(ValueError, match="no time zone"):
        naive.open("shutdown", "lead", "alice", "r")
    for wait in (-1.0, protocol.MAX_LOCK_TIMEOUT + 1):
        with pytest.raises(ValueError, match="lock_timeout must be 0 to 600 s"):
            RequestLog(tmp_path, "demo", lock_timeout=wait)
    with pytest.raises(ValueError, match="team name"):
        RequestLog(tmp_path, "../up")


def test_the_largest_line_fits_and_reads_back(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    for plan in ("\ud800" * MAX_PLAN, "\x01" * (MAX_PLAN // 6), "中" * MAX_PLAN):
        opened = log.open("plan_approval", "a" * 32, "lead", plan)
        assert log.get(opened.id) == opened
    assert max(len(line) for line in (tmp_path / LOG).read_bytes().split(b"\n")) < MAX_LINE_BYTES
    assert log.warnings == []


# --- answering --------------------------------------------------------------------------------


def test_answer_moves_a_pending_request_once_with_one_line(tmp_path: Path) -> None:
    clock = Clock()
    log = request_log(tmp_path, clock)
    shutdown = log.open("shutdown", "lead", "alice", "done")
    plan = log.open("plan_approval", "alice", "lead", "1. edit")
    clock.move(1.5)
    approved = log.answer(shutdown.id, "alice", "shutdown_response", True)
    rejected = log.answer(plan.id, "lead", "plan_approval_response", False, "add tests")
    later = START + timedelta(seconds=1.5)
    assert approved == Answered(
        Request(
            shutdown.id, RequestKind.SHUTDOWN, "lead", "alice", RequestStatus.APPROVED, "done",
            START, later,
        )
    )  # fmt: skip
    assert rejected == Answered(
        Request(
            plan.id, RequestKind.PLAN_APPROVAL, "alice", "lead", RequestStatus.REJECTED,
            "1. edit", START, later, "add tests",
        )
    )  # fmt: skip
    assert log_lines(tmp_path)[2:] == [
        {"at": "2026-05-01T09:30:01.623Z", "request_id": shutdown.id, "status": "approved",
         "by": "alice"},
        {"at": "2026-05-01T09:30:01.623Z", "request_id": plan.id, "status": "rejected",
         "by": "lead", "feedback": "add tests"},
    ]  # fmt: skip
    assert log.requests() == [approved.request, rejected.request]
    assert log.pending() == []


def ignored_setup(tmp_path: Path) -> tuple[RequestLog, Clock, dict[str, str]]:
    """A log holding a pending shutdown (lead to alice), a pending plan (alice to lead), an
    approved and a rejected shutdown, and an expired one."""
    clock = Clock()
    log = request_log(tmp_path, clock)
    old = log.open("shutdown", "lead", "cal", "old")
    clock.move(100)
    ids = {
        "pending": log.open("shutdown", "lead", "alice", "done").id,
        "plan": log.open("plan_approval", "alice", "lead", "1. edit").id,
        "approved": log.open("shutdown", "lead", "bob", "done").id,
        "rejected": log.open("shutdown", "lead", "bob", "again").id,
        "expired": old.id,
    }
    log.answer(ids["approved"], "bob", "shutdown_response", True)
    log.answer(ids["rejected"], "bob", "shutdown_response", False, "busy")
    assert [each.id for each in log.expire(50)] == [old.id]
    return log, clock, ids


@pytest.mark.parametrize(
    ("target", "responder", "response_type", "why"),
    [
        ("deadbeef", "alice", "shutdown_response", "unknown request_id"),
        ("approved", "bob", "shutdown_response", "already approved"),
        ("rejected", "bob", "shutdown_response", "already rejected"),
        ("pending", "alice", "plan_approval_response", "wrong type: request {} is answered "
         "with shutdown_response"),
        ("plan", "lead", "shutdown_response", "wrong type: request {} is answered with "
         "plan_approval_response"),
        ("pending", "bob", "shutdown_response", "wrong responder: request {} is for alice"),
        ("pending", "lead", "shutdown_response", "wrong responder: request {} is for alice"),
        ("expired", "cal", "shutdown_response", "expired"),
    ],
)  # fmt: skip
def test_every_ignored_answer_appends_one_ignored_line_and_changes_nothing_else(
    tmp_path: Path, target: str, responder: str, response_type: str, why: str
) -> None:
    log, clock, ids = ignored_setup(tmp_path)
    request_id = ids.get(target, target)
    before, lines = log.requests(), log_lines(tmp_path)
    clock.move(7)
    for approve in (True, False):
        outcome = log.answer(request_id, responder, response_type, approve, "text")
        assert outcome == Ignored(why.format(request_id))
    assert log.requests() == before
    ignored = {
        "at": "2026-05-01T09:31:47.123Z",
        "request_id": request_id,
        "ignored": why.format(request_id),
        "type": response_type,
        "by": responder,
    }
    assert log_lines(tmp_path) == [*lines, ignored, ignored]
    assert log.warnings == []  # an ignored line is read, and folds to nothing


def test_an_unknown_id_is_logged_as_given_cut_to_its_bound(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    given = "x" * (MAX_GIVEN_ID + 50)
    assert log.answer(given, "alice", "shutdown_response", True) == Ignored("unknown request_id")
    assert log_lines(tmp_path)[0]["request_id"] == "x" * (MAX_GIVEN_ID - 1) + "…"


@pytest.mark.parametrize(
    ("responder", "response_type", "text", "why"),
    [
        ("Alice", "shutdown_response", None, "teammate name 'Alice'"),
        ("alice", "shutdown_request", None, "is not shutdown_response or plan_approval"),
        ("alice", "shutdown_response", " ", "the reason is empty"),
        ("alice", "shutdown_response", "<" * (MAX_REASON // 4 + 1), "the reason is 2,004"),
        ("alice", "plan_approval_response", "x" * (MAX_REASON + 1), "the feedback is 2,001"),
    ],
)
def test_an_answer_that_can_never_be_one_is_refused_and_writes_nothing(
    tmp_path: Path, responder: str, response_type: str, text: str | None, why: str
) -> None:
    log = request_log(tmp_path)
    opened = log.open("shutdown", "lead", "alice", "done")
    before = (tmp_path / LOG).read_bytes()
    with pytest.raises(ValueError, match=why):
        log.answer(opened.id, responder, response_type, True, text)
    assert (tmp_path / LOG).read_bytes() == before


# --- expiring ---------------------------------------------------------------------------------


def test_expire_ends_only_pending_requests_older_than_the_timeout(tmp_path: Path) -> None:
    clock = Clock()
    log = request_log(tmp_path, clock)
    first = log.open("shutdown", "lead", "alice", "one")
    clock.move(100)
    second = log.open("plan_approval", "bob", "lead", "two")
    answered = log.open("shutdown", "lead", "cal", "three")
    log.answer(answered.id, "cal", "shutdown_response", False, "busy")
    clock.move(200)
    assert log.expire(300) == []  # the first is exactly 300 s old: not older
    clock.move(0.001)
    ended = log.expire(300)
    assert ended == [replace_status(first, RequestStatus.EXPIRED, clock.now)]
    assert log.expire(300) == []  # once
    clock.move(100)
    assert [(each.id, each.sender) for each in log.expire(300)] == [(second.id, "bob")]
    expired_lines = [line for line in log_lines(tmp_path) if line.get("status") == "expired"]
    assert expired_lines == [
        {"at": "2026-05-01T09:35:00.124Z", "request_id": first.id, "status": "expired"},
        {"at": "2026-05-01T09:36:40.124Z", "request_id": second.id, "status": "expired"},
    ]
    assert [each.status for each in log.requests()] == ["expired", "expired", "rejected"]


def replace_status(request: Request, status: RequestStatus, at: datetime) -> Request:
    return Request(
        request.id, request.kind, request.sender, request.recipient, status, request.body,
        request.opened_at, at,
    )  # fmt: skip


def test_several_requests_expire_in_one_write_and_the_timeout_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    log = request_log(tmp_path, clock)
    for name in ("alice", "bob", "cal"):
        log.open("shutdown", "lead", name, "stop")
    clock.move(MAX_TIMEOUT + 1)
    writes: list[bytes] = []
    real_write = os.write

    def counted(descriptor: int, data: bytes) -> int:
        writes.append(bytes(data))
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", counted)
    assert len(log.expire(MAX_TIMEOUT)) == 3
    assert len(writes) == 1 and writes[0].count(b"\n") == 3
    for timeout in (0.0, -1.0, float("nan"), float("inf"), MAX_TIMEOUT + 1):
        with pytest.raises(ValueError, match="timeout_seconds must be more than 0"):
            log.expire(timeout)


# --- reading ----------------------------------------------------------------------------------


def test_the_state_survives_a_new_request_log_on_the_same_folder(tmp_path: Path) -> None:
    clock = Clock()
    log = request_log(tmp_path, clock)
    opened = [log.open("shutdown", "lead", name, "stop") for name in ("alice", "bob", "cal")]
    clock.move(2.0005)  # kept to the millisecond, as written
    answered = log.answer(opened[0].id, "alice", "shutdown_response", False, "busy")
    clock.move(400)
    expired = log.expire(300)
    assert isinstance(answered, Answered)
    again = RequestLog(tmp_path, "demo")  # another object, as another process would make
    assert again.requests() == [answered.request, *expired]
    assert again.get(opened[1].id) == expired[0] and again.get("deadbeef") is None
    assert again.pending() == []
    assert RequestLog(tmp_path, "other").requests() == []  # another team: another file


def test_requests_come_in_the_order_opened_and_pending_leaves_out_the_answered(
    tmp_path: Path,
) -> None:
    drawn = iter(["ffffffff", "00000000", "88888888"])
    log = request_log(tmp_path, new_id=lambda: next(drawn))
    for name in ("alice", "bob", "cal"):
        log.open("shutdown", "lead", name, "stop")
    log.answer("00000000", "bob", "shutdown_response", True)
    assert [each.id for each in log.requests()] == ["ffffffff", "00000000", "88888888"]
    assert [each.id for each in log.pending()] == ["ffffffff", "88888888"]


GOOD_REQUEST = (
    '{"at": "2026-05-01T09:30:00.123Z", "request_id": "0000000a", "kind": "shutdown", '
    '"from": "lead", "to": "alice", "status": "pending", "reason": "r"}'
)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"not json", "it is not JSON"),
        (b'{"at": "\xff"}', "it is not UTF-8"),
        (b"[1, 2]", "it is not a JSON object"),
        (b'{"request_id": "0000000a", "status": "expired"}', "'at' is missing"),
        (b'{"at": "2026-02-30T09:30:00.000Z", "request_id": "0000000a"}', "'at' is missing"),
        (b'{"at": "' + AT.encode() + b'", "status": "expired"}', "'request_id' is missing"),
        (b'{"at": "' + AT.encode() + b'", "request_id": "0000000b", "status": "expired"}',
         "which no earlier line opened"),
        (b'{"at": "' + AT.encode() + b'", "request_id": "0000000a", "status": "done"}',
         "status 'done'"),
        (b'{"at": "' + AT.encode() + b'", "request_id": "0000000a", "status": "approved", '
         b'"by": "bob"}', "answered by 'bob', not alice"),
        (b'{"at": "' + AT.encode() + b'", "request_id": "0000000a", "status": "approved", '
         b'"by": "alice", "feedback": "f"}', "unknown key 'feedback'"),
        (GOOD_REQUEST.encode(), "request 0000000a was opened on an earlier line"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace("shutdown", "halt").encode(),
         "kind 'halt'"),
        (GOOD_REQUEST.replace("0000000a", "ABC").encode(), "request_id 'ABC'"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace('"r"', '""').encode(),
         "the reason is empty"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace('"pending"', '"approved"')
         .encode(), "opens as pending"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace('"lead"', '"Lead"').encode(),
         "teammate name"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace('"reason"', '"plan"').encode(),
         "key 'reason' is missing"),
        (GOOD_REQUEST.replace("0000000a", "0000000c").replace('"r"}', '"r", "x": 1}').encode(),
         "unknown key 'x'"),
        (b'{"at": "' + AT.encode() + b'", "request_id": "0000000a", "ignored": 3, '
         b'"type": "t", "by": "b"}', "'ignored' is not text"),
        (b" " * (MAX_LINE_BYTES + 1), f"more than a line holds ({MAX_LINE_BYTES:,})"),
        (b"[" * 30_000 + b"]" * 30_000, "it is not JSON (maximum recursion depth"),
    ],
)  # fmt: skip
def test_a_line_that_cannot_be_read_is_skipped_with_a_warning_and_never_rewritten(
    tmp_path: Path, line: bytes, why: str
) -> None:
    path = tmp_path / LOG
    path.parent.mkdir(parents=True)
    approve = b'{"at": "' + AT.encode() + b'", "request_id": "0000000a", "status": "rejected", '
    content = GOOD_REQUEST.encode() + b"\n" + line + b"\n" + approve + b'"by": "alice"}\n'
    path.write_bytes(content)
    log = request_log(tmp_path)
    (request,) = log.requests()
    assert (request.id, request.status) == ("0000000a", RequestStatus.REJECTED)
    (warning,) = log.warnings
    assert warning.startswith(f"{LOG.as_posix()} line 2 was skipped: ") and why in warning
    assert "never rewritten" in warning
    opened = log.open("plan_approval", "alice", "lead", "p")  # changes go on after it
    assert path.read_bytes().startswith(content)
    assert [each.id for each in log.requests()] == ["0000000a", opened.id]


def test_a_second_change_of_a_request_is_skipped_the_first_stands(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    opened = log.open("shutdown", "lead", "alice", "r")
    log.answer(opened.id, "alice", "shutdown_response", False, "busy")
    with (tmp_path / LOG).open("a", encoding="utf-8") as file:  # written by hand
        file.write(json.dumps({"at": AT, "request_id": opened.id, "status": "expired"}) + "\n")
    assert [each.status for each in log.requests()] == [RequestStatus.REJECTED]
    assert "which is rejected already" in log.warnings[0]


def test_warnings_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / LOG
    path.parent.mkdir(parents=True)
    path.write_bytes(b"bad\n" * (MAX_WARNINGS + 5))
    log = request_log(tmp_path)
    assert log.requests() == []
    assert len(log.warnings) == MAX_WARNINGS + 1
    assert log.warnings[-1] == f"{LOG.as_posix()}: 5 more lines were skipped"


def test_only_complete_lines_are_read_and_a_left_over_piece_is_ended_before_a_change(
    tmp_path: Path,
) -> None:
    path = tmp_path / LOG
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD_REQUEST.encode()[:50])  # a line still being written
    log = request_log(tmp_path)
    assert log.requests() == [] and log.warnings == []
    path.write_bytes(GOOD_REQUEST.encode())  # whole but for its newline (a hand edit)
    assert log.requests() == []
    opened = log.open("shutdown", "lead", "bob", "r")  # under the lock: nobody is writing it
    assert path.read_bytes().startswith(GOOD_REQUEST.encode() + b"\n{")
    assert [each.id for each in log.requests()] == ["0000000a", opened.id]


def test_the_log_is_read_to_its_bound_and_a_full_log_refuses_every_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = request_log(tmp_path)
    first = log.open("shutdown", "lead", "alice", "r")
    path = tmp_path / LOG
    size = path.stat().st_size
    log.open("shutdown", "lead", "bob", "r")
    before = path.read_bytes()
    monkeypatch.setattr(protocol, "MAX_LOG_BYTES", size + 10)
    assert log.requests() == [first]  # no more than the bound is read
    assert log.warnings[0].startswith(f"{LOG.as_posix()} is more than {size + 10:,} bytes")
    monkeypatch.setattr(protocol, "MAX_LOG_BYTES", len(before) + 10)
    for change in (
        lambda: log.open("shutdown", "lead", "cal", "r"),
        lambda: log.answer(first.id, "alice", "shutdown_response", True),
        lambda: log.answer("deadbeef", "alice", "shutdown_response", True),  # even ignored
    ):
        with pytest.raises(RequestLogFull, match=r"nothing was changed\. When no member"):
            change()
    assert path.read_bytes() == before


def test_a_short_write_ends_its_piece_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = request_log(tmp_path)
    opened = log.open("shutdown", "lead", "alice", "r")
    real_write = os.write

    def disk_full(descriptor: int, data: bytes) -> int:
        return real_write(descriptor, data[:10] if len(data) > 1 else data)

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(ProtocolError, match=r"only 10 of .* nothing was changed"):
        log.answer(opened.id, "alice", "shutdown_response", True)
    monkeypatch.setattr(os, "write", real_write)
    assert log.requests() == [opened] and "line 2 was skipped" in log.warnings[0]
    assert isinstance(log.answer(opened.id, "alice", "shutdown_response", True), Answered)


def test_a_change_waits_for_the_lock_at_most_its_timeout_and_reads_take_none(
    tmp_path: Path,
) -> None:
    log = request_log(tmp_path, lock_timeout=0.05)
    opened = log.open("shutdown", "lead", "alice", "r")
    before = (tmp_path / LOG).read_bytes()
    with FileLock(tmp_path / LOG.parent / "requests.jsonl.lock", timeout=1):  # another holder
        for change in (
            lambda: log.open("shutdown", "lead", "bob", "r"),
            lambda: log.answer(opened.id, "alice", "shutdown_response", True),
            lambda: log.expire(1),
        ):
            with pytest.raises(RequestsBusy, match=r"held by another process \(waited 0.05 s\)"):
                change()
        assert log.requests() == [opened]
    assert (tmp_path / LOG).read_bytes() == before


def test_a_team_folder_that_links_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "work"
    link(root / LOG.parent, outside)
    log = request_log(root)
    with pytest.raises(ProtocolError, match="leads outside"):
        log.open("shutdown", "lead", "alice", "r")
    with pytest.raises(ProtocolError, match="leads outside"):
        log.requests()
    assert list(outside.iterdir()) == []


# --- racing -----------------------------------------------------------------------------------


def test_two_threads_answering_the_same_request_one_wins(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    opened = [log.open("shutdown", "lead", "alice", f"r{n}") for n in range(20)]
    outcomes: dict[str, list[Answered | Ignored]] = {each.id: [] for each in opened}
    failures: list[BaseException] = []

    def answer(approve: bool, barrier: threading.Barrier, request_id: str) -> None:
        mine = RequestLog(tmp_path, "demo")  # each its own object, as in a real run
        try:
            barrier.wait()
            outcomes[request_id].append(
                mine.answer(request_id, "alice", "shutdown_response", approve)
            )
        except BaseException as error:  # reported below, not lost in the thread
            failures.append(error)

    for request in opened:
        barrier = threading.Barrier(2, timeout=DEADLINE)
        threads = [
            threading.Thread(target=answer, args=(approve, barrier, request.id))
            for approve in (True, False)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(DEADLINE)
        assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    for request in RequestLog(tmp_path, "demo").requests():
        won = [each for each in outcomes[request.id] if isinstance(each, Answered)]
        lost = [each for each in outcomes[request.id] if isinstance(each, Ignored)]
        assert len(won) == 1 and len(lost) == 1
        assert won[0].request == request
        assert lost[0].why == f"already {request.status.value}"


OPENER = """
import json, sys
from pathlib import Path
from chapters.ch16.protocol import RequestLog
root, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
drawn = iter(f"{n:08x}" for n in range(1, 1_000))  # the same ids in every process
log = RequestLog(root, "demo", new_id=lambda: next(drawn))
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps([log.open("shutdown", "lead", name, f"{name} {n}").id for n in range(count)]))
"""


def test_three_processes_opening_at_once_lose_no_request_and_share_no_id(
    tmp_path: Path,
) -> None:
    """Every process draws the same ids, 00000001 first: only the check under the lock keeps
    them unique. A process behind the others draws at most 2 * 10 + 1 < MAX_ID_TRIES times."""
    names, count = ["ann", "ben", "cal"], 10
    commands = {
        name: [sys.executable, "-c", OPENER, str(tmp_path), name, str(count)] for name in names
    }
    said, _ = released_together(commands, DEADLINE)
    log = RequestLog(tmp_path, "demo")
    requests = log.requests()
    assert log.warnings == [] and len(log_lines(tmp_path)) == len(names) * count
    assert sorted(each.id for each in requests) == [f"{n:08x}" for n in range(1, 31)]
    for name in names:
        mine = [each for each in requests if each.recipient == name]
        assert [each.body for each in mine] == [f"{name} {n}" for n in range(count)]
        assert said[name] == [each.id for each in mine]  # each was told its request's id


ANSWERER = """
import json, sys
from pathlib import Path
from chapters.ch16.protocol import Answered, RequestLog
root, name, approve, ids = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "yes", sys.argv[4]
log = RequestLog(root, "demo")
print("ready", flush=True)
sys.stdin.readline()
outcomes = []
for request_id in ids.split(","):
    outcome = log.answer(request_id, "alice", "shutdown_response", approve, name)
    outcomes.append("won" if isinstance(outcome, Answered) else outcome.why)
print(json.dumps(outcomes))
"""


def test_two_processes_answering_the_same_requests_one_wins_each(tmp_path: Path) -> None:
    log = request_log(tmp_path)
    ids = [log.open("shutdown", "lead", "alice", f"r{n}").id for n in range(30)]
    commands = {
        name: [sys.executable, "-c", ANSWERER, str(tmp_path), name, approve, ",".join(ids)]
        for name, approve in (("yes", "yes"), ("no", "no"))
    }
    said, _ = released_together(commands, DEADLINE)
    requests = RequestLog(tmp_path, "demo").requests()
    for index, request in enumerate(requests):
        winner = request.answer  # each process gave its own name as the answer's text
        assert winner in ("yes", "no")
        loser = "no" if winner == "yes" else "yes"
        assert said[winner][index] == "won"
        assert said[loser][index] == f"already {request.status.value}"
        assert request.status == ("approved" if winner == "yes" else "rejected")
    assert len(log_lines(tmp_path)) == 30 * 3  # opened, answered, ignored: nothing more

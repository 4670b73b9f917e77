"""The two protocols while a team runs: a plan that must be approved, and a stop that is asked.

A polite message ("please stop", "here is my plan") is advice: nothing makes
the other side act on it, nothing says whether it was answered, and nothing
notices when nobody answers. A protocol is a request with an id, a status and a
timeout, kept in the team's request log (chapters/ch16/protocol.py), and the
harness does what the answer says:

    plan approval   a teammate spawned with plan_mode_required may read, but every
                    call that writes or runs something is refused by `PlanGate`
                    (an authorizer before the permission policy) until the lead
                    approves its plan: submit_plan -> plan_approval_request to the
                    lead -> review_plan -> plan_approval_response to the teammate.
                    Approval lifts this gate only: the policy, its deny rules and
                    the human still judge every call after it
    shutdown        request_shutdown -> shutdown_request to the teammate ->
                    shutdown_response. Approved: the teammate stops at its next
                    request boundary (`LeaveWhenApproved`), its in_progress tasks go
                    back to pending with no owner, and the lead hears
                    `teammate_terminated`. Rejected: its reason reaches the lead

The messages are JSON in the mailboxes (Claude Code's types); the model reads
each as a sentence that says how to answer (`render`). A request nobody answers
within the timeout becomes expired, and the one who asked is told: a thread of
the run looks every `EXPIRY_POLL` seconds, from the first request to the run's end.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from chapters.ch15.mailbox import HARNESS, LEAD, MailMessage, envelope
from chapters.ch15.team import Team, TeamStopped
from chapters.ch16.protocol import (
    REQUEST_TYPE,
    RESPONSE_TYPE,
    Ignored,
    ProtocolError,
    RequestKind,
    RequestLog,
    parse_protocol,
    readable,
    request_message,
)
from shared.agent import Feature, Run
from shared.tools import SideEffect, Status, ToolResult

if TYPE_CHECKING:
    from chapters.ch12.tasks import TaskStore
    from shared.calls import PendingCall

DEFAULT_PROTOCOL_TIMEOUT = 300.0  # seconds a request waits for its answer
MAX_PROTOCOL_TIMEOUT = 86_400.0
EXPIRY_POLL = 1.0  # seconds between two looks for requests past their timeout
TERMINATED = "teammate_terminated"
GATED = (SideEffect.WRITE, SideEffect.EXECUTE)  # what a plan must be approved for


def render(message: MailMessage) -> str:
    """What the model reads of a message: a protocol message as the sentence `readable` makes
    of it, any other as chapter 15's envelope shows it."""
    parsed = parse_protocol(message.text)
    if parsed is None:
        return envelope(message)
    try:
        return envelope(replace(message, text=readable(parsed, message.sender)))
    except ValueError:  # the sentence would not fit a message: the JSON still does
        return envelope(message)


@dataclass
class Protocols:
    """The run's side of the requests: who is gated, who leaves, what each answer does."""

    team: Team
    log: RequestLog
    tasks: TaskStore
    timeout: float = DEFAULT_PROTOCOL_TIMEOUT
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _gated: dict[str, str | None] = field(default_factory=dict)  # name -> pending plan's id
    _leaving: set[str] = field(default_factory=set)  # approved shutdowns
    _ending: threading.Event = field(default_factory=threading.Event, repr=False)
    _expirer: threading.Thread | None = None

    def __post_init__(self) -> None:
        if not 0 < self.timeout <= MAX_PROTOCOL_TIMEOUT:
            raise ValueError(f"timeout must be above 0, at most {MAX_PROTOCOL_TIMEOUT:g} s")

    # --- plan approval ----------------------------------------------------------------------

    def joining(self, name: str, plan_mode_required: bool) -> None:
        """A teammate is about to start under `name`: what an earlier one of that name left
        (a gate, an approved stop) goes; with plan_mode_required it writes nothing until a
        plan of its is approved."""
        with self._lock:
            self._gated.pop(name, None)
            self._leaving.discard(name)
            if plan_mode_required:
                self._gated[name] = None

    def gated(self, name: str) -> bool:
        with self._lock:
            return name in self._gated

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        """The plan gate: before the policy; it can only refuse, never allow."""
        if pending.prepared.tool.side_effect not in GATED:
            return None
        with self._lock:
            if pending.agent not in self._gated:
                return None
            waiting = self._gated[pending.agent]
        if waiting is None:
            return ToolResult.denied(
                "plan not approved: you were started in plan mode, so nothing that writes or "
                "runs may happen before the lead approves your plan. Submit it with submit_plan "
                "{plan}; reading is allowed meanwhile."
            )
        return ToolResult.denied(
            f"plan not approved: your plan {waiting} waits for the lead's review; nothing ran. "
            "Wait for the answer (it comes as a message), or read meanwhile."
        )

    def submit_plan(self, sender: str, plan: str) -> ToolResult:
        try:
            request = self.log.open(RequestKind.PLAN_APPROVAL, sender, LEAD, plan)
        except (ProtocolError, ValueError) as error:
            return _refused(error)
        with self._lock:
            if sender in self._gated:
                self._gated[sender] = request.id
        self.team.send_or_say(sender, LEAD, request_message(request).text(), f"plan {request.id}")
        self._expiring()
        return ToolResult.success(
            f"request_id {request.id}: your plan went to the lead. Its answer comes as a "
            "message; until it approves, nothing that writes or runs may happen."
        )

    def review_plan(self, request_id: str, approve: bool, feedback: str | None) -> ToolResult:
        from chapters.ch16.protocol import PlanApprovalResponse

        try:
            outcome = self.log.answer(
                request_id, LEAD, RESPONSE_TYPE[RequestKind.PLAN_APPROVAL], approve, feedback
            )
        except (ProtocolError, ValueError) as error:
            return _refused(error)
        if isinstance(outcome, Ignored):
            return _ignored(request_id, outcome)
        request = outcome.request
        with self._lock:
            if approve:  # any plan of its approved: the plan gate goes (the policy stays)
                self._gated.pop(request.sender, None)
            elif self._gated.get(request.sender) == request.id:
                self._gated[request.sender] = None  # it may submit again
        reply = PlanApprovalResponse(request_id=request.id, approve=approve, feedback=feedback)
        self.team.send_or_say(
            LEAD, request.sender, reply.text(), f"plan {request.id} {request.status}"
        )
        said = (
            "approved: it may now write and run, as the policy allows"
            if approve
            else ("rejected: your feedback went to it, and it may submit again")
        )
        return ToolResult.success(f"plan {request.id} of {request.sender} {said}.")

    # --- shutdown ---------------------------------------------------------------------------

    def request_shutdown(self, teammate: str, reason: str) -> ToolResult:
        if teammate not in self.team.member_names():
            return ToolResult.failed(
                "invalid_arguments",
                f"nothing was asked: {teammate!r} is no running teammate. "
                f"{self.team.described(LEAD)}",
                Status.INVALID,
            )
        try:
            request = self.log.open(RequestKind.SHUTDOWN, LEAD, teammate, reason)
        except (ProtocolError, ValueError) as error:
            return _refused(error)
        self.team.send_or_say(
            LEAD, teammate, request_message(request).text(), f"shutdown {request.id}"
        )
        self._expiring()
        return ToolResult.success(
            f"request_id {request.id}: {teammate} was asked to stop. Its answer comes as a "
            f"message: approved, it stops and you hear {TERMINATED}; rejected, with its reason."
        )

    def shutdown_response(
        self, sender: str, request_id: str, approve: bool, reason: str | None
    ) -> ToolResult:
        from chapters.ch16.protocol import ShutdownResponse

        try:
            outcome = self.log.answer(
                request_id, sender, RESPONSE_TYPE[RequestKind.SHUTDOWN], approve, reason
            )
        except (ProtocolError, ValueError) as error:
            return _refused(error)
        if isinstance(outcome, Ignored):
            return _ignored(request_id, outcome)
        request = outcome.request
        if approve:
            with self._lock:
                self._leaving.add(sender)
            self.team.leaving(sender)  # ended before its next request (its last turn), too
            return ToolResult.success(
                f"shutdown {request.id} approved: you stop before your next request. "
                "Your in_progress tasks go back to pending for others."
            )
        reply = ShutdownResponse(request_id=request.id, approve=False, reason=reason)
        self.team.send_or_say(
            sender, request.sender, reply.text(), f"shutdown {request.id} rejected"
        )
        return ToolResult.success(f"shutdown {request.id} rejected: the lead reads your reason.")

    def leave_if_approved(self, name: str) -> None:
        """At a request boundary: a teammate whose shutdown was approved releases its tasks,
        tells the lead, and stops (`TeamStopped`: chapter 15 marks it stopped)."""
        if self.left(name):
            raise TeamStopped(f"{name} approved its shutdown")

    def left(self, name: str) -> bool:
        """If `name`'s shutdown was approved: release its tasks and tell the lead, once."""
        with self._lock:
            if name not in self._leaving:
                return False
            self._leaving.discard(name)
        released = release_tasks(self.tasks, name)
        note = f"; its in_progress tasks back to pending: {', '.join(released)}" if released else ""
        self.team.console.info(f"team: {name} stops, as its shutdown was approved{note}")
        self.team.send_or_say(
            HARNESS, LEAD, f"{TERMINATED}: {name} stopped as asked{note}", f"{name} stopped"
        )
        return True

    # --- expiry -----------------------------------------------------------------------------

    def expire_due(self) -> None:
        """Requests past the timeout become expired; whoever asked is told."""
        try:
            expired = self.log.expire(self.timeout)
        except ProtocolError as error:
            self.team.console.notice(f"protocol: {error}")
            return
        for request in expired:
            if request.kind is RequestKind.PLAN_APPROVAL:
                with self._lock:
                    if self._gated.get(request.sender) == request.id:
                        self._gated[request.sender] = None  # it may submit again
            kind = REQUEST_TYPE[request.kind]
            text = (
                f"{kind} {request.id} to {request.recipient} expired: no answer in "
                f"{self.timeout:g}s (--protocol-timeout)."
            )
            self.team.console.notice(f"protocol: {text}")
            self.team.send_or_say(HARNESS, request.sender, text, f"{kind} {request.id} expired")

    def _expiring(self) -> None:
        """From the first request on, a thread looks for expired ones until the run ends."""
        with self._lock:
            if self._expirer is not None or self._ending.is_set():
                return
            self._expirer = threading.Thread(
                target=self._watch, name="protocol expiry", daemon=True
            )
            self._expirer.start()

    def _watch(self) -> None:
        while not self._ending.wait(EXPIRY_POLL):
            self.expire_due()

    def end(self) -> None:
        self._ending.set()
        expirer = self._expirer
        if expirer is not None:
            expirer.join(EXPIRY_POLL * 5)


def release_tasks(tasks: TaskStore, owner: str) -> list[str]:
    """Every in_progress task of `owner` back to pending with no owner (one locked change
    each); the ids released. A task completed meanwhile is not reopened: chapter 12 refuses
    to change a completed task's owner."""
    released = []
    for task in tasks.list().tasks:
        mine = task.owner == owner and task.status == "in_progress"
        if mine and tasks.update(task.id, status="pending", owner="").ok:
            released.append(task.id)
    return released


def _refused(error: Exception) -> ToolResult:
    return ToolResult.failed("invalid_arguments", f"nothing was sent: {error}", Status.INVALID)


def _ignored(request_id: str, ignored: Ignored) -> ToolResult:
    return ToolResult.failed(
        "invalid_arguments",
        f"request {request_id} was not answered: {ignored.why}. Nothing changed.",
        Status.INVALID,
    )


@dataclass
class LeaveWhenApproved(Feature):
    """A teammate's: at each request boundary, stop if its shutdown was approved."""

    protocols: Protocols
    name: str

    def before_request(self, run: Run) -> None:
        self.protocols.leave_if_approved(self.name)

    def on_end(self, run: Run, error: BaseException | None) -> None:
        self.protocols.left(self.name)  # approved on its last turn: no next request came


@dataclass
class EndProtocols(Feature):
    """The lead's: when the run ends, the expiry thread ends too."""

    protocols: Protocols | None = None

    def on_end(self, run: Run, error: BaseException | None) -> None:
        if self.protocols is not None:
            self.protocols.end()

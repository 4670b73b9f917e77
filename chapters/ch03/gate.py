"""Step 4 with a policy in it: decide, record, maybe ask; afterwards, record what happened.

Chapter 1's step 4 asked the human about every call with a side effect. Here
the policy decides first; only its `ask` reaches the human. Every decision is
written to the audit log before anything runs, and a decision that cannot be
written is a deny. After a call ran, its outcome is recorded too, so the log
says what was allowed and what came of it.

In the call pipeline (shared/calls.py) the gate is both an authorizer and a
finisher: `CallPipeline(authorize=[gate], finish=[gate])`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chapters.ch01.approve import Refusals, refused_again
from chapters.ch03.asking import NO_ANSWER, NO_TERMINAL, Asker, HumanAnswer
from chapters.ch03.audit import AuditError, AuditLog
from chapters.ch03.policy import Call, Policy, Verdict
from shared.agent import MAIN_AGENT
from shared.approval import ApprovalRequest
from shared.calls import PendingCall
from shared.console import Console
from shared.decisions import Decision
from shared.tools import PreparedCall, ToolResult

REFUSED_BEFORE = "refused earlier in this run, not asked again"  # the audit says how


@dataclass
class PermissionGate:
    policy: Policy
    asker: Asker
    audit: AuditLog
    console: Console
    _decided: dict[int, Call] = field(default_factory=dict)  # by pending call (ids may repeat)
    refused: Refusals = field(default_factory=Refusals)  # chapter 1's: not asked twice

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        """Decide, record, maybe ask. None: the call may run; a result: it may not."""
        prepared = pending.prepared
        call = self.policy.call(prepared.tool, prepared.arguments.plain, prepared.call.id)
        self._decided[id(pending)] = call  # for its outcome line
        verdict = self.policy.decide(call)
        if not self._recorded(prepared, call, verdict.decision, verdict.source):
            return _unrecorded()
        if verdict.decision is Decision.DENY:
            return _denied(call, verdict)
        if verdict.decision is Decision.ASK:
            tool = prepared.tool
            request = ApprovalRequest(
                tool_name=tool.name,
                reason=f"{tool.side_effect.approval_reason} · policy: {verdict.source}",
                arguments=prepared.arguments.plain,
                preview=prepared.preview,
                agent=None if pending.agent == MAIN_AGENT else pending.agent,
            )
            answer = self._ask(request)
            if answer.always:
                self._always(call, verdict)
            decision = Decision.ALLOW if answer.approved else Decision.DENY
            if not self._recorded(prepared, call, decision, f"human: {answer.how}"):
                return _unrecorded()
            if not answer.approved:
                return _refused(call, verdict, answer)
        return None

    def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        """Record the outcome of a call that ran (a denied one has its deny line already)."""
        call = self._decided.pop(id(pending), None)
        if ran and call is not None:
            prepared = pending.prepared
            try:
                self.audit.record_outcome(
                    call_id=prepared.call.id, tool=call.tool, key=call.key, outcome=result.keyword
                )
            except AuditError as error:  # it ran already: say so, loudly
                self.console.error(f"{error}; the outcome of {call.shown} is not in the log")
        return result

    def _always(self, call: Call, verdict: Verdict) -> None:
        """The human answered "a": allow this exact call for the rest of the run, unless
        it may change a control file, which only a yes for the call itself allows."""
        if verdict.control:
            self.console.notice(
                f'allowed this once: "always" does not cover the harness control file '
                f"{verdict.control}, so the next write to it is asked about again"
            )
            return
        rule = self.policy.always_allow(call)
        self.console.notice(f"added for this run: allow {rule.text}")

    def _ask(self, request: ApprovalRequest) -> HumanAnswer:
        """The human's answer; for a call they refused before in this run, that refusal."""
        said = self.refused.get(request.tool_name, request.arguments)
        if said is not None:  # chapter 1's promise: asking again is refused too
            return HumanAnswer(approved=False, feedback=said, how=REFUSED_BEFORE)
        try:
            answer = self.asker.ask(request)
        except Exception as error:  # asking is a safety check: if it fails, deny
            self.console.error(f"asking failed ({type(error).__name__}: {error}); denied")
            return HumanAnswer(approved=False, how=f"asking failed: {error!r}")
        if answer.typed and not answer.approved:  # their own no, not "no terminal"
            self.refused.add(request.tool_name, request.arguments, answer.feedback)
        return answer

    def _recorded(
        self, prepared: PreparedCall, call: Call, decision: Decision, source: str
    ) -> bool:
        try:
            self.audit.record(
                call_id=prepared.call.id,
                tool=call.tool,
                key=call.key,
                decision=decision,
                source=source,
            )
        except AuditError as error:
            self.console.error(f"{error}; the call is denied (no record, no action)")
            return False
        return True


def _denied(call: Call, verdict: Verdict) -> ToolResult:
    if verdict.source.startswith("mode plan"):
        return ToolResult.denied(
            "plan mode is read-only: writes and shell commands are not allowed, so this call "
            "did not run. Read what you need, then answer with your plan in plain text.",
        )
    return ToolResult.denied(
        f"{call.shown} is not allowed ({verdict.source}), so it did not run; asking again "
        "will be denied too. Take a different approach, or tell the user it is not allowed.",
    )


def _refused(call: Call, verdict: Verdict, answer: HumanAnswer) -> ToolResult:
    """A "no" (or nobody to ask), and why: for a control file, what only a human may do."""
    if answer.how == REFUSED_BEFORE:
        return refused_again(answer.feedback)
    said = f" The human said: {answer.feedback}" if answer.feedback else ""
    if verdict.control:
        nobody = answer.how in (NO_TERMINAL, NO_ANSWER)
        who = "nobody was there to answer" if nobody else "the human said no"
        return ToolResult.denied(
            f"{call.shown} may change a harness control file ({verdict.control}): the files "
            f"that decide what the agent may do change only with a human's yes, and {who}, so "
            "it did not run. Do not try another way to change it; tell the user what you "
            f"wanted to change and why.{said}",
        )
    return ToolResult.denied(
        f"the human refused this call, so it did not run; asking again will be refused too.{said}",
    )


def _unrecorded() -> ToolResult:
    return ToolResult.denied(
        "the decision could not be written to the audit log, so the call did not run.",
    )

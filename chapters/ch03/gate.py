"""Step 4 of the loop with a policy in it: prepare, decide, record, maybe ask, run.

Chapter 1's step 4 asked the human about every call with a side effect. Here
the policy decides first; only its `ask` reaches the human. Every decision is
written to the audit log before anything runs, and a decision that cannot be
written is a deny.
"""

from __future__ import annotations

from dataclasses import dataclass

from chapters.ch03.asking import Asker, HumanAnswer
from chapters.ch03.audit import AuditError, AuditLog
from chapters.ch03.policy import Call, Decision, Policy, Verdict
from shared.approval import ApprovalRequest
from shared.console import Console
from shared.messages import ToolCall
from shared.tools import PreparedCall, ToolResult, ToolSnapshot


@dataclass
class PermissionGate:
    """A `CallHandler` for chapter 1's loop: `run_agent(..., handle_call=gate)`."""

    policy: Policy
    asker: Asker
    audit: AuditLog
    console: Console

    def __call__(self, call: ToolCall, snapshot: ToolSnapshot) -> ToolResult:
        prepared = snapshot.prepare(call)  # invalid calls never reach the policy
        result = prepared if isinstance(prepared, ToolResult) else self.decide(prepared)
        self.console.tool_result(call.function.name, result.status, result.content)
        return result

    def decide(self, prepared: PreparedCall, hook: Verdict | None = None) -> ToolResult:
        """Decide, record, maybe ask, then run; `hook` is a PreToolUse hook's say (chapter 4)."""
        tool = prepared.tool
        call = self.policy.call(tool.name, tool.side_effect, prepared.args.model_dump())
        verdict = self.policy.decide(call, hook)
        if not self._recorded(prepared, call, verdict.decision, verdict.source):
            return _unrecorded()
        if verdict.decision is Decision.DENY:
            return _denied(call, verdict)
        if verdict.decision is Decision.ASK:
            request = ApprovalRequest(
                tool_name=tool.name,
                reason=f"{tool.side_effect.approval_reason} · policy: {verdict.source}",
                arguments=prepared.args.model_dump(),
                preview=prepared.preview,
            )
            answer = self._ask(request)
            if answer.always:
                rule = self.policy.always_allow(call)
                self.console.notice(f"added for this run: allow {rule.text}")
            decision = Decision.ALLOW if answer.approved else Decision.DENY
            if not self._recorded(prepared, call, decision, f"human: {answer.how}"):
                return _unrecorded()
            if not answer.approved:
                return _refused(answer.feedback)
        return prepared.invoke()

    def _ask(self, request: ApprovalRequest) -> HumanAnswer:
        try:
            return self.asker.ask(request)
        except Exception as error:  # asking is a safety check: if it fails, deny
            self.console.error(f"asking failed ({type(error).__name__}: {error}); denied")
            return HumanAnswer(approved=False, how=f"asking failed: {error!r}")

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
        return ToolResult.failed(
            "denied",
            "plan mode is read-only: writes and shell commands are not allowed, so this call "
            "did not run. Read what you need, then answer with your plan in plain text.",
        )
    return ToolResult.failed(
        "denied",
        f"{call.shown} is not allowed ({verdict.source}), so it did not run; asking again "
        "will be denied too. Take a different approach, or tell the user it is not allowed.",
    )


def _refused(feedback: str) -> ToolResult:
    said = f" The human said: {feedback}" if feedback else ""
    return ToolResult.failed(
        "denied",
        f"the human refused this call, so it did not run; asking again will be refused too.{said}",
    )


def _unrecorded() -> ToolResult:
    return ToolResult.failed(
        "denied",
        "the decision could not be written to the audit log, so the call did not run.",
    )

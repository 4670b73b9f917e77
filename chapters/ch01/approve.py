"""Chapter 1's one check in step 4: a call with a side effect runs only if the human says yes.

In the call pipeline (shared/calls.py) this is the only authorizer chapter 1
lists. A read runs without asking; anything else is shown to the human, and
only a yes lets it run. If asking itself fails, the answer is no: a safety
check that breaks must not let the call through.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.approval import ApprovalRequest, Approver
from shared.calls import PendingCall
from shared.console import Console
from shared.tools import PreparedCall, ToolResult

DENIED = ToolResult.denied(
    "the human refused this call, so it did not run; asking again will be refused "
    "too. Tell the user in plain text that it was not run, or take a different approach."
)


@dataclass(frozen=True)
class AskHuman:
    """Authorize by asking: `CallPipeline(authorize=[AskHuman(approver, console)])`."""

    approver: Approver
    console: Console

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        if is_approved(pending.prepared, self.approver, self.console):
            return None
        return DENIED


def is_approved(prepared: PreparedCall, approver: Approver, console: Console) -> bool:
    """Ask the human when the tool has a side effect. If asking itself fails, deny."""
    effect = prepared.tool.side_effect
    if not effect.needs_approval:
        return True
    request = ApprovalRequest(
        tool_name=prepared.tool.name,
        reason=effect.approval_reason,
        arguments=prepared.arguments.plain,
        preview=prepared.preview,
    )
    try:
        return approver.approve(request)
    except Exception as error:  # a safety check that fails must not let the call through
        console.error(f"approval failed ({type(error).__name__}: {error}); the call is denied")
        return False

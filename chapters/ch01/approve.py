"""Chapter 1's one check in step 4: a call with a side effect runs only if the human says yes.

In the call pipeline (shared/calls.py) this is the only authorizer chapter 1
lists. A read runs without asking; anything else is shown to the human, and
only a yes lets it run. If asking itself fails, the answer is no: a safety
check that breaks must not let the call through.

A refusal holds for the rest of the run. The model is told that asking again
will be refused too, and the harness keeps that promise: an identical repeat
(the same tool with the same validated arguments, however the JSON was written)
is refused here without asking the human again, and the model reads that it
was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.approval import ApprovalRequest, Approver
from shared.calls import PendingCall
from shared.console import Console
from shared.tools import PreparedCall, ToolResult

DENIED = ToolResult.denied(
    "the human refused this call, so it did not run; asking again will be refused "
    "too. Tell the user in plain text that it was not run, or take a different approach."
)
ALREADY_REFUSED = (
    "the human already refused this exact call (same tool, same arguments) earlier in this "
    "run, so it was not asked again and did not run. Do not repeat it: take a different "
    "approach, or tell the user in plain text that it was not run."
)


@dataclass
class Refusals:
    """The calls the human refused in this run, by tool and validated arguments.

    Each is kept with what the human said along with the no ("" if nothing), so
    that the answer to a repeat says it again.
    """

    said: dict[str, str] = field(default_factory=dict)

    def add(self, tool: str, arguments: Mapping[str, Any], feedback: str = "") -> None:
        self.said[_key(tool, arguments)] = feedback

    def get(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """What the human said when they refused this call; None if they did not refuse it."""
        return self.said.get(_key(tool, arguments))


def refused_again(said: str = "") -> ToolResult:
    """The answer to an identical repeat of a refused call: the human is not asked again."""
    return ToolResult.denied(ALREADY_REFUSED + (f" The human said: {said}" if said else ""))


@dataclass(frozen=True)
class AskHuman:
    """Authorize by asking: `CallPipeline(authorize=[AskHuman(approver, console)])`."""

    approver: Approver
    console: Console
    refused: Refusals = field(default_factory=Refusals)  # this run's refusals

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        tool, arguments = pending.prepared.tool.name, pending.prepared.arguments.plain
        if self.refused.get(tool, arguments) is not None:
            return refused_again()
        if is_approved(pending.prepared, self.approver, self.console):
            return None
        self.refused.add(tool, arguments)
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


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    """The tool and its validated arguments, the same however the model wrote the JSON."""
    return json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=str)

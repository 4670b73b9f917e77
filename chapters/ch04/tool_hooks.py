"""PreToolUse and PostToolUse: hooks around each tool call, in the call pipeline.

PreToolUse hooks run once a call is prepared (so they only ever see valid
input) and before chapter 3's policy decides. What they say enters the policy
as two layers of its own: a deny right after plan mode (a hook cannot
override the deny rules or plan mode, and its deny beats the human's "always"
answers), an allow or ask right after those answers. A PostToolUse hook runs
after a call ran and can only add to what the model reads.

    CallPipeline(authorize=[pre, gate], finish=[gate, post]) with gate's policy
    from `pre.joined(policy)`
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import PASS, Call, Policy, Verdict
from chapters.ch04.hooks import HookEvent, HookResult, Hooks
from shared.calls import PendingCall
from shared.decisions import Decision
from shared.tools import PreparedCall, ToolResult


def tool_event(event: HookEvent, workspace: Workspace, prepared: PreparedCall) -> dict[str, Any]:
    """What a tool hook reads on stdin."""
    return call_event(
        event, workspace, prepared.tool.name, prepared.arguments.plain, prepared.call.id
    )


def call_event(
    event: HookEvent, workspace: Workspace, tool: str, arguments: Mapping[str, Any], call_id: str
) -> dict[str, Any]:
    """The same, for a call known only by its parts (`permissions check` has no prepared call)."""
    return {
        "event": event,
        "workspace": str(workspace.root),
        "tool": tool,
        "input": dict(arguments),
        "tool_call_id": call_id,
    }


@dataclass
class PreToolUseHooks:
    """An authorizer that never refuses by itself: the policy weighs what the hooks said."""

    hooks: Hooks
    workspace: Workspace
    _said: dict[str, Verdict] = field(default_factory=dict)  # this call's say, by its id

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        prepared = pending.prepared
        event = tool_event(HookEvent.PRE_TOOL_USE, self.workspace, prepared)
        said = self.hear(prepared.call.id, prepared.tool.name, event)
        if said.context:
            pending.notes.append(f"[PreToolUse hook] {said.context}")
        return None

    def hear(self, call_id: str, tool: str, event: Mapping[str, Any]) -> HookResult:
        """Run the hooks on one call's event and keep their say for the layers of `joined`."""
        self._said.clear()  # calls are authorized one at a time: an older say is never heard
        said = self.hooks.run(HookEvent.PRE_TOOL_USE, event, tool=tool)
        if said.decision is not Decision.PASSTHROUGH:
            reason = f"PreToolUse hook {said.reason or said.decision}"
            self._said[call_id] = Verdict(said.decision, reason)
        return said

    def joined(self, policy: Policy) -> Policy:
        """`policy` with the hooks' say in it, where the chapter text places it."""
        return policy.with_layer("plan mode", self._deny).with_layer(
            "your answers", self._allow_or_ask
        )

    def _deny(self, call: Call) -> Verdict:
        said = self._said.get(call.call_id)
        if said is None or said.decision is not Decision.DENY:
            return PASS
        return self._said.pop(call.call_id)

    def _allow_or_ask(self, call: Call) -> Verdict:
        said = self._said.pop(call.call_id, None)
        return PASS if said is None else said


@dataclass(frozen=True)
class PostToolUseHooks:
    """A finisher: after a call ran, its hooks see the result and may add to it."""

    hooks: Hooks
    workspace: Workspace

    def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        if not ran:  # refused calls did nothing a PostToolUse hook could look at
            return result
        prepared = pending.prepared
        event: Mapping[str, Any] = {
            **tool_event(HookEvent.POST_TOOL_USE, self.workspace, prepared),
            "result": {"status": result.keyword, "content": result.content},
        }
        said = self.hooks.run(HookEvent.POST_TOOL_USE, event, tool=prepared.tool.name)
        if said.reason:
            pending.notes.append(f"[PostToolUse hook: {said.reason}]")
        if said.context:
            pending.notes.append(f"[PostToolUse hook] {said.context}")
        return result

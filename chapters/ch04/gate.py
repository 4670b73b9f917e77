"""Step 4 with hooks: PreToolUse before the policy, PostToolUse after the tool ran.

Chapter 3's gate still decides, records and asks; a PreToolUse hook's decision
enters its policy right after the deny rules and plan mode (which no hook can
override). A PostToolUse hook can only add to what the model reads.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from chapters.ch02.workspace import Workspace
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Decision, Verdict
from chapters.ch04.hooks import HookEvent, Hooks
from shared.messages import ToolCall
from shared.tools import PreparedCall, ToolResult, ToolSnapshot


@dataclass
class HookedGate:
    """A `CallHandler` for the loop: `run_agent(..., handle_call=HookedGate(...))`."""

    gate: PermissionGate
    hooks: Hooks
    workspace: Workspace

    def __call__(self, call: ToolCall, snapshot: ToolSnapshot) -> ToolResult:
        prepared = snapshot.prepare(call)  # hooks see only validated input
        result = prepared if isinstance(prepared, ToolResult) else self._run(prepared)
        self.gate.console.tool_result(call.function.name, result.status, result.content)
        return result

    def _run(self, prepared: PreparedCall) -> ToolResult:
        payload = {
            "event": HookEvent.PRE_TOOL_USE,
            "workspace": str(self.workspace.root),
            "tool": prepared.tool.name,
            "input": prepared.args.model_dump(),
            "tool_call_id": prepared.call.id,
        }
        before = self.hooks.run(HookEvent.PRE_TOOL_USE, payload, tool=prepared.tool.name)
        verdict = None
        if before.decision is not Decision.PASSTHROUGH:
            verdict = Verdict(
                before.decision, f"PreToolUse hook {before.reason or before.decision}"
            )
        result = self.gate.decide(prepared, hook=verdict)
        notes = [f"[PreToolUse hook] {before.context}"] if before.context else []
        if result.status != "denied":  # it ran: PostToolUse may see it and add to it
            after = {**payload, "event": HookEvent.POST_TOOL_USE, "result": asdict(result)}
            said = self.hooks.run(HookEvent.POST_TOOL_USE, after, tool=prepared.tool.name)
            notes += [f"[PostToolUse hook: {said.reason}]"] if said.reason else []
            notes += [f"[PostToolUse hook] {said.context}"] if said.context else []
        return ToolResult(result.status, "\n".join([result.content, *notes])) if notes else result

"""Hooks: the user's own code at the loop's seams.

A hook is a command (or, in tests and the chapter text, a Python function) that
receives an event as JSON and answers with the same four decisions as chapter
3. The protocol of a command hook:

    stdin        the event: {"event", "workspace", and "tool", "input", "tool_call_id",
                 "result", "prompt" or "answer" as the event has them}
    exit code 0  no objection; stdout may hold a JSON object:
                 {"decision": "allow|deny|ask|passthrough", "reason": "...",
                  "additionalContext": "..."}
    exit code 2  block; stderr is the reason
    anything else, a timeout, or stdout that is not a JSON object: the hook failed

A failed hook never lets a call through silently: for PreToolUse and
UserPromptSubmit it blocks, for Stop it refuses the stop, for PostToolUse the
failure is written into the result the model reads. (Claude Code, by contrast,
blocks only on exit code 2; see the chapter text for why this chapter does not.)
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from shared.decisions import Decision
from shared.process import IS_WINDOWS, CommandOutcome, run_command


class HookEvent(StrEnum):
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"


@dataclass(frozen=True)
class HookReply:
    decision: Decision = Decision.PASSTHROUGH
    reason: str = ""
    context: str = ""  # "additionalContext": text added for the model
    failed: bool = False  # crashed, timed out, or answered nonsense


HookFunction = Callable[[Mapping[str, Any]], HookReply | None]
_RESTRICTIVENESS = [Decision.PASSTHROUGH, Decision.ALLOW, Decision.ASK, Decision.DENY]


@dataclass(frozen=True)
class Hook:
    event: HookEvent
    name: str  # what messages call it: the command, or the function's name
    run: HookFunction
    matcher: re.Pattern[str] | None = None  # tool names (PreToolUse, PostToolUse)

    def applies_to(self, tool: str | None) -> bool:
        return self.matcher is None or tool is None or self.matcher.fullmatch(tool) is not None


@dataclass(frozen=True)
class HookResult:
    """What all hooks of one event said together."""

    decision: Decision
    reason: str  # "guard.py: rm -rf is not allowed; ..." for the model, the human and the audit
    context: str


@dataclass
class Hooks:
    hooks: Sequence[Hook] = ()
    ran: list[tuple[HookEvent, str]] = field(default_factory=list)  # (event, hook name), in order

    def counts(self) -> dict[str, int]:
        """How many hooks each event has, for the start-up line."""
        counts: dict[str, int] = {}
        for hook in self.hooks:
            counts[hook.event] = counts.get(hook.event, 0) + 1
        return counts

    def run(
        self, event: HookEvent, payload: Mapping[str, Any], tool: str | None = None
    ) -> HookResult:
        """Run every matching hook in order; the most restrictive decision wins.

        A failed hook counts as deny. Contexts are joined in order.
        """
        decision, reasons, contexts = Decision.PASSTHROUGH, [], []
        for hook in self.hooks:
            if hook.event is not event or not hook.applies_to(tool):
                continue
            self.ran.append((event, hook.name))
            reply = _call(hook, payload)
            said = Decision.DENY if reply.failed else reply.decision
            if _RESTRICTIVENESS.index(said) > _RESTRICTIVENESS.index(decision):
                decision = said
            if reply.reason:
                reasons.append(f"{hook.name}: {reply.reason}")
            if reply.context:
                contexts.append(reply.context)
        return HookResult(decision, "; ".join(reasons), "\n".join(contexts))


def _call(hook: Hook, payload: Mapping[str, Any]) -> HookReply:
    try:
        reply = hook.run(payload)
    except Exception as error:
        return HookReply(reason=f"crashed ({type(error).__name__}: {error})", failed=True)
    return reply or HookReply()


def command_hook(
    event: HookEvent,
    command: str,
    *,
    name: str | None = None,
    workspace: Path,
    matcher: re.Pattern[str] | None = None,
    timeout: float,
) -> Hook:
    """A hook that runs `command` in the workspace with the event on stdin."""

    def run(payload: Mapping[str, Any]) -> HookReply:
        line = fill_placeholders(command, payload.get("input") or {})
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return read_reply(
            run_command(line, cwd=workspace, timeout=timeout, stdin_data=data), timeout
        )

    return Hook(event, name or command, run, matcher)


def read_reply(outcome: CommandOutcome, timeout: float) -> HookReply:
    """Exit code and stdout, read by the protocol in the module docstring."""
    if outcome.timed_out:
        return HookReply(
            reason=f"timed out after {timeout:g} s (its process tree was killed)", failed=True
        )
    if outcome.exit_code == 2:
        return HookReply(Decision.DENY, _tail(outcome.stderr) or "blocked (exit code 2)")
    if outcome.exit_code != 0:
        said = _tail(outcome.stderr) or _tail(outcome.stdout)
        return HookReply(reason=f"failed with exit code {outcome.exit_code}: {said}", failed=True)
    if not outcome.stdout.strip():
        return HookReply()
    try:
        answer = json.loads(outcome.stdout)
        said = answer.get("decision", "passthrough")
        decision = (
            Decision.DENY if said == "block" else Decision(said)
        )  # "block": Claude Code's word
        return HookReply(
            decision, str(answer.get("reason", "")), str(answer.get("additionalContext", ""))
        )
    except (json.JSONDecodeError, AttributeError, ValueError):
        return HookReply(
            reason=f"printed something that is not a hook answer: {_tail(outcome.stdout)}",
            failed=True,
        )


def fill_placeholders(command: str, values: Mapping[str, Any]) -> str:
    """`ruff format {path}` -> `ruff format 'src/a.py'`: each value quoted for the shell."""

    def quoted(match: re.Match[str]) -> str:
        name = match[1]
        if name not in values:
            return match[0]  # not a placeholder of this call: leave it as written
        value = str(values[name])
        return "'" + value.replace("'", "''") + "'" if IS_WINDOWS else shlex.quote(value)

    return re.sub(r"\{(\w+)\}", quoted, command)


def _tail(text: str, limit: int = 500) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else "…" + flat[-limit:]

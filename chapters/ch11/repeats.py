"""Chapter 11: a loop that notices it repeats itself.

Small models' most common failure in this course is not a crash but a
circle: the same call, the same answer, until the turn limit (`write_file`
answering `no_change: answer.txt already has this content.` nineteen times in
one run; a plan rejected the same way nineteen times). `RepeatGuard` reads
every call's result, whatever stage produced it (a call that ran, one refused,
one whose arguments did not validate, one bound to fail before it was asked
about), and counts the same call with the same result (the call's own id left
out: chapter 8 saves a big result in a file named after it), for as long as
nothing new happens:

    3rd time   the result tells the model it is repeating itself, and what it
               could do instead; the 4th says it again, and when the run stops
    5th time   the run ends with `RepeatedCallError`, once every call of that
               reply has its result (the history stays complete)

Something new is a call, or a result of a call, that has not been seen since
the last new one: it starts every count again. So polling until something
changes is not a loop, and a circle of two calls is one: a small model that
read calc.py, made the same edit_file call (`no_change`), read calc.py again,
and so on until the turn limit, repeated each call with nothing new between.

The same call is the same as the tool runs it, not as the model spelt it: its
arguments validated (a default spelt out, spaces the tool strips), the path a
rule would match resolved by the workspace (`./notes.txt` is `notes.txt`), in
any key order. Arguments that do not validate are compared as written.

The same result has one exception: a read of the harness's own folder
(`.tutorial/`: the audit log, the session log) gets a new line for every call,
written by the harness about that very call. Reading it again is no news, so
such a read is compared by how it ended (`ok`, `not_found`), not by its text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from chapters.ch02.workspace import PathOutsideWorkspace, Workspace
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch11.per_run import PerRun
from chapters.ch11.summary import RecoveryLog
from shared.agent import Run
from shared.errors import AgentError, one_line
from shared.messages import ToolCall
from shared.tools import KeyKind, SideEffect, Tool, ToolResult

WARN_AT = 3
STOP_AT = 5
HARNESS_FOLDER = PurePosixPath(AUDIT_FILE.parent.as_posix())  # .tutorial: what the harness writes


class RepeatedCallError(AgentError):
    """The model made the same call with the same result `STOP_AT` times, nothing new between."""

    def __init__(self, call: ToolCall, result: str, times: int, warned_at: int) -> None:
        super().__init__(
            f"The model made the same call {times} times with nothing new in between and got "
            f"the same result each time: {shown(call)} → {one_line(result, 120)}. It was told "
            f"so from the {_ordinal(warned_at)} time on and did not change course. Make the "
            "prompt say what done looks like, or use a stronger model (--trace shows every call)."
        )
        self.call = call
        self.times = times


@dataclass
class _Streak:
    """A run's calls and results: every one seen, and how often each came since the last new
    one (that one included)."""

    seen: set[tuple[tuple[str, str], str]] = field(default_factory=set)
    counts: dict[tuple[tuple[str, str], str], int] = field(default_factory=dict)
    stop: RepeatedCallError | None = None  # set when a count reached STOP_AT


class RepeatGuard:
    """`workspace` resolves the paths calls name (without one, paths compare as written)."""

    def __init__(
        self,
        warn_at: int = WARN_AT,
        stop_at: int = STOP_AT,
        log: RecoveryLog | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        if not 2 <= warn_at < stop_at:
            raise ValueError(f"need 2 <= warn_at < stop_at, got {warn_at} and {stop_at}")
        self.warn_at = warn_at
        self.stop_at = stop_at
        self.log = log
        self.workspace = workspace
        self._runs: PerRun[_Streak] = PerRun(_Streak)

    def review(
        self, run: Run, call: ToolCall, result: ToolResult, tool: Tool | None = None
    ) -> ToolResult:
        """Count this call and its result; from `warn_at` on, the result says it is a repeat.
        `tool` is the tool the call named, if there is one: it validates the arguments."""
        streak = self._runs(run)
        pair = self._pair(call, result, tool)
        if pair in streak.seen:
            streak.counts[pair] = streak.counts.get(pair, 0) + 1
        else:  # something new: every count starts again
            streak.seen.add(pair)
            streak.counts = {pair: 1}
        count = streak.counts[pair]
        if count >= self.stop_at and streak.stop is None:
            streak.stop = RepeatedCallError(call, result.content, count, self.warn_at)
        if count < self.warn_at:
            return result
        if self.log is not None:
            self.log.warned_of_repeat()
        run.agent.console.notice(
            f"harness: the model made {shown(call)} {count} times with the same result and "
            "nothing new in between; the result tells it that it is repeating itself"
        )
        return result.with_notes([self._note(call, result, count)])

    def check(self, run: Run) -> None:
        """Raise `RepeatedCallError` when a call of the reply just answered reached `stop_at`."""
        streak = self._runs(run)
        if streak.stop is not None:
            error, streak.stop = streak.stop, None
            raise error

    def _pair(
        self, call: ToolCall, result: ToolResult, tool: Tool | None
    ) -> tuple[tuple[str, str], str]:
        """What is compared: the call as it runs (as written, when it cannot run), and its
        result (for a read of the harness's own folder, only how it ended)."""
        as_run = None if tool is None else self._as_run(call, tool)
        if tool is None or as_run is None:
            return call_key(call), result_key(call, result)
        arguments, path = as_run
        key = (call.function.name, json.dumps(arguments, sort_keys=True, default=str))
        own = path is not None and PurePosixPath(path).is_relative_to(HARNESS_FOLDER)
        if own and tool.side_effect is SideEffect.READ:  # the harness wrote what changed
            return key, f"{result.status.value}: {result.keyword}"
        return key, result_key(call, result)

    def _as_run(self, call: ToolCall, tool: Tool) -> tuple[dict[str, Any], str | None] | None:
        """The arguments as the tool receives them, with its key path resolved by the
        workspace, and that path; None when they do not validate. Validating has no side
        effects (shared/tools.py); a path that does not resolve stays as written (the tool
        refuses it the same way however it is spelt)."""
        try:
            raw = json.loads(call.function.arguments or "{}")
        except (ValueError, RecursionError):
            return None
        validated = tool.validate(raw) if isinstance(raw, dict) else None
        if validated is None or isinstance(validated, str):
            return None
        arguments = dict(validated.plain)
        key = tool.key
        value = None if key is None else arguments.get(key.name)
        if key is None or key.kind is not KeyKind.PATH or not isinstance(value, str):
            return arguments, None
        if self.workspace is None:
            return arguments, value
        try:
            arguments[key.name] = self.workspace.relative(self.workspace.resolve(value))
        except PathOutsideWorkspace:
            return arguments, None
        return arguments, arguments[key.name]

    def _note(self, call: ToolCall, result: ToolResult, count: int) -> str:
        if result.ok:
            instead = (
                "The call already did what it does: use this result and take the next step, "
                "or answer if the task is done."
            )
        else:
            instead = (
                "It fails the same way every time. If this result means the step is already "
                "done, take the next step or answer; otherwise change the arguments, use "
                "another tool, or answer and say what is in the way."
            )
        ending = (
            "This is the last time: the run ends now."
            if count >= self.stop_at
            else f"The run ends at the {_ordinal(self.stop_at)} identical call."
        )
        return (
            f"[harness] repeat: this is the {_ordinal(count)} time that you called "
            f"{call.function.name} with these same arguments and got this same result, with "
            "nothing new in between. "
            f"Calling it again will not change it. {instead} {ending}"
        )


def call_key(call: ToolCall) -> tuple[str, str]:
    """The call's name and arguments as written; arguments that are JSON compare by value."""
    try:
        arguments = json.dumps(json.loads(call.function.arguments), sort_keys=True)
    except (ValueError, RecursionError):  # not JSON: compared as written
        arguments = call.function.arguments.strip()
    return call.function.name, arguments


def result_key(call: ToolCall, result: ToolResult) -> str:
    """A digest of the result with its call's id taken out: a result saved to a file is saved
    under the id of the call (chapter 8), so the same output of two calls names two files.
    A digest, because the guard keeps one for every result of the run."""
    content = result.content.replace(call.id, "") if call.id else result.content
    return hashlib.sha256(content.encode("utf-8", errors="replace")).hexdigest()


def shown(call: ToolCall) -> str:
    return f"{call.function.name}({one_line(call.function.arguments, 100)})"


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"

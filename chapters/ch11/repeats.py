"""Chapter 11: a loop that notices it repeats itself.

Small models' most common failure in this course is not a crash but a
circle: the same call, the same answer, until the turn limit (`write_file`
answering `no_change: answer.txt already has this content.` nineteen times in
one run; a plan rejected the same way nineteen times). `RepeatGuard` reads
every call's result, whatever stage produced it (a call that ran, one refused,
one whose arguments did not validate, one bound to fail before it was asked
about), and counts the same call (name and arguments, whatever their key
order) with the same result (the call's own id left out: chapter 8 saves a
big result in a file named after it), in a row:

    3rd time   the result tells the model it is repeating itself, and what it
               could do instead; the 4th says it again, and when the run stops
    5th time   the run ends with `RepeatedCallError`, once every call of that
               reply has its result (the history stays complete)

Anything else in between (another call, another result for the same call)
starts the count again: polling until something changes is not a loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from chapters.ch11.per_run import PerRun
from chapters.ch11.summary import RecoveryLog
from shared.agent import Run
from shared.errors import AgentError, one_line
from shared.messages import ToolCall
from shared.tools import ToolResult

WARN_AT = 3
STOP_AT = 5


class RepeatedCallError(AgentError):
    """The model made the same call with the same result `STOP_AT` times in a row."""

    def __init__(self, call: ToolCall, result: str, times: int, warned_at: int) -> None:
        super().__init__(
            f"The model made the same call {times} times in a row and got the same result each "
            f"time: {shown(call)} → {one_line(result, 120)}. It was told so from the "
            f"{_ordinal(warned_at)} time on and did not change course. Make the prompt say "
            "what done looks like, or use a stronger model (--trace shows every call)."
        )
        self.call = call
        self.times = times


@dataclass
class _Streak:
    key: tuple[str, str] | None = None
    result: str = ""
    count: int = 0
    stop: RepeatedCallError | None = None  # set when the count reached STOP_AT


class RepeatGuard:
    def __init__(
        self, warn_at: int = WARN_AT, stop_at: int = STOP_AT, log: RecoveryLog | None = None
    ) -> None:
        if not 2 <= warn_at < stop_at:
            raise ValueError(f"need 2 <= warn_at < stop_at, got {warn_at} and {stop_at}")
        self.warn_at = warn_at
        self.stop_at = stop_at
        self.log = log
        self._runs: PerRun[_Streak] = PerRun(_Streak)

    def review(self, run: Run, call: ToolCall, result: ToolResult) -> ToolResult:
        """Count this call and its result; from `warn_at` on, the result says it is a repeat."""
        streak = self._runs(run)
        key, same = call_key(call), result_key(call, result)
        if key == streak.key and same == streak.result:
            streak.count += 1
        else:
            streak.key, streak.result, streak.count = key, same, 1
        if streak.count >= self.stop_at and streak.stop is None:
            streak.stop = RepeatedCallError(call, result.content, streak.count, self.warn_at)
        if streak.count < self.warn_at:
            return result
        if self.log is not None:
            self.log.warned_of_repeat()
        run.agent.console.notice(
            f"harness: the model made {shown(call)} {streak.count} times in a row with the same "
            "result; the result tells it that it is repeating itself"
        )
        return result.with_notes([self._note(call, result, streak.count)])

    def check(self, run: Run) -> None:
        """Raise `RepeatedCallError` when a call of the reply just answered reached `stop_at`."""
        streak = self._runs(run)
        if streak.stop is not None:
            error, streak.stop = streak.stop, None
            raise error

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
            f"[harness] repeat: this is the {_ordinal(count)} time in a row that you called "
            f"{call.function.name} with these same arguments and got this same result. "
            f"Calling it again will not change it. {instead} {ending}"
        )


def call_key(call: ToolCall) -> tuple[str, str]:
    """The call's name and arguments; arguments that are JSON compare by value."""
    try:
        arguments = json.dumps(json.loads(call.function.arguments), sort_keys=True)
    except (ValueError, RecursionError):  # not JSON: compared as written
        arguments = call.function.arguments.strip()
    return call.function.name, arguments


def result_key(call: ToolCall, result: ToolResult) -> str:
    """The result with its call's id taken out: a result saved to a file is saved under the
    id of the call (chapter 8), so the same output of two calls names two files."""
    return result.content.replace(call.id, "") if call.id else result.content


def shown(call: ToolCall) -> str:
    return f"{call.function.name}({one_line(call.function.arguments, 100)})"


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"

"""Chapter 7: the tool calls of one reply that can run side by side, run side by side.

The call pipeline (shared/calls.py) runs each call through prepare →
authorize → execute → finish, one after the other. This one keeps every stage
and changes only *when* execute happens:

    consecutive calls whose tool says `concurrency_safe` (the reads) form a
        group; the group's calls execute at the same time, at most
        `max_parallel` at once
    any other call is a barrier: the group before it has finished before it
        is authorized, it runs alone, and nothing after it starts before it
        ends; a call whose arguments do not validate is not safe, so it is one
        too. A tool whose safety depends on its arguments (`task`: which agent
        it starts) implements `SafeByArguments` and is sorted once prepared

    prepare, authorize and finish stay on the loop's thread, in call order, so
    a human is asked about one call at a time and hooks and the audit log see
    the calls in the order the model made them; each group's results are
    finished, shown and handed back in call order, whatever order they ended in

A call that executes beside others has a `Seat` (`current_seat()`): a block it
may print into, which is shown whole right before its result once the group
has finished, and a `stopped` event, set when the group is over, which a long
call (a sub-agent) checks so it does not outlive the run. Agents started by a
call share this pipeline (`AgentSpec.child`), so its `lock` is the family's:
authorize and finish take it, and a sub-agent running beside another never
asks the human while the other does.

A failing call is its own result (a tool that raises becomes a `tool_error`
result, as in the sequential pipeline); the other calls of its group still
finish. Only a limit of the whole run reached inside a call (the family's
request budget) ends the run, as it does in the sequential pipeline. Ctrl-C
while a group runs stops waiting at once: calls not started are cancelled,
and calls already running end on their own (a sub-agent at its next step).

    calls:  read a   read b   read c   write x   read d   read e
    runs:   ├ a, b, c side by side ┤├ x alone ┤├ d, e side by side ┤   time →
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from shared.calls import CallPipeline, PendingCall
from shared.errors import AgentLimitError
from shared.messages import ToolCall
from shared.tools import Arguments, PreparedCall, Status, Tool, ToolResult, ToolSnapshot

if TYPE_CHECKING:
    from shared.agent import Run

DEFAULT_MAX_PARALLEL = 8
INTERRUPT_CHECK_SECONDS = 0.1  # a blocking wait is not interrupted by Ctrl-C on Windows
SIDE_BY_SIDE = "并行 side by side"  # the console line that opens a group


@runtime_checkable
class SafeByArguments(Protocol):
    """A tool that may run beside other calls with some arguments and not with others."""

    def concurrency_safe_for(self, arguments: Arguments) -> bool: ...


@dataclass
class Seat:
    """The place of a call that executes beside others, as the call sees it."""

    stopped: threading.Event  # set when the group is over: finished, or Ctrl-C
    shown: list[str] = field(default_factory=list)

    def show(self, text: str) -> None:
        """Print `text` as one block, right before this call's result, when the group is done."""
        self.shown.append(text)


_SEAT: ContextVar[Seat | None] = ContextVar("tool_call_seat", default=None)


def current_seat() -> Seat | None:
    """The seat of the call executing on this thread when it runs beside others; else None."""
    return _SEAT.get()


@dataclass(frozen=True)
class _Authorized:
    """A safe call, prepared and asked about; `refused` is its answer when it may not run."""

    pending: PendingCall
    refused: ToolResult | None


@dataclass(frozen=True)
class ParallelCallPipeline(CallPipeline):
    max_parallel: int = DEFAULT_MAX_PARALLEL
    lock: threading.RLock = field(default_factory=threading.RLock, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, got {self.max_parallel}")

    def run(
        self, calls: Sequence[ToolCall], snapshot: ToolSnapshot, run: Run
    ) -> Iterator[tuple[ToolCall, ToolResult]]:
        """Each call with its one result, in call order; safe neighbours executed together."""
        group: list[_Authorized] = []
        for call in calls:
            tool = snapshot.get(call.function.name)
            if tool is None or not _may_be_safe(tool):  # a barrier
                yield from self._run_group(group, run)
                group = []
                yield call, self.run_one(call, snapshot, run)
                continue
            prepared = self.prepare_call(call, snapshot, run)
            if isinstance(prepared, ToolResult):  # arguments that do not validate: a barrier
                yield from self._run_group(group, run)
                group = []
                yield call, self._shown(call, prepared, run)
                continue
            if not _safe(prepared.prepared):  # its arguments make it a barrier
                yield from self._run_group(group, run)
                group = []
                yield from self._run_group([self._authorized(prepared)], run)
                continue
            group.append(self._authorized(prepared))
        yield from self._run_group(group, run)

    def authorize_call(self, pending: PendingCall) -> ToolResult | None:
        with self.lock:  # one call at a time in the whole family: never two prompts at once
            return super().authorize_call(pending)

    def finish_call(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        with self.lock:  # hooks and the audit log hear one call at a time
            return super().finish_call(pending, result, ran)

    def execute_together(
        self, calls: Sequence[PendingCall], seats: Sequence[Seat] = ()
    ) -> list[ToolResult]:
        """Execute authorized calls at the same time; their results, in the order given.

        Each call executes with its seat (`seats[i]`, when given) as `current_seat()`.
        """
        if len(calls) <= 1 or self.max_parallel == 1:
            return [self._executed(call, None) for call in calls]
        given = list(seats) or [Seat(threading.Event()) for _ in calls]
        executor = ThreadPoolExecutor(
            max_workers=min(self.max_parallel, len(calls)), thread_name_prefix="tool-call"
        )
        try:
            futures = [
                executor.submit(self._executed, call, seat)
                for call, seat in zip(calls, given, strict=True)
            ]
            running = set(futures)
            while running:  # short waits, so Ctrl-C is seen at once on every platform
                running = wait(running, timeout=INTERRUPT_CHECK_SECONDS).not_done
            return [future.result() for future in futures]
        finally:  # also after Ctrl-C: do not wait for calls that have not started
            for seat in given:
                seat.stopped.set()
            executor.shutdown(wait=False, cancel_futures=True)

    def _authorized(self, pending: PendingCall) -> _Authorized:
        return _Authorized(pending, self.authorize_call(pending))

    def _run_group(
        self, group: Sequence[_Authorized], run: Run
    ) -> Iterator[tuple[ToolCall, ToolResult]]:
        allowed = [item.pending for item in group if item.refused is None]
        console = run.agent.console
        if len(allowed) > 1 and self.max_parallel > 1:
            names = " · ".join(pending.call.function.name for pending in allowed)
            console.info(f"{SIDE_BY_SIDE}: {names} (at most {self.max_parallel} at once)")
        stopped = threading.Event()
        seats = [Seat(stopped) for _ in allowed]
        executed = iter(zip(self.execute_together(allowed, seats), seats, strict=True))
        for item in group:
            ran = item.refused is None
            if item.refused is None:
                result, seat = next(executed)
                for block in seat.shown:  # what the call printed, whole, before its result
                    console.err.write(block)
                    console.err.flush()
            else:
                result = item.refused
            result = self.finish_call(item.pending, result, ran)
            yield item.pending.call, self._shown(item.pending.call, result, run)

    def _executed(self, pending: PendingCall, seat: Seat | None) -> ToolResult:
        token = _SEAT.set(seat)
        try:
            return self.execute_call(pending)
        except AgentLimitError:
            raise  # the whole run is over, not just this call
        except Exception as error:  # a broken stage is this call's result, not the group's end
            return _harness_failure(pending, error)
        finally:
            _SEAT.reset(token)

    @staticmethod
    def _shown(call: ToolCall, result: ToolResult, run: Run) -> ToolResult:
        run.agent.console.tool_result(call.function.name, result.keyword, result.content)
        return result


def _may_be_safe(tool: Tool) -> bool:
    return tool.concurrency_safe or isinstance(tool, SafeByArguments)


def _safe(prepared: PreparedCall) -> bool:
    tool = prepared.tool
    if isinstance(tool, SafeByArguments):
        return tool.concurrency_safe_for(prepared.arguments)
    return tool.concurrency_safe


def _harness_failure(pending: PendingCall, error: Exception) -> ToolResult:
    return ToolResult.failed(
        "tool_error",
        f"{pending.call.function.name} failed inside the harness ({type(error).__name__}: "
        f"{error}); the call may not have completed.",
        Status.ERROR,
    )

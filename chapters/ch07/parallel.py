"""Chapter 7: the tool calls of one reply that can run side by side, run side by side.

The call pipeline (shared/calls.py) runs each call through prepare →
authorize → execute → finish, one after the other. This one keeps every stage
and changes only *when* execute happens:

    consecutive calls whose tool says `concurrency_safe` (the reads) form a
        group; the group's calls execute at the same time, at most
        `max_parallel` at once
    any other call is a barrier: the group before it has finished before it
        is prepared, it runs alone, and nothing after it starts before it ends;
        a call whose arguments do not validate is not safe, so it is one too

    prepare, authorize and finish stay on the loop's thread, in call order, so
    a human is asked about one call at a time and hooks and the audit log see
    the calls in the order the model made them; each group's results are
    finished, shown and handed back in call order, whatever order they ended in

A failing call is its own result (a tool that raises becomes a `tool_error`
result, as in the sequential pipeline); the other calls of its group still
finish. Ctrl-C while a group runs stops waiting at once: calls not started are
cancelled, and reads already running end on their own.

    calls:  read a   read b   read c   write x   read d   read e
    runs:   ├ a, b, c side by side ┤├ x alone ┤├ d, e side by side ┤   time →
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.calls import CallPipeline, PendingCall
from shared.messages import ToolCall
from shared.tools import Status, ToolResult, ToolSnapshot

if TYPE_CHECKING:
    from shared.agent import Run

DEFAULT_MAX_PARALLEL = 8
INTERRUPT_CHECK_SECONDS = 0.1  # a blocking wait is not interrupted by Ctrl-C on Windows


@dataclass(frozen=True)
class _Authorized:
    """A safe call, prepared and asked about; `refused` is its answer when it may not run."""

    pending: PendingCall
    refused: ToolResult | None


@dataclass(frozen=True)
class ParallelCallPipeline(CallPipeline):
    max_parallel: int = DEFAULT_MAX_PARALLEL

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
            if tool is None or not tool.concurrency_safe:  # a barrier
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
            group.append(_Authorized(prepared, self.authorize_call(prepared)))
        yield from self._run_group(group, run)

    def execute_together(self, calls: Sequence[PendingCall]) -> list[ToolResult]:
        """Execute authorized calls at the same time; their results, in the order given."""
        if len(calls) <= 1:
            return [self._executed(call) for call in calls]
        executor = ThreadPoolExecutor(
            max_workers=min(self.max_parallel, len(calls)), thread_name_prefix="tool-call"
        )
        try:
            futures = [executor.submit(self._executed, call) for call in calls]
            running = set(futures)
            while running:  # short waits, so Ctrl-C is seen at once on every platform
                running = wait(running, timeout=INTERRUPT_CHECK_SECONDS).not_done
            return [future.result() for future in futures]
        finally:  # also after Ctrl-C: do not wait for calls that have not started
            executor.shutdown(wait=False, cancel_futures=True)

    def _run_group(
        self, group: Sequence[_Authorized], run: Run
    ) -> Iterator[tuple[ToolCall, ToolResult]]:
        allowed = [item.pending for item in group if item.refused is None]
        executed = iter(self.execute_together(allowed))
        for item in group:
            ran = item.refused is None
            result = next(executed) if item.refused is None else item.refused
            result = self.finish_call(item.pending, result, ran)
            yield item.pending.call, self._shown(item.pending.call, result, run)

    def _executed(self, pending: PendingCall) -> ToolResult:
        try:
            return self.execute_call(pending)
        except Exception as error:  # a broken stage is this call's result, not the group's end
            return _harness_failure(pending, error)

    @staticmethod
    def _shown(call: ToolCall, result: ToolResult, run: Run) -> ToolResult:
        run.agent.console.tool_result(call.function.name, result.keyword, result.content)
        return result


def _harness_failure(pending: PendingCall, error: Exception) -> ToolResult:
    return ToolResult.failed(
        "tool_error",
        f"{pending.call.function.name} failed inside the harness ({type(error).__name__}: "
        f"{error}); the call may not have completed.",
        Status.ERROR,
    )

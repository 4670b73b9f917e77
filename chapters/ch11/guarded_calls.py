"""Chapter 11's step 4: the chapter's call pipeline, with two guards around it.

The guards need what no authorizer or finisher sees: every call of a reply
and every result, including a call whose arguments did not validate or that
was bound to fail before anyone was asked (`no_change`), which never reaches
the authorize and finish stages. So they sit around the pipeline's `run`:

    before   a reply cut at the output limit (chapters/ch11/continuation.py):
             none of its calls reaches the pipeline; each gets a `cut_off`
             result saying why, in call order, shown as any result is
    after    each result the pipeline hands back is read by the repeat guard
             (chapters/ch11/repeats.py), with the tool the call named (to compare
             calls as they ran), which may add a note for the model;
             when the reply's last result is in, the guard may end the run

The inner pipeline is used as it is (sequential, or chapter 7's side by side,
with the chapter's authorizers and finishers), and its stages are this
object's stages too, so whoever reads `spec.calls.authorize` sees the real ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chapters.ch11.continuation import ContinueAfterLength, cut_result
from chapters.ch11.repeats import RepeatGuard
from shared.calls import CallPipeline
from shared.messages import ToolCall
from shared.tools import ToolResult, ToolSnapshot

if TYPE_CHECKING:
    from shared.agent import Run


@dataclass(frozen=True, kw_only=True)
class GuardedCalls(CallPipeline):
    inner: CallPipeline
    cut_replies: ContinueAfterLength | None = None  # the spec's reply check, when it is one
    repeats: RepeatGuard | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "authorize", self.inner.authorize)
        object.__setattr__(self, "finish", self.inner.finish)

    def run(
        self, calls: Sequence[ToolCall], snapshot: ToolSnapshot, run: Run
    ) -> Iterator[tuple[ToolCall, ToolResult]]:
        if self.cut_replies is not None and self.cut_replies.cut_calls(run, calls):
            for position, call in enumerate(calls):
                result = cut_result(call, last=position == len(calls) - 1)
                run.agent.console.tool_result(call.function.name, result.keyword, result.content)
                yield call, result
            return
        for call, result in self.inner.run(calls, snapshot, run):
            yield call, self._reviewed(call, result, snapshot, run)
        if self.repeats is not None:
            self.repeats.check(run)  # every call has its result: the run may end here

    def run_one(self, call: ToolCall, snapshot: ToolSnapshot, run: Run) -> ToolResult:
        return self._reviewed(call, self.inner.run_one(call, snapshot, run), snapshot, run)

    def _reviewed(
        self, call: ToolCall, result: ToolResult, snapshot: ToolSnapshot, run: Run
    ) -> ToolResult:
        """The guard's reading of the result; it validates the call with the tool the
        request offered, to compare calls as they ran."""
        if self.repeats is None:
            return result
        return self.repeats.review(run, call, result, snapshot.get(call.function.name))

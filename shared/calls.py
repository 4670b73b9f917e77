"""Step 4 of the loop as a pipeline: prepare, authorize, execute, finish, for each tool call.

    prepare    look the tool up, parse and validate the arguments, compute the
               preview; no side effects. A call that fails here gets its result now.
    authorize  each authorizer in order, one call at a time: the first that
               refuses decides, and the call does not run (a human, a policy, a hook).
    execute    the tool runs.
    finish     each finisher in order may add to the result, or replace what the
               model sees (a hook's note, an audit record of the outcome).

Whatever happens, every call gets exactly one result, in call order, unless the
run itself ends (Ctrl-C, a run-wide limit); the console shows each one, and on a
terminal shows a program running while it runs. A chapter changes step 4 by
listing authorizers and finishers in its composition module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from shared.errors import AgentLimitError
from shared.messages import ToolCall
from shared.tools import PreparedCall, SideEffect, ToolResult, ToolSnapshot

if TYPE_CHECKING:
    from shared.agent import Run
    from shared.console import Console


@dataclass
class PendingCall:
    """A prepared call on its way through the pipeline."""

    prepared: PreparedCall
    agent: str  # the name of the agent that made the call
    notes: list[str] = field(default_factory=list)  # lines a stage adds for the model

    @property
    def call(self) -> ToolCall:
        return self.prepared.call


class Authorizer(Protocol):
    def authorize(self, pending: PendingCall) -> ToolResult | None:
        """None: no objection. A result: the call does not run, and this is its answer."""
        ...


class Finisher(Protocol):
    def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        """The result the model will read; `ran` says whether the tool was executed."""
        ...


@dataclass(frozen=True)
class CallPipeline:
    authorize: Sequence[Authorizer] = ()
    finish: Sequence[Finisher] = ()

    def run(
        self, calls: Sequence[ToolCall], snapshot: ToolSnapshot, run: Run
    ) -> Iterator[tuple[ToolCall, ToolResult]]:
        """Each call, in order, with its one result."""
        for call in calls:
            yield call, self.run_one(call, snapshot, run)

    def run_one(self, call: ToolCall, snapshot: ToolSnapshot, run: Run) -> ToolResult:
        prepared = self.prepare_call(call, snapshot, run)
        if isinstance(prepared, ToolResult):
            result = prepared
        else:
            refused = self.authorize_call(prepared)
            ran = refused is None
            if refused is None:
                with _shown_running(prepared.prepared, run.agent.console):
                    result = self.execute_call(prepared)
            else:
                result = refused
            result = self.finish_call(prepared, result, ran)
        run.agent.console.tool_result(call.function.name, result.keyword, result.content)
        return result

    def prepare_call(
        self, call: ToolCall, snapshot: ToolSnapshot, run: Run
    ) -> PendingCall | ToolResult:
        prepared = snapshot.prepare(call)  # no side effects: nothing runs before it is authorized
        if isinstance(prepared, ToolResult):
            return prepared
        return PendingCall(prepared, agent=run.agent.name)

    def authorize_call(self, pending: PendingCall) -> ToolResult | None:
        """The first refusal decides. An authorizer that breaks refuses: it is a safety check."""
        for authorizer in self.authorize:
            try:
                refused = authorizer.authorize(pending)
            except AgentLimitError:
                raise  # the whole run is over, not just this call
            except Exception as error:
                return ToolResult.denied(
                    f"the check {type(authorizer).__name__} failed ({type(error).__name__}: "
                    f"{error}), so the call did not run."
                )
            if refused is not None:
                return refused
        return None

    def execute_call(self, pending: PendingCall) -> ToolResult:
        return pending.prepared.invoke()

    def finish_call(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        for finisher in self.finish:
            result = finisher.finish(pending, result, ran)
        return result.with_notes(pending.notes)


def _shown_running(prepared: PreparedCall, console: Console) -> AbstractContextManager[None]:
    """A program that runs may take a while: the console shows it running (on a terminal)."""
    if prepared.tool.side_effect is not SideEffect.EXECUTE:
        return nullcontext()
    key = prepared.tool.key
    value = prepared.arguments.plain.get(key.name) if key is not None else None
    lines = str(value or "").strip().splitlines()
    what = lines[0] if lines else prepared.tool.name  # a command's first line, say
    return console.running(what if len(what) <= 80 else what[:79] + "…")

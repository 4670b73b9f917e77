"""`task` side by side: which sub-agents may run at the same time, and how they print.

Chapter 6's task tool (chapters/ch06/task.py) is not concurrency-safe: with
the parallel pipeline (chapters/ch07/parallel.py) every `task` call would be
a barrier. Here the tool decides per call, because the agent is an argument:

    which task calls are safe   a task whose agent has only concurrency-safe
                                tools (explore: read_file, glob, grep) is safe,
                                so several in one reply run their children side
                                by side; a task for an agent that can write or run
                                commands (general) is a barrier
    how a child prints          alone (no other call running), as in chapter 6:
                                live, nested under the parent, its text streaming.
                                Beside other calls, into a block of its own that the
                                pipeline prints whole, before the call's result, once
                                the group has finished: it starts with the line that
                                names the agent and its task, and two children's
                                lines never mix
    how a child stops           beside other calls, before each request and at each
                                chunk it checks its group's `stopped` event: after
                                Ctrl-C (or when a sibling ended the run) it stops
                                there, instead of working on while the program exits
    what children share         the call pipeline and its lock (one approval prompt
                                at a time in the whole family), and the request
                                budget, counted under a lock of its own

A child that fails (a broken stream, an empty reply, a provider error) is the
child's failure, as in chapter 6: the parent reads `subagent_failed:`.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields, replace
from typing import Any

from chapters.ch06.budget import RequestBudget
from chapters.ch06.definitions import AgentCatalog, AgentDefinition
from chapters.ch06.task import Delegation, TaskArgs
from chapters.ch06.task import make_task_tool as chapter6_task_tool
from chapters.ch07.parallel import current_seat
from chapters.ch07.stream_console import StreamingConsole
from shared.agent import Run
from shared.completion import ExchangeObserver, ModelClient, ReportingModelClient
from shared.console import Console
from shared.errors import AgentError, ProviderError
from shared.tools import Arguments, PydanticTool, ToolResult


@dataclass(frozen=True)
class TaskTool(PydanticTool):
    """Chapter 6's `task`, which says for each call whether it may run beside others."""

    safe_agent: Callable[[str], bool] = lambda name: False

    def concurrency_safe_for(self, arguments: Arguments) -> bool:
        args = arguments.value
        return isinstance(args, TaskArgs) and self.safe_agent(args.agent)


def make_task_tool(agents: AgentCatalog, delegation: Delegation) -> TaskTool:
    """`task` for the agents of `agents`, started by `delegation`, side by side when safe."""

    def reads_only(name: str) -> bool:
        definition = agents.get(name)
        if definition is None:
            return False
        return all(tool.concurrency_safe for tool in delegation.child_tools(definition).values())

    tool = chapter6_task_tool(agents, SideBySide(delegation).start)
    same = {part.name: getattr(tool, part.name) for part in fields(tool)}
    return TaskTool(**same, safe_agent=reads_only)


class Stopped(AgentError):
    """A sub-agent that ran beside other calls stopped: its group is over."""

    def __init__(self) -> None:
        super().__init__("the calls it ran beside are over (Ctrl-C, or the run ended); it stopped")


@dataclass(frozen=True)
class SideBySide:
    """Starts a child as chapter 6 does; beside other calls, into a block of its own."""

    delegation: Delegation

    def start(self, definition: AgentDefinition, args: TaskArgs) -> ToolResult:
        seat = current_seat()
        if seat is None:  # the only call running: live, as in chapter 6
            return self.delegation.start(definition, args)
        parent = self.delegation.parent
        block = block_console(parent.console)
        quiet = replace(parent, console=block, model=Stoppable(parent.model, seat.stopped))
        try:
            return replace(self.delegation, parent=quiet).start(definition, args)
        finally:
            seat.show(block.printed())


class BlockConsole(StreamingConsole):
    """A plain streaming console that writes into memory, to be shown later as one block."""

    def printed(self) -> str:
        assert isinstance(self.err, io.StringIO)
        return self.err.getvalue()


def block_console(console: Console) -> BlockConsole:
    """Where a child running beside others prints: like `console`, but into a block."""
    block = BlockConsole(out=console.out, err=io.StringIO(), fancy=False, trace=console.tracing)
    block.label, block.indent = console.label, console.indent
    return block


class Stoppable:
    """The model, for a child beside other calls: it stops before a request or at a chunk
    once `stopped` is set (a `Stopped` error, which the child's task turns into its result)."""

    def __init__(self, model: ModelClient, stopped: threading.Event) -> None:
        self.model = model
        self.stopped = stopped
        self.name = model.name
        self.label = model.label
        self.request_fields: Mapping[str, Any] = (
            model.request_fields if isinstance(model, ReportingModelClient) else {}
        )

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self._check()
        return self.model.complete(request)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver
    ) -> Mapping[str, Any]:
        self._check()
        if not isinstance(self.model, ReportingModelClient):
            return self.model.complete(request)
        return self.model.complete_reporting(request, _StopAtChunk(observer, self._check))

    def _check(self) -> None:
        if self.stopped.is_set():
            raise Stopped()


@dataclass(frozen=True)
class _StopAtChunk:
    """An exchange's observer that first checks, at each piece of a stream, whether to stop."""

    observer: ExchangeObserver
    check: Callable[[], None]

    def chunk_received(self, number: int, chunk: Mapping[str, Any]) -> None:
        self.check()
        forward = getattr(self.observer, "chunk_received", None)
        if forward is not None:
            forward(number, chunk)

    def reasoning_arrived(self, text: str) -> None:
        forward = getattr(self.observer, "reasoning_arrived", None)
        if forward is not None:
            forward(text)

    def text_arrived(self, text: str) -> None:
        forward = getattr(self.observer, "text_arrived", None)
        if forward is not None:
            forward(text)

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None:
        self.observer.request_sent(title, request)

    def waiting(self, what: str) -> AbstractContextManager[None]:
        return self.observer.waiting(what)

    def response_received(self, title: str, body: Mapping[str, Any]) -> None:
        self.observer.response_received(title, body)

    def response_failed(self, title: str, error: ProviderError) -> None:
        self.observer.response_failed(title, error)

    def said_while_calling(self, text: str) -> None:
        self.observer.said_while_calling(text)


@dataclass
class SharedBudget(RequestBudget):
    """Chapter 6's request budget, counted under a lock: children side by side ask at once."""

    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def before_request(self, run: Run) -> None:
        with self.lock:
            super().before_request(run)

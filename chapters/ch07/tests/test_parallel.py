"""Tool calls side by side: who runs together, who runs alone, and what the history gets.

No test sleeps. Overlap is proven with a `threading.Barrier`: two calls that
each wait for the other can only both finish if they run at the same time
(the timeout turns a broken pipeline into a failure instead of a hang).
Grouping is proven by recording what `execute_together` is given.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from chapters.ch01.loop import run_agent
from chapters.ch07 import parallel
from chapters.ch07.parallel import (
    DEFAULT_MAX_PARALLEL,
    ParallelCallPipeline,
    Seat,
    current_seat,
)
from chapters.ch07.scripted_stream import ScriptedStreamingModel, chunk, text_stream
from chapters.ch07.tests.support import err_text, recording_console
from shared.agent import AgentSpec, Run
from shared.calls import PendingCall
from shared.errors import AgentLimitError
from shared.messages import FunctionCall, Message, ToolCall, ToolMessage
from shared.scripted import ScriptedModel
from shared.tools import Arguments, PydanticTool, SideEffect, Status, ToolRegistry, ToolResult

WAIT = 5.0  # seconds a broken pipeline gets before its test fails instead of hanging


class CallId(BaseModel):
    """A test tool's one argument: the id it logs."""

    model_config = ConfigDict(extra="forbid")
    id: str


def tool(name: str, run: Callable[[str], ToolResult], *, safe: bool) -> PydanticTool:
    return PydanticTool(
        name=name,
        description=f"{name} (test tool)",
        args_model=CallId,
        side_effect=SideEffect.READ if safe else SideEffect.WRITE,
        run=lambda arguments: run(arguments.id),
        concurrency_safe=safe,
    )


def call(name: str, call_id: str, arguments: str | None = None) -> ToolCall:
    raw = arguments if arguments is not None else json.dumps({"id": call_id})
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=raw))


@dataclass
class Log:
    """What happened, in order, from any thread."""

    lines: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)


def read_tools(log: Log, work: Callable[[str], object] = lambda _: None) -> ToolRegistry:
    """`read` (safe) and `write` (a barrier); each logs its start and end around `work`."""

    def body(call_id: str) -> ToolResult:
        log(f"start {call_id}")
        work(call_id)
        log(f"end {call_id}")
        return ToolResult.success(f"done {call_id}")

    return ToolRegistry([tool("read", body, safe=True), tool("write", body, safe=False)])


def a_run(tools: ToolRegistry, pipeline: ParallelCallPipeline) -> Run:
    spec = AgentSpec(
        model=ScriptedModel([]),
        tools=tools,
        calls=pipeline,
        console=recording_console(),
        system_prompt="test",
    )
    return Run(spec, "test", [])


def results(
    pipeline: ParallelCallPipeline, tools: ToolRegistry, calls: Sequence[ToolCall]
) -> list[tuple[str, ToolResult]]:
    run = a_run(tools, pipeline)
    return [(c.id, result) for c, result in pipeline.run(calls, tools.snapshot(), run)]


@dataclass(frozen=True)
class Grouping(ParallelCallPipeline):
    """Records the groups it is asked to execute together, then executes them one by one."""

    groups: list[list[str]] = field(default_factory=list)

    def execute_together(
        self, calls: Sequence[PendingCall], seats: Sequence[Seat] = ()
    ) -> list[ToolResult]:
        self.groups.append([pending.call.id for pending in calls])
        return [self.execute_call(pending) for pending in calls]


# --- side by side ----------------------------------------------------------------------------


def test_concurrency_safe_calls_run_at_the_same_time() -> None:
    meet = threading.Barrier(2, timeout=WAIT)
    tools = read_tools(Log(), lambda _: meet.wait())
    got = results(ParallelCallPipeline(), tools, [call("read", "a"), call("read", "b")])
    assert [(i, r.status) for i, r in got] == [("a", Status.OK), ("b", Status.OK)]


def test_at_most_max_parallel_calls_run_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    meet = threading.Barrier(3, timeout=WAIT)  # three at a time can meet, two cannot
    active, peak = [0], [0]
    lock = threading.Lock()

    def work(_: str) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        meet.wait()
        with lock:
            active[0] -= 1

    workers: list[int] = []

    class Counted(ThreadPoolExecutor):
        def __init__(self, max_workers: int, **options: Any) -> None:
            workers.append(max_workers)
            super().__init__(max_workers, **options)

    monkeypatch.setattr(parallel, "ThreadPoolExecutor", Counted)
    tools = read_tools(Log(), work)
    calls = [call("read", f"r{n}") for n in range(6)]
    got = results(ParallelCallPipeline(max_parallel=3), tools, calls)
    assert all(r.ok for _, r in got)
    assert peak == [3]  # three did run at once...
    assert workers == [3]  # ...and no more could


def test_the_default_cap_is_eight() -> None:
    assert DEFAULT_MAX_PARALLEL == 8
    assert ParallelCallPipeline().max_parallel == 8
    with pytest.raises(ValueError, match="at least 1"):
        ParallelCallPipeline(max_parallel=0)


# --- barriers --------------------------------------------------------------------------------


def test_a_call_that_is_not_safe_runs_alone_between_groups() -> None:
    log = Log()
    pipeline = Grouping()
    calls = [call("read", "a"), call("read", "b"), call("write", "x"), call("read", "c"),
             call("read", "d")]  # fmt: skip
    got = results(pipeline, read_tools(log), calls)
    assert [i for i, _ in got] == ["a", "b", "x", "c", "d"]
    assert pipeline.groups == [["a", "b"], ["c", "d"]]  # x ran alone, through run_one
    start_x, end_x = log.lines.index("start x"), log.lines.index("end x")
    assert log.lines[start_x + 1] == "end x"
    assert {"end a", "end b"} <= set(log.lines[:start_x])
    assert {"start c", "start d"} <= set(log.lines[end_x:])


def test_the_barrier_holds_with_real_threads() -> None:
    log = Log()
    calls = [call("read", "a"), call("read", "b"), call("write", "x"), call("read", "c")]
    results(ParallelCallPipeline(), read_tools(log), calls)
    assert log.lines.index("start x") > max(log.lines.index("end a"), log.lines.index("end b"))
    assert log.lines.index("start c") > log.lines.index("end x")


def test_a_call_whose_arguments_do_not_validate_is_a_barrier() -> None:
    pipeline = Grouping()
    calls = [call("read", "a"), call("read", "bad", '{"id": 7}'), call("read", "c")]
    got = results(pipeline, read_tools(Log()), calls)
    assert pipeline.groups == [["a"], ["c"]]
    assert got[1][1].status is Status.INVALID


def test_an_unknown_tool_is_a_barrier_with_its_own_result() -> None:
    pipeline = Grouping()
    got = results(pipeline, read_tools(Log()), [call("read", "a"), call("nope", "n"),
                                                 call("read", "c")])  # fmt: skip
    assert pipeline.groups == [["a"], ["c"]]
    assert got[1][1].keyword == "unknown_tool"


# --- order of results and of prompts ---------------------------------------------------------


def test_results_come_in_call_order_whatever_order_the_calls_finished() -> None:
    b_done = threading.Event()
    log = Log()

    def work(call_id: str) -> None:
        if call_id == "a":
            assert b_done.wait(WAIT), "b never finished: the calls did not overlap"
        else:
            b_done.set()

    got = results(ParallelCallPipeline(), read_tools(log, work), [call("read", "a"),
                                                                  call("read", "b")])  # fmt: skip
    assert [i for i, _ in got] == ["a", "b"]
    assert [line for line in log.lines if line.startswith("end")] == ["end b", "end a"]


def test_the_console_shows_each_result_as_one_block_in_call_order() -> None:
    b_done = threading.Event()

    def work(call_id: str) -> None:
        if call_id == "a":
            b_done.wait(WAIT)
        else:
            b_done.set()

    tools = read_tools(Log(), work)
    pipeline = ParallelCallPipeline()
    run = a_run(tools, pipeline)
    list(pipeline.run([call("read", "a"), call("read", "b")], tools.snapshot(), run))
    shown = err_text(run.agent.console)
    assert shown == (
        "并行 side by side: read · read (at most 8 at once)\n"
        "[read → ok]\ndone a\n[read → ok]\ndone b\n"
    )


@dataclass
class Asker:
    """An authorizer that records who asked, from which thread, and how many at once."""

    refuse: set[str] = field(default_factory=set)
    asked: list[str] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)
    active: int = 0
    peak: int = 0

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.asked.append(pending.call.id)
        self.threads.add(threading.get_ident())
        self.active -= 1
        return ToolResult.denied("refused") if pending.call.id in self.refuse else None


def test_approval_is_asked_one_call_at_a_time_in_call_order() -> None:
    asker = Asker(refuse={"b"})
    log = Log()
    pipeline = ParallelCallPipeline(authorize=[asker])
    calls = [call("read", "a"), call("read", "b"), call("write", "x"), call("read", "c"),
             call("read", "d")]  # fmt: skip
    got = results(pipeline, read_tools(log), calls)
    assert asker.asked == ["a", "b", "x", "c", "d"]
    assert asker.threads == {threading.get_ident()}  # all on the loop's thread
    assert asker.peak == 1
    assert dict(got)["b"].status is Status.DENIED
    assert "start b" not in log.lines  # refused: it never ran; the others did
    assert {"end a", "end x", "end c", "end d"} <= set(log.lines)


# --- failures --------------------------------------------------------------------------------


def test_a_failure_or_timeout_of_one_call_is_its_result_and_the_others_finish() -> None:
    meet = threading.Barrier(2, timeout=WAIT)

    def body(call_id: str) -> ToolResult:
        if call_id == "boom":
            raise RuntimeError("disk on fire")
        if call_id == "slow":
            return ToolResult.failed("timeout", "gave up after 30 s")
        meet.wait()  # "a" and "b" still run side by side
        return ToolResult.success(call_id)

    tools = ToolRegistry([tool("read", body, safe=True)])
    calls = [call("read", i) for i in ("a", "boom", "slow", "b")]
    got = dict(results(ParallelCallPipeline(), tools, calls))
    assert got["boom"].status is Status.ERROR and "disk on fire" in got["boom"].content
    assert got["slow"].keyword == "timeout"
    assert got["a"].ok and got["b"].ok


def test_a_stage_that_breaks_inside_a_group_is_that_calls_result() -> None:
    @dataclass(frozen=True)
    class Breaking(ParallelCallPipeline):
        def execute_call(self, pending: PendingCall) -> ToolResult:
            if pending.call.id == "b":
                raise OSError("stage broke")
            return super().execute_call(pending)

    got = dict(results(Breaking(), read_tools(Log()), [call("read", "a"), call("read", "b")]))
    assert got["a"].ok
    assert got["b"].status is Status.ERROR and "stage broke" in got["b"].content


def test_ctrl_c_while_a_group_runs_stops_waiting_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two calls run and hold; the third waits for a place. Ctrl-C: no waiting, c never starts."""
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs POSIX signals")
    main = threading.get_ident()
    all_queued, release = threading.Event(), threading.Event()
    log = Log()

    submitted: list[int] = []

    class Watched(ThreadPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            future = super().submit(*args, **kwargs)
            submitted.append(1)
            if len(submitted) == 3:
                all_queued.set()  # c waits in the queue: its two places are a's and b's
            return future

    def work(call_id: str) -> None:
        if call_id == "a":
            assert all_queued.wait(WAIT)
            signal.pthread_kill(main, signal.SIGINT)
        release.wait(WAIT)  # both still running when the loop stops waiting

    monkeypatch.setattr(parallel, "ThreadPoolExecutor", Watched)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        calls = [call("read", "a"), call("read", "b"), call("read", "c")]
        with pytest.raises(KeyboardInterrupt):
            results(ParallelCallPipeline(max_parallel=2), read_tools(log, work), calls)
        assert "end a" not in log.lines  # the loop did not wait for the running calls
    finally:
        release.set()
        signal.signal(signal.SIGINT, previous)
    for worker in threading.enumerate():  # let the running calls end, then look
        if worker.name.startswith("tool-call"):
            worker.join(WAIT)
    assert {"end a", "end b"} <= set(log.lines)
    assert "start c" not in log.lines  # cancelled before it started


# --- in the one loop -------------------------------------------------------------------------


def test_in_the_loop_one_tool_message_per_call_id_in_call_order() -> None:
    b_done = threading.Event()

    def work(call_id: str) -> None:
        if call_id == "call_a":
            b_done.wait(WAIT)
        elif call_id == "call_b":
            b_done.set()

    calls = [
        {"index": n, "id": f"call_{name}", "type": "function",
         "function": {"name": "read", "arguments": json.dumps({"id": f"call_{name}"})}}
        for n, name in enumerate("abc")
    ]  # fmt: skip
    model = ScriptedStreamingModel(
        [[chunk({"tool_calls": calls}), chunk({}, "tool_calls")], text_stream("read all three")]
    )
    console = recording_console()
    spec = AgentSpec(
        model=model,
        tools=read_tools(Log(), work),
        calls=ParallelCallPipeline(),
        console=console,
        system_prompt="test",
    )
    history: list[Message] = []
    assert run_agent("read", spec, history=history) == "read all three"
    tool_messages = [m for m in history if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tool_messages] == ["call_a", "call_b", "call_c"]
    assert [m.content for m in tool_messages] == ["done call_a", "done call_b", "done call_c"]
    assert model.requests[1]["messages"][-3:] == [m.wire for m in tool_messages]


# --- safety that depends on the arguments ------------------------------------------------------


@dataclass(frozen=True)
class ByArguments(PydanticTool):
    """Safe only when its `id` starts with "safe" (as `task` is, for a read-only agent)."""

    def concurrency_safe_for(self, arguments: Arguments) -> bool:
        return str(arguments.value.id).startswith("safe")


def test_a_tool_safe_by_its_arguments_joins_a_group_or_is_a_barrier() -> None:
    log = Log()
    body = read_tools(log)["read"]
    assert isinstance(body, PydanticTool)
    either = ByArguments(
        **{f.name: getattr(body, f.name) for f in fields(body)} | {"name": "either"}
    )
    tools = ToolRegistry([body, either])
    pipeline = Grouping()
    calls = [call("read", "a"), call("either", "safe_b"), call("either", "x"),
             call("either", "safe_c"), call("read", "d")]  # fmt: skip
    got = results(pipeline, tools, calls)
    assert [i for i, _ in got] == ["a", "safe_b", "x", "safe_c", "d"]
    assert pipeline.groups == [["a", "safe_b"], ["x"], ["safe_c", "d"]]  # x ran alone
    assert log.lines.index("start x") > log.lines.index("end safe_b")


# --- what a call beside others may print, and when the group is over ----------------------------


def test_a_call_beside_others_prints_a_block_shown_whole_before_its_result() -> None:
    meet = threading.Barrier(2, timeout=WAIT)
    seats: list[Seat | None] = []

    def work(call_id: str) -> None:
        seat = current_seat()
        seats.append(seat)
        if call_id == "alone":
            return
        assert seat is not None
        seat.show(f"{call_id}: first line\n")
        meet.wait()  # both are half-way through their block at the same time
        seat.show(f"{call_id}: second line\n")

    tools = read_tools(Log(), work)
    pipeline = ParallelCallPipeline()
    run = a_run(tools, pipeline)
    calls = [call("read", "a"), call("read", "b"), call("write", "alone")]
    list(pipeline.run(calls, tools.snapshot(), run))
    assert err_text(run.agent.console) == (
        "并行 side by side: read · read (at most 8 at once)\n"
        "a: first line\na: second line\n[read → ok]\ndone a\n"
        "b: first line\nb: second line\n[read → ok]\ndone b\n"
        "[write → ok]\ndone alone\n"
    )
    assert seats[-1] is None  # a call that runs alone has no seat
    assert all(seat is not None and seat.stopped.is_set() for seat in seats[:2])


def test_with_max_parallel_1_calls_run_one_by_one_on_the_loops_thread() -> None:
    threads: list[int] = []
    seats: list[Seat | None] = []

    def work(call_id: str) -> None:
        threads.append(threading.get_ident())
        seats.append(current_seat())

    tools = read_tools(Log(), work)
    pipeline = ParallelCallPipeline(max_parallel=1)
    run = a_run(tools, pipeline)
    list(pipeline.run([call("read", "a"), call("read", "b")], tools.snapshot(), run))
    assert threads == [threading.get_ident()] * 2
    assert seats == [None, None]
    assert "side by side" not in err_text(run.agent.console)


# --- one family, one lock -----------------------------------------------------------------------


def held_elsewhere(lock: threading.RLock) -> bool:
    """Whether another thread holds `lock` now (asked from a thread of its own)."""
    free: list[bool] = []

    def probe() -> None:
        took = lock.acquire(blocking=False)
        free.append(took)
        if took:
            lock.release()

    prober = threading.Thread(target=probe)
    prober.start()
    prober.join(WAIT)
    return free == [False]


def test_authorize_and_finish_hold_the_familys_lock() -> None:
    """Agents started by a call share the pipeline: while one asks, no other can."""
    held: list[str] = []

    @dataclass
    class Watching:
        pipeline: list[ParallelCallPipeline] = field(default_factory=list)

        def authorize(self, pending: PendingCall) -> ToolResult | None:
            if held_elsewhere(self.pipeline[0].lock):
                held.append(f"authorize {pending.call.id}")
            return None

        def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
            if held_elsewhere(self.pipeline[0].lock):
                held.append(f"finish {pending.call.id}")
            return result

    watching = Watching()
    pipeline = ParallelCallPipeline(authorize=[watching], finish=[watching])
    watching.pipeline.append(pipeline)
    results(pipeline, read_tools(Log()), [call("read", "a"), call("read", "b")])
    assert held == ["authorize a", "authorize b", "finish a", "finish b"]


def test_a_limit_of_the_whole_run_reached_inside_a_group_ends_the_run() -> None:
    def body(call_id: str) -> ToolResult:
        if call_id == "b":
            raise AgentLimitError(3, "max_requests")
        return ToolResult.success(call_id)

    tools = ToolRegistry([tool("read", body, safe=True)])
    with pytest.raises(AgentLimitError, match="max_requests=3"):
        results(ParallelCallPipeline(), tools, [call("read", "a"), call("read", "b")])

"""Benchmark: N read-only calls of one reply, side by side against one after the other.

    python scripts/bench_parallel.py [--work-ms 50] [--repeat 5]   (exit 1: a goal missed)

Each call is a concurrency-safe tool that takes the same time (`--work-ms`, spent
waiting, as a read waits for the disk or a search for its files). For N = 1, 2, 4,
8 and 16 calls in one reply, the wall time of chapter 7's `ParallelCallPipeline`
(at most 8 at once) is compared with chapter 1's `CallPipeline`, which runs them
one by one; both go through every stage (prepare, authorize, execute, finish)
and show each result on a console that writes to memory. Best of `--repeat`.

Goal: the speed-up is at least 0.8 × N, up to the cap of 8 (16 calls: 0.8 × 8).
"""

from __future__ import annotations

import argparse
import io
import platform
import sys
import time
from pathlib import Path

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL, ParallelCallPipeline
from shared.agent import AgentSpec, Run
from shared.calls import CallPipeline
from shared.console import Console
from shared.messages import FunctionCall, ToolCall
from shared.scripted import ScriptedModel
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

GOAL = 0.8
SIZES = (1, 2, 4, 8, 16)


class NoArguments(BaseModel):
    pass


def slow_read(seconds: float) -> ToolRegistry:
    def run(arguments: NoArguments) -> ToolResult:
        time.sleep(seconds)
        return ToolResult.success("read")

    return ToolRegistry(
        [
            PydanticTool(
                name="read",
                description="a read that takes a fixed time",
                args_model=NoArguments,
                side_effect=SideEffect.READ,
                run=run,
                concurrency_safe=True,
            )
        ]
    )


def wall_time(pipeline: CallPipeline, tools: ToolRegistry, count: int) -> float:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    spec = AgentSpec(
        model=ScriptedModel([]), tools=tools, calls=pipeline, console=console, system_prompt=""
    )
    calls = [ToolCall(id=f"c{n}", function=FunctionCall(name="read", arguments="{}"))
             for n in range(count)]  # fmt: skip
    snapshot = tools.snapshot()
    start = time.perf_counter()
    results = list(pipeline.run(calls, snapshot, Run(spec, "bench", [])))
    elapsed = time.perf_counter() - start
    assert [c.id for c, _ in results] == [c.id for c in calls]
    assert all(result.ok for _, result in results)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-ms", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}")
    tools = slow_read(options.work_ms / 1000)
    ok = True
    for count in SIZES:
        one_by_one = min(wall_time(CallPipeline(), tools, count) for _ in range(options.repeat))
        side_by_side = min(
            wall_time(ParallelCallPipeline(), tools, count) for _ in range(options.repeat)
        )
        speedup = one_by_one / side_by_side
        goal = GOAL * min(count, DEFAULT_MAX_PARALLEL)
        met = speedup >= goal
        ok = ok and met
        print(
            f"N={count:2}: one by one {one_by_one * 1000:7.1f} ms, side by side "
            f"{side_by_side * 1000:6.1f} ms, speed-up {speedup:4.2f} "
            f"(goal ≥ {goal:.1f}){'' if met else '  MISSED'}"
        )
    print("goals met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

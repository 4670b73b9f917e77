"""Benchmark: the harness overhead per turn of chapter 1's loop, as the history grows.

    python scripts/bench_loop.py [--turns 200] [--repeat 5]   (exit 1: goal missed)

What it measures: the time `run_agent` spends between two model requests (parse the
reply, append it, the call pipeline's prepare/authorize/execute/finish for the tool
call, the seams, check the message contract, build the next request), with no model
and no tool work: chapter 1's agent as its recipe builds it, but the
model replays prepared response dicts without copying them, the approver always says
yes, the shell runner returns "ok" at once and the console writes plain text to a
StringIO.

Why: every turn sends the whole history again, so any per-message work done per turn
makes a long session quadratically slow. The harness must not be that bottleneck.

Goal: the mean overhead of the last 20 turns is at most 1.5x that of the first 20
("stays flat as history grows"). Each turn is the median over the runs, after one
unmeasured warm-up run.
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.agent import RECIPE
from chapters.ch01.loop import run_agent
from chapters.ch01.parts import APPROVER, RUNNER, SHELL
from chapters.ch01.tests.harness import ScriptedApprover
from shared.console import Console
from shared.messages import Message
from shared.process import CommandOutcome, Shell
from shared.recipe import FOLDER, build_agent
from shared.scripted import response, tool_call
from shared.slots import Key

GOAL_RATIO = 1.5
WINDOW = 20  # turns averaged at each end
FINAL_TEXT = "done"


class TimedModel:
    """Returns prepared response bodies as they are (no copy) and times each call."""

    name = "bench-model"
    label = "bench-model (scripted, no network)"

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.starts: list[float] = []
        self.ends: list[float] = []

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.starts.append(time.perf_counter())
        body = self.steps[len(self.starts) - 1]
        self.ends.append(time.perf_counter())
        return body

    def gaps(self) -> list[float]:
        """Harness time between requests: from one complete() return to the next call."""
        return [start - end for start, end in zip(self.starts[1:], self.ends[:-1], strict=True)]


def ok_runner(command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
    return CommandOutcome(0, "ok\n", "")


def one_run(turns: int) -> tuple[list[float], int, float]:
    """One full run; returns the per-turn gaps, the final history length, the wall time."""
    calls = [tool_call(f"call_{i}", "shell", '{"command": "echo hi"}') for i in range(1, turns)]
    model = TimedModel([*(response(None, [call]) for call in calls), response(FINAL_TEXT)])
    services: dict[Key[Any], Any] = {
        APPROVER: ScriptedApprover.always(True, times=turns),
        FOLDER: Path.cwd(),
        RUNNER: ok_runner,
        SHELL: Shell("bash", ("bash", "-c")),
    }
    agent = build_agent(
        RECIPE.setup({"max_turns": turns}, services),
        model,
        Console(out=io.StringIO(), err=io.StringIO(), fancy=False),
    )
    history: list[Message] = []
    started = time.perf_counter()
    answer = run_agent("benchmark", agent, history=history)
    elapsed = time.perf_counter() - started
    assert answer == FINAL_TEXT and len(model.starts) == turns, "the run did not finish as scripted"
    return model.gaps(), len(history), elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="model requests per run")
    parser.add_argument("--repeat", type=int, default=5, help="runs; per-turn median is taken")
    args = parser.parse_args()
    if args.turns < 2 * WINDOW + 1 or args.repeat < 1:
        parser.error(f"--turns must be at least {2 * WINDOW + 1} and --repeat at least 1")

    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")
    one_run(args.turns)  # warm-up: imports, pydantic caches; not measured
    runs = [one_run(args.turns) for _ in range(args.repeat)]
    per_turn = [statistics.median(turn) for turn in zip(*(run[0] for run in runs), strict=True)]
    first = statistics.fmean(per_turn[:WINDOW]) * 1e6
    last = statistics.fmean(per_turn[-WINDOW:]) * 1e6
    ratio = last / first
    totals = [run[2] for run in runs]

    print(f"{args.turns} turns x {args.repeat} runs (per-turn median across runs)")
    print(f"  first {WINDOW} turns: {first:8.1f} us/turn harness overhead")
    print(f"  last  {WINDOW} turns: {last:8.1f} us/turn harness overhead")
    print(f"  ratio last/first: {ratio:.2f}  (goal <= {GOAL_RATIO})")
    print(f"  history at the end: {runs[0][1]} messages")
    print(
        f"  total: {sum(totals) * 1e3:.1f} ms, median {statistics.median(totals) * 1e3:.1f} ms/run"
    )
    met = ratio <= GOAL_RATIO
    print("goal met: stays flat as history grows" if met else "GOAL MISSED: grows with history")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

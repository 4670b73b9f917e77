"""Benchmark: how late a scheduled job reaches the model, and that it reaches it once.

    python scripts/bench_schedule.py [--repeat 5] [--think 0.05]          (exit 1: goal missed)

What it measures, with chapter 14's agent as its recipe builds it (the real schedule, its
file and locks, the stay, chapter 13's inbox and delivery); only the model is scripted,
and it takes `--think` seconds to answer each request. The run's clock starts two
seconds before 10:00 (`Clock(start=...)`, as TUTORIAL_NOW does), so no test waits for a
real minute:

    idle      the model schedules a one-shot for 10:00 and answers at once; the run stays,
              and the fire is the next request
    durable   the same job with `durable: true`: its fire is written to
              .tutorial/scheduled_tasks.json under the lock before it goes out
    busy      the model schedules it, then works through the slot (a tool call that takes
              3 s); the fire must wait for the answer and go with the request after it

Lateness: from the later of the slot (10:00:00 on the run's clock) and the answer before
the fire, to the request that carries `[scheduled <id>]`: what the harness adds. Every
request is checked: the fire is in exactly one, and never in a request before the answer.

Why: the harness, not the model, keeps the time, and the promise is "when it is due and
the model is free"; a fire that came a second late, twice, or in the middle of a turn
would break it.

Goal: the fire in exactly one request, never mid-turn; median lateness under 100 ms in
each scenario.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.loop import run_agent
from chapters.ch07.scripted_stream import AgentStreams, calls_stream, text_stream
from chapters.ch09.session_log import SessionLog
from chapters.ch14.clock import Clock
from chapters.ch14.schedule import Schedule
from chapters.testing import agent_of
from shared.console import Console

GOAL_LATE_MS = 100.0
SLOT = datetime(2026, 3, 2, 10, 0)  # local time; the run's clock starts 2 s before it
PROMPT = "At 10:00, check the build."
FIRE = "[scheduled "
BUSY_SECONDS = 3.0  # the tool call that works through the slot, in the busy scenario
BUSY_COMMAND = f'"{sys.executable}" -c "import time; time.sleep({BUSY_SECONDS})"'


@dataclass
class Script:
    """The scripted model: schedule the job, (work through the slot,) answer, answer the fire."""

    kind: str
    think: float
    clock: Clock
    arrivals: list[tuple[datetime, int]] = field(default_factory=list)  # (clock, fires carried)
    answered: datetime | None = None  # on the run's clock, when the answer before the fire left

    def step(self, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        carried = sum(
            str(m.get("content")).count(FIRE) for m in request["messages"] if m["role"] == "user"
        )
        self.arrivals.append((self.clock.now(), carried))
        time.sleep(self.think)
        number = len(self.arrivals)
        if number == 1:
            job = {"cron": "0 10 * * *", "prompt": "check the build", "recurring": False}
            job["durable"] = self.kind == "durable"
            return calls_stream(("call_1", "cron_create", json.dumps(job)))
        if number == 2 and self.kind == "busy":
            return calls_stream(("call_2", "shell", json.dumps({"command": BUSY_COMMAND})))
        if not carried:
            self.answered = self.clock.now()
            return text_stream("Scheduled for 10:00.")
        return text_stream("The build is green.")


@dataclass(frozen=True)
class Measured:
    late: float | None  # seconds the harness added
    problems: tuple[str, ...]


def run_once(kind: str, think: float) -> Measured:
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as home:
        root = Path(folder).resolve()
        clock = Clock(SLOT - timedelta(seconds=2))
        script = Script(kind, think, clock)
        agent = agent_of(
            14,
            model=AgentStreams({PROMPT: [script.step] * 8}, name="bench"),
            console=Console(out=io.StringIO(), err=io.StringIO(), fancy=False),
            workspace=root,
            home=Path(home),
            log=SessionLog.new(root, 14),
            allow=("shell",),
            wall_clock=clock,
            schedule=Schedule(root, clock),
            stay_for=30.0,
            max_turns=8,
        )
        run_agent(PROMPT, agent)
    return measured(script)


def measured(script: Script) -> Measured:
    carrying = [n for n, (_, fires) in enumerate(script.arrivals) if fires]
    if not carrying or script.answered is None:
        return Measured(None, ("no request carried the fire",))
    problems = []
    first = carrying[0]
    if sum(fires for _, fires in script.arrivals[first : first + 1]) != 1:
        problems.append("the fire came twice in one request")
    if any(fires != 1 for _, fires in script.arrivals[first:]):
        problems.append("a later request lost or repeated the fire")
    arrived = script.arrivals[first][0]
    if arrived < script.answered:
        problems.append("the fire came before the answer: in the middle of a turn")
    local = SLOT.astimezone()
    late = (arrived - max(local, script.answered)).total_seconds()
    return Measured(late, tuple(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--think", type=float, default=0.05, help="seconds per model reply")
    args = parser.parse_args(argv)
    print(
        f"Python {platform.python_version()} on {platform.system()} · {args.repeat} repeats · "
        f"{args.think:g} s think"
    )
    missed: list[str] = []
    for kind in ("idle", "durable", "busy"):
        runs = [run_once(kind, args.think) for _ in range(args.repeat)]
        missed += [f"{kind}: {p}" for m in runs for p in m.problems]
        late = [m.late * 1000 for m in runs if m.late is not None]
        if not late:
            continue
        median = statistics.median(late)
        print(
            f"{kind:<8} slot or answer → the fire's request: median {median:5.1f} ms, "
            f"max {max(late):5.1f} ms (goal < {GOAL_LATE_MS:g} ms)"
        )
        if median >= GOAL_LATE_MS:
            missed.append(f"{kind}: {median:.1f} ms late, goal under {GOAL_LATE_MS:g} ms")
    for line in missed:
        print(f"goal missed: {line}")
    print("goals: " + ("met" if not missed else "MISSED"))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: a 3 s command in the background while the model keeps working, against the same
command in the foreground.

    python scripts/bench_background.py [--job-seconds 3] [--reads 20] [--think 0.2] [--repeat 3]
                                                                          (exit 1: goal missed)

What it measures, with chapter 13's agent as its recipe builds it (real shell, real jobs in
their process groups, the real inbox and its delivery, the real file tools); only the
model is scripted, and it takes `--think` seconds to answer each request, as a model does:

    working      the model starts the job (shell, run_in_background) and reads one file per
                 request, `--reads` of them (longer than the job: 20 x 0.2 s), then answers.
                 The job ends while the model works; its notification goes with the next
                 request (DeliverEvents.before_request)
    waiting      the model starts the job, reads 2 files and answers; the run waits
                 (DeliverEvents.on_stop) and the notification goes with the request after
    foreground   the same command as a plain shell call (the model waits 3 s for it), then
                 the same reads and the answer

For each background run: the job's end (the last thing the command does is print the
time), the request that carries the notification, and when the request before it was
answered. Delay: from the job's end to that request. Delay once the current request is
done: from the later of the job's end and the answer to the request in flight (its tool
call included) to the notification's request: what the harness itself adds. The
notification must be in the first request sent after the job's end, and in that one only
once. Wall time: from the run's start to its answer, working against foreground.

Why: a background job is worth it when its end reaches the model at the first moment the
loop can take it, and not one request later; and when the model's own work no longer
waits behind the command.

Goal: the notification in the first request after the job's end; its delay, once the
current request is done, under 100 ms (median over the repeats, each scenario); working
faster than foreground. Medians of the wall times are reported.
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.loop import run_agent
from chapters.ch04.demo import python_command
from chapters.ch07.scripted_stream import AgentStreams, calls_stream, text_stream
from chapters.ch09.session_log import SessionLog
from chapters.ch13.jobs import JOBS_FOLDER
from chapters.testing import agent_of
from shared.console import Console

GOAL_DELAY_MS = 100.0
PROMPT = "Run the slow command in the background and read the modules while it runs."
NOTIFICATION = "<task-notification>"
JOB = """\
import sys
import time

time.sleep(float(sys.argv[1]))
print(f"{time.time():.6f}", flush=True)  # the job's end, on the wall clock
"""


@dataclass
class Exchange:
    """One request as the scripted model saw it."""

    arrived: float  # time.time() when the request reached the model
    answered: float  # when its reply left (after the think time)
    notifications: int  # task notifications the request's messages carry


@dataclass
class Script:
    """The scripted model's side: start the job, read `reads` files, then answer."""

    command: str
    background: bool
    reads: int
    think: float
    exchanges: list[Exchange] = field(default_factory=list)
    done_reading: int = 0

    def step(self, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        arrived = time.time()
        carried = sum(
            str(m.get("content")).count(NOTIFICATION)
            for m in request["messages"]
            if m.get("role") == "user"
        )
        time.sleep(self.think)  # the model thinks
        chunks = self._reply(carried)
        self.exchanges.append(Exchange(arrived, time.time(), carried))
        return chunks

    def _reply(self, carried: int) -> list[dict[str, Any]]:
        if not self.exchanges:
            arguments: dict[str, Any] = {"command": self.command}
            if self.background:
                arguments["run_in_background"] = True
            return calls_stream(("call_0", "shell", json.dumps(arguments)))
        if self.done_reading < self.reads:
            self.done_reading += 1
            read = {"path": module(self.done_reading)}
            return calls_stream((f"call_{self.done_reading}", "read_file", json.dumps(read)))
        if self.background and not carried:
            return text_stream("The job is still running; I wait for it.")
        return text_stream("Done: the job ended and the modules are read.")


def module(number: int) -> str:
    return f"lib/module_{number}.py"


@dataclass(frozen=True)
class Measured:
    wall: float  # seconds, the run's start to its answer
    delay: float | None = None  # seconds, the job's end to the notification's request
    after_done: float | None = None  # seconds, once the request in flight was done
    problems: tuple[str, ...] = ()


def run_once(kind: str, job_seconds: float, reads: int, think: float) -> Measured:
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as home:
        root = Path(folder).resolve()
        for number in range(1, reads + 1):
            path = root / module(number)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'"""Module {number}."""\n\nVALUE = {number}\n', encoding="utf-8")
        (root / "job.py").write_text(JOB, encoding="utf-8")
        command = f"{python_command(root / 'job.py')} {job_seconds:g}"
        script = Script(command, kind != "foreground", 2 if kind == "waiting" else reads, think)
        model = AgentStreams({PROMPT: [script.step] * (reads + 6)}, name="bench")
        console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
        agent = agent_of(
            13,
            model=model,
            console=console,
            workspace=root,
            home=Path(home),
            log=SessionLog.new(root, 13),  # the session log a command's run keeps
            allow=("shell",),
            max_turns=reads + 6,
        )
        started = time.time()
        run_agent(PROMPT, agent)
        wall = time.time() - started
        if kind == "foreground":
            return Measured(wall)
        log = (root / JOBS_FOLDER / "bg1.log").read_text(encoding="utf-8").split()
        ended = float(log[-1]) if log else float("nan")
    return measured(script.exchanges, ended, wall)


def measured(exchanges: list[Exchange], ended: float, wall: float) -> Measured:
    """The delays of one background run, and what went wrong with the notification."""
    problems: list[str] = []
    first_after = next((n for n, e in enumerate(exchanges) if e.arrived > ended), None)
    carrying = next((n for n, e in enumerate(exchanges) if e.notifications), None)
    if carrying is None or first_after is None:
        return Measured(wall, problems=("no request carried the notification",))
    if carrying != first_after:
        problems.append(
            f"the notification came with request {carrying + 1}, not {first_after + 1}, "
            "the first after the job's end"
        )
    if any(e.notifications > 1 for e in exchanges):
        problems.append("the notification was delivered more than once")
    delay = exchanges[carrying].arrived - ended
    in_flight = exchanges[carrying - 1].answered if carrying else ended
    after_done = exchanges[carrying].arrived - max(ended, in_flight)
    return Measured(wall, delay, after_done, tuple(problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--job-seconds", type=float, default=3.0)
    parser.add_argument("--reads", type=int, default=20, help="files the model reads")
    parser.add_argument("--think", type=float, default=0.2, help="seconds per model reply")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(
        f"Python {platform.python_version()} on {platform.system()} · job {args.job_seconds:g} s "
        f"· {args.reads} reads x {args.think:g} s think · {args.repeat} repeats"
    )
    runs: dict[str, list[Measured]] = {"working": [], "waiting": [], "foreground": []}
    for _ in range(args.repeat):
        for kind, done in runs.items():
            done.append(run_once(kind, args.job_seconds, args.reads, args.think))
    missed: list[str] = []
    for kind in ("working", "waiting"):
        problems = [p for m in runs[kind] for p in m.problems]
        missed += [f"{kind}: {p}" for p in problems]
        delays = [m.delay * 1000 for m in runs[kind] if m.delay is not None]
        after = [m.after_done * 1000 for m in runs[kind] if m.after_done is not None]
        if not after:
            continue
        median = statistics.median(after)
        print(
            f"{kind:<10}  job's end → its request: median {statistics.median(delays):5.1f} ms, "
            f"max {max(delays):5.1f} ms\n{'':<10}  once the request in flight was done: "
            f"median {median:5.1f} ms, max {max(after):5.1f} ms (goal < {GOAL_DELAY_MS:g} ms)"
        )
        if median >= GOAL_DELAY_MS:
            missed.append(f"{kind}: delay {median:.1f} ms, goal under {GOAL_DELAY_MS:g} ms")
    walls = {kind: statistics.median(m.wall for m in done) for kind, done in runs.items()}
    saved = walls["foreground"] - walls["working"]
    print(
        f"wall time   background, working {walls['working']:.2f} s · foreground, then the same "
        f"work {walls['foreground']:.2f} s · saved {saved:.2f} s\n{'':<10}  background, "
        f"waiting {walls['waiting']:.2f} s"
    )
    if saved <= 0:
        missed.append("working in the background was not faster than the foreground")
    for line in missed:
        print(f"goal missed: {line}")
    print("goals: " + ("met" if not missed else "MISSED"))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: runs against a provider that fails 30% of requests, with and without retries.

    python scripts/bench_retry.py [--runs 100] [--fail 0.3] [--scale 0.05] [--seed 11]
    (exit 1: a goal missed)

A local server (127.0.0.1, the tests' chat server) answers like a provider under
load: each request fails at random with probability `--fail`, half of them
429 and half 503, each with a Retry-After drawn from 0.1 to 2.0 s
(`retry-after-ms`, and `retry-after` rounded up, as OpenAI and Azure send
both); every other request gets its scripted answer. Each of `--runs` runs is
one whole agent run through chapter 1's loop over the real `openai` SDK: the
model calls a tool twice, then answers (three requests when nothing fails).

The same runs are made twice: with chapter 11's `RetryingModel` (the default
`--max-retries` 4) and with retries off (`--max-retries` 0), and for each the
report gives the completion rate, the retries per run that completed, and the
time waited against the sum of the Retry-After values the provider asked for.

Waiting is real but scaled down: the retry wrapper's clock runs `1 / --scale`
times faster than the wall clock (default 20×), so a Retry-After of 2 s costs
0.1 s of wall time while every number the wrapper computes and this report
shows is in the provider's seconds. `--scale 1` waits for real.

Goals: with retries, at least 97% of the runs complete (in theory 1 − 3 ×
0.3⁵ ≈ 99.3%), and the time waited is the time asked for, within 1% (a
Retry-After is honoured exactly: neither ignored nor stretched by backoff).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import platform
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, RecordedRequest, Reply
from chapters.ch11.retry import RetryingModel, RetryPolicy
from chapters.ch11.summary import RecoveryLog
from shared.agent import AgentSpec
from shared.calls import CallPipeline
from shared.config import Settings
from shared.console import Console
from shared.errors import ProviderError
from shared.openai_client import OpenAIChatModel
from shared.scripted import response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

COMPLETION_GOAL = 0.97
WAIT_GOAL = 0.01  # |waited / asked - 1|
CALLS_PER_RUN = 2


class ScaledClock:
    """Seconds as the provider counts them; each one lasts `scale` real seconds."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.slept = 0.0  # measured on the wall clock, in the provider's seconds

    def now(self) -> float:
        return time.monotonic() / self.scale

    def sleep(self, seconds: float) -> None:
        start = time.monotonic()
        time.sleep(seconds * self.scale)
        self.slept += (time.monotonic() - start) / self.scale


@dataclass
class FlakyProvider:
    """Answers a run's requests in order, failing each at random first."""

    fail: float
    draw: random.Random
    failures: int = 0
    asked: float = 0.0  # the sum of every Retry-After sent, in seconds
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: RecordedRequest) -> Reply:
        with self.lock:
            if self.draw.random() < self.fail:
                self.failures += 1
                seconds = round(self.draw.uniform(0.1, 2.0), 3)
                self.asked += seconds
                status = self.draw.choice((429, 503))
                headers = {
                    "retry-after-ms": str(int(seconds * 1000)),
                    "retry-after": str(math.ceil(seconds)),
                }
                return Reply(status, _error(status), headers)
        done = sum(1 for m in request.body["messages"] if m["role"] == "tool")
        if done < CALLS_PER_RUN:
            arguments = json.dumps({"text": f"step {done + 1}"})
            return Reply(200, response(None, [tool_call(f"c{done}", "echo", arguments)]))
        return Reply(200, response("done"))


def _error(status: int) -> dict[str, Any]:
    said = "Rate limit reached" if status == 429 else "The server is overloaded"
    return {"error": {"message": said, "type": "server_error" if status == 503 else "requests"}}


@dataclass
class Result:
    max_retries: int
    completed: int
    runs: int
    requests: int
    log: RecoveryLog
    asked_all: float
    slept: float
    wall: float


class Echo(BaseModel):
    text: str


def echo() -> ToolRegistry:
    return ToolRegistry(
        [
            PydanticTool(
                name="echo",
                description="Say it back.",
                args_model=Echo,
                side_effect=SideEffect.READ,
                run=lambda arguments: ToolResult.success(f"ok: {arguments.text}"),
            )
        ]
    )


def bench(max_retries: int, options: argparse.Namespace) -> Result:
    provider = FlakyProvider(options.fail, random.Random(options.seed))
    log = RecoveryLog()
    clock = ScaledClock(options.scale)
    completed = 0
    start = time.perf_counter()
    with ChatServer(respond=provider) as server:
        settings = Settings.model_validate(
            {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}
        )
        model = RetryingModel(
            OpenAIChatModel(settings, timeout=10.0),
            policy=RetryPolicy(max_retries=max_retries),
            clock=clock,
            draw=random.Random(options.seed + 1).random,
            log=log,
        )
        spec = AgentSpec(
            model=model,
            tools=echo(),
            calls=CallPipeline(),
            console=Console(out=io.StringIO(), err=io.StringIO(), fancy=False),
            system_prompt="bench",
        )
        for _ in range(options.runs):
            try:
                run_agent("go", spec)
                completed += 1
            except ProviderError:
                pass
        requests = len(server.completion_requests())
    wall = time.perf_counter() - start
    return Result(
        max_retries, completed, options.runs, requests, log, provider.asked, clock.slept, wall
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--fail", type=float, default=0.3)
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=11)
    options = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}")
    print(
        f"{options.runs} runs of {CALLS_PER_RUN + 1} requests, {options.fail:.0%} of requests "
        f"failing (429/503, Retry-After 0.1-2.0 s); waits scaled by {options.scale:g} "
        "(times below are the provider's seconds)"
    )
    ok = True
    for max_retries in (RetryPolicy().max_retries, 0):
        result = bench(max_retries, options)
        log = result.log
        rate = result.completed / result.runs
        ratio = log.waited / log.asked if log.asked else 1.0
        per_success = log.retries / result.completed if result.completed else float("nan")
        print(
            f"--max-retries {max_retries}: completed {result.completed}/{result.runs} "
            f"({rate:.0%}), {result.requests} requests, {log.retries} retries "
            f"({per_success:.2f} per completed run), wall {result.wall:.1f} s"
        )
        if log.retries:
            print(
                f"  waited {log.waited:.1f} s for the {log.asked:.1f} s of Retry-After asked "
                f"before those retries (ratio {ratio:.3f}; really slept {result.slept:.1f} s); "
                f"{result.asked_all:.1f} s asked in all, the rest by failures not retried"
            )
        if max_retries:
            met = rate >= COMPLETION_GOAL and abs(ratio - 1) <= WAIT_GOAL
            ok = ok and met
            if not met:
                print(
                    f"  MISSED: completion goal ≥ {COMPLETION_GOAL:.0%}, "
                    f"wait goal |ratio - 1| ≤ {WAIT_GOAL}"
                )
    print("goals met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

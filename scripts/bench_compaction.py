"""Benchmark: a 200-turn session in a 32,000-token window, with and without chapter 8.

    python scripts/bench_compaction.py [--turns 200] [--result-chars 5000] [--window 32000]
    (exit 1: a request went over the window)

What it runs: one scripted session, twice. Each turn the model calls a tool
whose result is 5,000 characters of log-like text; after the last turn it
answers. The model is scripted but counts tokens the way a provider does, with
a tokenizer of its own that is not the harness's estimate (3.6 characters a
token for ASCII, 1.2 tokens a CJK character), and sends that count back as
`usage.prompt_tokens`; a compaction request gets a summary of about 1,500
characters. Everything else is chapter 8's pieces as a composition module
would list them: the offloading finisher, the transcript, old results turned
into stubs after 6 requests, and compaction at 0.8 of the window, with a
quarter of the window kept.

    with chapter 8     the pieces above
    compaction only    the same, but no result is ever turned into a stub: the
                       context fills with whole results, so compaction does all the work
    without            the same loop, tools and model, no finisher, no features

What it reports, for each: the peak request size (the scripted provider's
count; with chapter 8 it must stay under the window), the number of
compactions and of stubs, the characters all requests carried (every request
sends the whole history again), and the harness's own time per compaction
(the time spent compacting, the model's time left out). Without chapter 8 a
real provider would have refused the session once a request passed the window:
the turn where that happens is reported too.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import platform
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel, ConfigDict

from chapters.ch01.loop import run_agent
from chapters.ch08.compaction import COMPACT_MARK, Compactor
from chapters.ch08.measure import CJK
from chapters.ch08.offload import Offloader
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS, STUB_MARK, OldResults
from chapters.ch08.transcript import Transcript
from shared.agent import AgentSpec, Feature, Run
from shared.calls import CallPipeline
from shared.console import Console
from shared.messages import Message
from shared.scripted import response, tool_call
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolRegistry, ToolResult

SYSTEM_PROMPT = "You are a coding agent. Use the tools to inspect the service, then report."
PROMPT = "Go through the service's logs, part by part, and tell me why the nightly job fails."
SUMMARY_CHARS = 1_500


class PartArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    part: int


def log_text(part: int, size: int) -> str:
    """`size` characters of log lines, different for each part."""
    lines, total = [], 0
    number = 0
    while total < size:
        number += 1
        line = (
            f"2026-01-05T02:{number % 60:02d}:{part % 60:02d}Z worker-{part % 7} INFO "
            f"job=nightly part={part} step={number} rows={part * 37 + number} status=ok\n"
        )
        lines.append(line)
        total += len(line)
    return "".join(lines)[:size]


def log_tool(result_chars: int) -> PydanticTool:
    def read_part(args: PartArgs) -> ToolResult:
        return ToolResult.success(log_text(args.part, result_chars))

    return PydanticTool(
        name="read_log_part",
        description="Read one part of the service's log.",
        args_model=PartArgs,
        side_effect=SideEffect.READ,
        run=read_part,
        key=KeyArgument("part", KeyKind.TEXT),
    )


def provider_tokens(request: Mapping[str, Any]) -> int:
    """The scripted provider's own count: not the harness's estimate, as with a real one."""
    text = json.dumps(request.get("messages", []), ensure_ascii=False)
    text += json.dumps(request.get("tools", []), ensure_ascii=False)
    wide = len(CJK.findall(text))
    return math.ceil((len(text) - wide) / 3.6 + wide * 1.2)


@dataclass
class SessionModel:
    """Plays `turns` tool calls, then answers; summarises when asked; counts and times."""

    turns: int
    name: str = "bench-model"
    label: str = "bench-model (scripted, no network)"
    played: int = 0
    requests: int = 0
    compaction_requests: int = 0
    peak_tokens: int = 0
    peak_at: str = ""  # which request it was
    first_over: int | None = None  # the first loop request over the window
    window: int = 0
    characters: int = 0  # of every request body
    model_seconds: float = 0.0

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        started = time.perf_counter()
        self.requests += 1
        self.characters += len(json.dumps(request, ensure_ascii=False))
        tokens = provider_tokens(request)
        last = request["messages"][-1]
        compacting = last["role"] == "user" and str(last["content"]).startswith(COMPACT_MARK)
        if tokens > self.peak_tokens:
            what = "a compaction request" if compacting else "a request"
            self.peak_tokens, self.peak_at = tokens, f"{what} after turn {self.played}"
        if compacting:
            self.compaction_requests += 1
            body = response("Summary. " + "The job fails in step 3 of part 12. " * 42)
            body["choices"][0]["message"]["content"] = body["choices"][0]["message"]["content"][
                :SUMMARY_CHARS
            ]
        else:
            if self.first_over is None and tokens > self.window:
                self.first_over = self.played + 1
            if self.played < self.turns:
                self.played += 1
                part = json.dumps({"part": self.played})
                body = response(None, [tool_call(f"call_{self.played}", "read_log_part", part)])
            else:
                body = response("The nightly job fails in part 12, step 3.")
        body["usage"] = {"prompt_tokens": tokens, "completion_tokens": 20}
        self.model_seconds += time.perf_counter() - started
        return body


@dataclass
class Timed(Feature):
    """Times the compactor's `before_request`, where every compaction happens."""

    inner: Compactor
    model: SessionModel
    seconds: list[float] = field(default_factory=list)

    def after_reply(self, run: Run, reply: Any) -> None:
        self.inner.after_reply(run, reply)

    def before_request(self, run: Run) -> None:
        before, model_before = self.inner.compactions, self.model.model_seconds
        started = time.perf_counter()
        self.inner.before_request(run)
        if self.inner.compactions > before:
            spent = time.perf_counter() - started - (self.model.model_seconds - model_before)
            self.seconds.append(spent)


@dataclass(frozen=True)
class Outcome:
    model: SessionModel
    history: Sequence[Message]
    compactions: int = 0
    stubs: int = 0
    compaction_seconds: Sequence[float] = ()
    wall_seconds: float = 0.0


def session(
    turns: int, result_chars: int, window: int, chapter_8: bool, stubs: bool = True
) -> Outcome:
    model = SessionModel(turns, window=window)
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    history: list[Message] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        features: list[Feature] = []
        finish = []
        timed = None
        if chapter_8:
            offloader = Offloader(root, console)
            transcript = Transcript(root, "bench")
            compactor = Compactor(transcript, window=window)
            timed = Timed(compactor, model)
            keep = DEFAULT_KEEP_RESULTS if stubs else turns + 1
            features = [transcript, OldResults(offloader, transcript, keep=keep), timed]
            finish = [offloader]
        agent = AgentSpec(
            model=model,
            tools=ToolRegistry([log_tool(result_chars)]),
            calls=CallPipeline(finish=finish),
            console=console,
            system_prompt=SYSTEM_PROMPT,
            features=features,
            max_turns=turns + 1,
        )
        started = time.perf_counter()
        run_agent(PROMPT, agent, history=history)
        wall = time.perf_counter() - started
    stubs = sum(1 for m in history if m.role == "tool" and str(m.content).startswith(STUB_MARK))
    if timed is None:
        return Outcome(model, history, wall_seconds=wall)
    return Outcome(model, history, timed.inner.compactions, stubs, timed.seconds, wall_seconds=wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="tool calls before the answer")
    parser.add_argument("--result-chars", type=int, default=5_000, help="characters per result")
    parser.add_argument("--window", type=int, default=32_000, help="the context window, tokens")
    args = parser.parse_args()

    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")
    print(
        f"{args.turns} turns, each tool result {args.result_chars:,} characters, "
        f"window {args.window:,} tokens"
    )
    with_8 = session(args.turns, args.result_chars, args.window, chapter_8=True)
    only = session(args.turns, args.result_chars, args.window, chapter_8=True, stubs=False)
    without = session(args.turns, args.result_chars, args.window, chapter_8=False)

    for name, outcome in (
        ("with chapter 8", with_8),
        ("compaction only", only),
        ("without", without),
    ):
        model = outcome.model
        print(f"  {name}:")
        print(
            f"    peak request        {model.peak_tokens:>12,} tokens, "
            f"{model.peak_tokens / args.window:.0%} of the window ({model.peak_at})"
        )
        asked = f"{model.requests:>12,} ({model.compaction_requests} for compaction)"
        print(f"    requests            {asked}")
        print(f"    characters sent     {model.characters:>12,} (all requests together)")
        print(f"    history at the end  {len(outcome.history):>12,} messages")
        if model.first_over is not None:
            print(f"    first request over the window: turn {model.first_over}")
        if model is not without.model:
            seconds = outcome.compaction_seconds
            mean_ms = sum(seconds) / len(seconds) * 1e3 if seconds else 0.0
            print(f"    compactions         {outcome.compactions:>12,}")
            print(f"    stubs at the end    {outcome.stubs:>12,}")
            print(
                f"    harness time per compaction: {mean_ms:.2f} ms mean, "
                f"{max(seconds, default=0.0) * 1e3:.2f} ms max (the model's time left out)"
            )
            ratio = without.model.characters / model.characters
            print(f"    characters sent: {ratio:.1f}x fewer than without")
        print(f"    wall time           {outcome.wall_seconds * 1e3:>12,.0f} ms")
    fits = max(with_8.model.peak_tokens, only.model.peak_tokens) <= args.window
    print("goal met: every request fit the window" if fits else "GOAL MISSED: over the window")
    return 0 if fits else 1


if __name__ == "__main__":
    sys.exit(main())

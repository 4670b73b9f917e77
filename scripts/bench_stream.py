"""Benchmark: how fast a streamed piece of text reaches the screen, and what a chunk costs.

    python scripts/bench_stream.py [--chunks 2000] [--gap-ms 0.5] [--long 10000] [--repeat 5]
    (exit 1: a goal missed)

(a) Latency. A local server (127.0.0.1, the tests' chat server) streams `--chunks`
    text chunks, `--gap-ms` apart, to chapter 7's streaming model through the real
    `openai` SDK, inside `ask_model`, with chapter 7's console writing to an
    in-memory stream. For each chunk: the time from just before the server writes it
    to the socket until its text is written by the console. Goal: the 99th
    percentile is under 50 ms.

(b) Assembly cost per chunk. `--long` chunks are fed to the assembler, once as text
    deltas and once as the argument pieces of one tool call (the case that grows a
    single string). For each, the mean cost of a chunk among the first thousand and
    among the last thousand, median over `--repeat` runs. Goal: last/first at most
    1.5 ("flat": no string grows by copying itself).

Why: a stream is only worth having if a piece is on the screen when it arrives,
and a long reply must not get slower to assemble as it grows.
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.tests.chat_server import ChatServer, StreamReply, sse_data
from chapters.ch07.assembly import StreamAssembler
from chapters.ch07.scripted_stream import chunk
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.streaming import StreamingChatModel
from shared.completion import ask_model
from shared.config import Settings
from shared.messages import SystemMessage, UserMessage
from shared.tools import ToolRegistry

LATENCY_GOAL_MS = 50.0
FLAT_GOAL = 1.5
WINDOW = 1000


class StampedWriter(io.StringIO):
    """Notes when each piece of text was written."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.writes.append((time.perf_counter(), text))
        return super().write(text)


def latency(count: int, gap: float) -> list[float]:
    """Milliseconds from the server's write to the console's write, one per chunk."""
    sent: dict[int, float] = {}

    def before_event(number: int) -> None:
        if gap:
            time.sleep(gap)  # a model writes tokens at a pace, not all at once
        sent[number] = time.perf_counter()

    events = [sse_data(chunk({"role": "assistant", "content": ""}))]
    events += [sse_data(chunk({"content": f"<{n}>"})) for n in range(1, count + 1)]
    events += [sse_data(chunk({}, "stop")), "data: [DONE]\n\n"]
    writer = StampedWriter()
    console = StreamingConsole(out=io.StringIO(), err=writer, fancy=False)
    with ChatServer([StreamReply(events, before_event=before_event)]) as server:
        settings = Settings.model_validate(
            {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}
        )
        model = StreamingChatModel(settings, timeout=30.0)
        history = [SystemMessage(content="bench"), UserMessage(content="go")]
        ask_model(model, history, ToolRegistry().snapshot(), console, 1)
    shown = {text: when for when, text in writer.writes}
    return [(shown[f"<{n}>"] - sent[n]) * 1000 for n in range(1, count + 1)]


def text_chunks(count: int) -> list[dict[str, Any]]:
    return [chunk({"content": "word "}) for _ in range(count - 1)] + [chunk({}, "stop")]


def argument_chunks(count: int) -> list[dict[str, Any]]:
    head = {"index": 0, "id": "c1", "type": "function", "function": {"name": "write_file"}}
    first = [chunk({"tool_calls": [{**head, "function": {**head["function"], "arguments": ""}}]})]
    pieces = [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "abcdefgh"}}]})
        for _ in range(count - 2)
    ]
    return [*first, *pieces, chunk({}, "tool_calls")]


def cost_per_chunk(chunks: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Mean µs per chunk among the first and the last WINDOW chunks, and the final join."""
    assembler = StreamAssembler()
    costs = []
    clock = time.perf_counter_ns
    for item in chunks:
        start = clock()
        assembler.add(item)
        costs.append(clock() - start)
    start = clock()
    assembler.body()
    joined = clock() - start
    return (
        statistics.fmean(costs[:WINDOW]) / 1000,
        statistics.fmean(costs[-WINDOW:]) / 1000,
        joined / 1000,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--gap-ms", type=float, default=0.5)
    parser.add_argument("--long", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}")

    latency(50, 0.0)  # warm-up: imports, the first connection
    delays = sorted(latency(options.chunks, options.gap_ms / 1000))
    p50 = statistics.median(delays)
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
    print(
        f"(a) socket → console, {options.chunks} chunks {options.gap_ms:g} ms apart: "
        f"median {p50:.2f} ms, p99 {p99:.2f} ms, max {delays[-1]:.2f} ms "
        f"(goal: p99 < {LATENCY_GOAL_MS:g} ms)"
    )
    ok = p99 < LATENCY_GOAL_MS

    for name, build in (("text deltas", text_chunks), ("argument pieces", argument_chunks)):
        chunks = build(options.long)
        cost_per_chunk(chunks)  # warm-up
        runs = [cost_per_chunk(chunks) for _ in range(options.repeat)]
        first = statistics.median(run[0] for run in runs)
        last = statistics.median(run[1] for run in runs)
        joined = statistics.median(run[2] for run in runs)
        ratio = last / first
        print(
            f"(b) {options.long} {name}: first {WINDOW} {first:.2f} µs/chunk, last {WINDOW} "
            f"{last:.2f} µs/chunk (ratio {ratio:.2f}; goal ≤ {FLAT_GOAL}); "
            f"final join {joined:.0f} µs"
        )
        ok = ok and ratio <= FLAT_GOAL
    print("goals met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

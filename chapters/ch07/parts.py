"""Chapter 7's parts: replies that stream, and calls that only read run side by side.

streaming  --no-stream; the streaming model and console (chapters/ch07/streaming.py,
           stream_console.py); the demo streams too
parallel   --max-parallel; the parallel pipeline (chapters/ch07/parallel.py) in
           chapter 1's place, with every part's authorizers and finishers
budget     chapter 6's, counted under a lock: children side by side ask at once
task       chapter 6's, safe beside other calls when its agent has only safe
           tools, its children printing into blocks of their own
           (chapters/ch07/side_by_side.py)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from chapters.ch06.parts import BudgetPart, TaskPart
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from shared.cli import count_option
from shared.parts import Build, Part, Setup
from shared.recipe import CONNECT, CONSOLE, PIPELINE, Demo

if TYPE_CHECKING:
    from chapters.ch06.definitions import AgentCatalog
    from chapters.ch06.task import Delegation
    from shared.agent import Feature
    from shared.completion import ModelClient
    from shared.config import Settings


def streamed_demo(
    prompt: str,
    model: Callable[..., ModelClient],
    workspace: Callable[[], Path],
    script: Callable[..., str] | None = None,
) -> Demo:
    """A demo whose scripted model streams, as the run does, unless --no-stream is given."""
    return Demo(
        prompt, lambda setup: model(stream=not setup.option("no_stream")), workspace, script
    )


class Streaming(Part):
    """The reply as it arrives: a streaming client and a console that prints it."""

    name = "streaming"
    summary = "--no-stream; the reply streams as it arrives"
    options = (
        click.Option(
            ["--no-stream"],
            is_flag=True,
            help="Send the plain request of chapters 1-6: the reply arrives whole.",
        ),
    )

    def setup(self, setup: Setup) -> None:
        from chapters.ch07.stream_console import StreamingConsole

        plain = bool(setup.option("no_stream"))
        setup.provide(CONSOLE, lambda: lambda traced: StreamingConsole(trace=traced))
        setup.provide(CONNECT, lambda: lambda settings: client(settings, plain))
        shown = "off (--no-stream)" if plain else "on"
        setup.add_banner("streaming", lambda: f"streaming: {shown}")


def client(settings: Settings, plain: bool) -> ModelClient:
    """The endpoint's client: chapter 1's plain one with --no-stream, else the streaming one."""
    if plain:
        from shared.openai_client import OpenAIChatModel

        return OpenAIChatModel(settings)
    from chapters.ch07.streaming import StreamingChatModel

    return StreamingChatModel(settings)


class Parallel(Part):
    """Consecutive concurrency-safe calls side by side; every other call a barrier."""

    name = "parallel"
    summary = "--max-parallel; safe calls of one reply run side by side"
    options = (
        count_option(
            "--max-parallel",
            DEFAULT_MAX_PARALLEL,
            "How many concurrency-safe calls of one reply may run at once (1: one by one).",
        ),
    )

    def setup(self, setup: Setup) -> None:
        most = setup.option("max_parallel")
        setup.add_banner("streaming", lambda: f"max_parallel: {most}", after=["streaming"])

    def contribute(self, build: Build) -> None:
        from chapters.ch07.parallel import ParallelCallPipeline

        most = build.setup.option("max_parallel")

        def pipeline(**steps: Any) -> ParallelCallPipeline:
            return ParallelCallPipeline(**steps, max_parallel=most)

        build.add(PIPELINE, pipeline, label="ParallelCallPipeline")


class LockedBudget(BudgetPart):
    """Chapter 6's budget, counted under a lock."""

    summary = "--max-requests: one budget for the family, counted under a lock"

    def budget(self, max_requests: int) -> Feature:
        from chapters.ch07.side_by_side import SharedBudget

        return SharedBudget(max_requests)


class SideBySideTask(TaskPart):
    """Chapter 6's task, which may run beside other calls."""

    summary = "task: a sub-agent, beside other calls when its agent only reads"

    def tool(self, agents: AgentCatalog, delegation: Delegation) -> Any:
        from chapters.ch07.side_by_side import make_task_tool

        return make_task_tool(agents, delegation)

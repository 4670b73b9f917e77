"""The command line of chapter 8: chapter 7's, plus the four numbers that keep the context small.

    --offload-over N     a tool result longer than N characters is saved whole (20,000)
    --keep-results K     a long result is sent whole in K requests, then as a stub (6)
    --context-window T   the model's context, in tokens (32,000)
    --compact-at F       compact before a request above F of the window (0.8)

`--demo` runs in a window of 4,500 tokens and stubs after 2 requests unless
they are given, so that everything happens in a few turns.

Extends: chapters/ch07/cli.py
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.options import choose_workspace
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.check import make_check_command
from chapters.ch03.options import policy_from_options, policy_options
from chapters.ch04.check_hooks import PreToolUseAdviser
from chapters.ch04.hooks import Hooks
from chapters.ch04.settings import load_hooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.todo import REMIND_AFTER, TodoPlan
from chapters.ch06.agent import control_files
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.definitions import load_agents
from chapters.ch06.listing import make_agents_command
from chapters.ch06.task import MAX_TURNS_HELP
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch08.agent import build_agent, chapter_tools
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW
from chapters.ch08.demo import (
    DEMO_CONTEXT_WINDOW,
    DEMO_KEEP_RESULTS,
    DEMO_PROMPT,
    demo_model,
    make_demo_workspace,
)
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, DEFAULT_SHOWN
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS
from chapters.ch08.transcript import TRANSCRIPTS_FOLDER, new_run_id
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.config import Settings
from shared.console import Console

PROG_NAME = "python -m chapters.ch08"
MIN_WINDOW = 1_000  # tokens: below this not even the system prompt and the tools fit


@click.command(
    name="ch08",
    cls=FriendlyCommand,
    help=(
        "Chapter 8: big tool output is saved to disk, old results become stubs, and the "
        "context is compacted before it overflows."
    ),
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS, max_turns_help=MAX_TURNS_HELP)
@policy_options
@click.option(
    "--remind-after",
    type=click.IntRange(min=1),
    default=REMIND_AFTER,
    show_default=True,
    help="Remind the model of its open plan after this many replies without todo_write.",
)
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    default=MAX_REQUESTS,
    show_default=True,
    help="Model requests the agent and all its sub-agents may make together.",
)
@click.option(
    "--no-stream",
    is_flag=True,
    help="Send the plain request of chapters 1-6: the reply arrives whole.",
)
@click.option(
    "--max-parallel",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_PARALLEL,
    show_default=True,
    help="How many concurrency-safe calls of one reply may run at once (1: one by one).",
)
@click.option(
    "--offload-over",
    type=click.IntRange(min=DEFAULT_SHOWN),
    default=DEFAULT_OFFLOAD_OVER,
    show_default=True,
    help="Save a tool result longer than this many characters to disk; the model reads its ends.",
)
@click.option(
    "--keep-results",
    type=click.IntRange(min=1),
    default=None,
    show_default=f"{DEFAULT_KEEP_RESULTS}; --demo: {DEMO_KEEP_RESULTS}",
    help="Send a long tool result whole in this many requests, then as a short stub.",
)
@click.option(
    "--context-window",
    type=click.IntRange(min=MIN_WINDOW),
    default=None,
    show_default=f"{DEFAULT_CONTEXT_WINDOW}; --demo: {DEMO_CONTEXT_WINDOW}",
    help="The model's context window, in tokens.",
)
@click.option(
    "--compact-at",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=DEFAULT_COMPACT_AT,
    show_default=True,
    help="Compact the history before a request above this share of the window.",
)
def command(
    prompt: str | None,
    max_turns: int,
    trace: bool,
    demo: bool,
    workspace: Path | None,
    mode: str | None,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    remind_after: int,
    max_requests: int,
    no_stream: bool,
    max_parallel: int,
    offload_over: int,
    keep_results: int | None,
    context_window: int | None,
    compact_at: float,
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    agents = load_agents(root.root, Path.home(), plan_tools(root).names)  # exit 2 if malformed
    policy = policy_from_options(root, chapter_tools(root, agents), mode, allow, deny)
    hooks = Hooks(load_hooks(root, Path.home()))  # exit 2 if malformed
    home = Path.home()
    policy = policy.protecting(control_files(root, home))  # what the harness obeys
    keep = keep_results or (DEMO_KEEP_RESULTS if demo else DEFAULT_KEEP_RESULTS)
    window = context_window or (DEMO_CONTEXT_WINDOW if demo else DEFAULT_CONTEXT_WINDOW)
    run_id = new_run_id()

    def run(task: str, model: ModelClient, console: Console) -> str:
        counts = ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()} · hooks: {counts}")
        console.info(f"agents: {', '.join(agents.names)} · max_requests: {max_requests}")
        streaming = "off (--no-stream)" if no_stream else "on"
        console.info(f"streaming: {streaming} · max_parallel: {max_parallel}")
        transcript = (TRANSCRIPTS_FOLDER / f"{run_id}.jsonl").as_posix()
        console.info(
            f"context: {window:,} tokens, compact at {compact_at:.0%} · offload over "
            f"{offload_over:,} characters · stubs after {keep} requests · transcript: {transcript}"
        )
        agent = build_agent(
            model=model,
            console=console,
            asker=TerminalAsker(console),
            workspace=root,
            policy=policy,
            audit=AuditLog(root.root / AUDIT_FILE, inside=root.root),
            hooks=hooks,
            plan=TodoPlan(remind_after=remind_after),
            agents=agents,
            max_turns=max_turns,
            max_requests=max_requests,
            max_parallel=max_parallel,
            offload_over=offload_over,
            keep_results=keep,
            context_window=window,
            compact_at=compact_at,
            run_id=run_id,
        )
        return run_agent(task, agent)

    def connect(settings: Settings) -> ModelClient:
        if no_stream:
            from shared.openai_client import OpenAIChatModel

            return OpenAIChatModel(settings)
        from chapters.ch07.streaming import StreamingChatModel

        return StreamingChatModel(settings)

    session = Session(
        chapter=8,
        folder=root.root,
        demo_model=lambda: demo_model(stream=not no_stream),
        demo_prompt=DEMO_PROMPT,
        run=run,
        console=lambda traced: StreamingConsole(trace=traced),
        connect=connect,
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(chapter_tools, PreToolUseAdviser(), control_files)
agents_command = make_agents_command(plan_tools)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

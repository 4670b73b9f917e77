"""The command line of chapter 7: chapter 6's, streaming, plus --no-stream and --max-parallel.

Extends: chapters/ch06/cli.py
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
from chapters.ch07.agent import build_agent, chapter_tools
from chapters.ch07.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from chapters.ch07.stream_console import StreamingConsole
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.config import Settings
from shared.console import Console

PROG_NAME = "python -m chapters.ch07"


@click.command(
    name="ch07",
    cls=FriendlyCommand,
    help="Chapter 7: the reply streams as it arrives; calls that only read run side by side.",
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
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    agents = load_agents(root.root, Path.home(), plan_tools(root).names)  # exit 2 if malformed
    policy = policy_from_options(root, chapter_tools(root, agents), mode, allow, deny)
    hooks = Hooks(load_hooks(root, Path.home()))  # exit 2 if malformed
    home = Path.home()
    policy = policy.protecting(control_files(root, home))  # what the harness obeys

    def run(task: str, model: ModelClient, console: Console) -> str:
        counts = ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()} · hooks: {counts}")
        console.info(f"agents: {', '.join(agents.names)} · max_requests: {max_requests}")
        streaming = "off (--no-stream)" if no_stream else "on"
        console.info(f"streaming: {streaming} · max_parallel: {max_parallel}")
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
        )
        return run_agent(task, agent)

    def connect(settings: Settings) -> ModelClient:
        if no_stream:
            from shared.openai_client import OpenAIChatModel

            return OpenAIChatModel(settings)
        from chapters.ch07.streaming import StreamingChatModel

        return StreamingChatModel(settings)

    session = Session(
        chapter=7,
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

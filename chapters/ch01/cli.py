"""The command line of chapter 1: wires the real pieces into `run_agent`.

This is the only place that builds a model client, a console or an approver;
the loop receives them, which is what lets the tests hand it scripted ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from chapters.ch01.demo import DEMO_PROMPT, demo_model
from chapters.ch01.loop import DEFAULT_MAX_TURNS, CallHandler, run_agent
from chapters.ch01.prompt import SYSTEM_PROMPT
from chapters.ch01.shell_tool import make_shell_tool
from shared.approval import TerminalApprover
from shared.cli import (
    FriendlyCommand,
    common_options,
    require_prompt,
    select_model,
    working_directory,
)
from shared.completion import ModelClient
from shared.console import Console
from shared.tools import ToolRegistry

PROG_NAME = "python -m chapters.ch01"


@dataclass(frozen=True)
class Session:
    """What a chapter's command line needs to know; later chapters pass their own."""

    chapter: int
    folder: Path  # where the tools work; `.env` is read from the working directory
    tools: Callable[[], ToolRegistry]
    demo_model: Callable[[], ModelClient]
    demo_prompt: str
    system_prompt: str = SYSTEM_PROMPT
    # Step 4 of the loop, built around the console; None: chapter 1's approval per call.
    handle_call: Callable[[Console], CallHandler] | None = None


@click.command(
    name="ch01", cls=FriendlyCommand, help="Chapter 1: the agent loop with one tool, shell."
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
def command(prompt: str | None, max_turns: int, trace: bool, demo: bool) -> None:
    require_prompt(prompt, demo)
    cwd = working_directory()
    session = Session(
        chapter=1,
        folder=cwd,
        tools=lambda: ToolRegistry([make_shell_tool(cwd)]),
        demo_model=demo_model,
        demo_prompt=DEMO_PROMPT,
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def run_session(
    session: Session, *, prompt: str | None, max_turns: int, trace: bool, demo: bool
) -> None:
    """Build the real pieces (console, model, approver, tools), run the loop, print the answer."""
    console = Console(trace=trace)
    if demo and prompt:
        console.notice("--demo replays a fixed exchange; --prompt is ignored.")
    task = session.demo_prompt if demo else str(prompt)
    model = select_model(demo=demo, demo_model=session.demo_model, cwd=working_directory())
    number = session.chapter
    console.info(
        f"第 {number} 章 chapter {number} · model: {model.label} · folder: {session.folder}"
    )
    console.info(f"user: {task}")
    answer = run_agent(
        task,
        model=model,
        tools=session.tools(),
        approver=TerminalApprover(console),
        console=console,
        max_turns=max_turns,
        system_prompt=session.system_prompt,
        handle_call=session.handle_call(console) if session.handle_call else None,
    )
    console.answer(answer)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

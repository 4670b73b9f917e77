"""The command line of chapter 1: wires the real pieces into `run_agent`.

This is the only place that builds a model client, a console or an approver;
the loop receives them, which is what lets the tests hand it scripted ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import click

from chapters.ch01.demo import DEMO_PROMPT, demo_model
from chapters.ch01.loop import DEFAULT_MAX_TURNS, run_agent
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


class RunLoop(Protocol):
    """Runs one chapter's loop for `task` with the model and console the CLI built."""

    def __call__(self, task: str, model: ModelClient, console: Console, max_turns: int) -> str: ...


@dataclass(frozen=True)
class Session:
    """What a chapter's command line needs to know; later chapters pass their own."""

    chapter: int
    folder: Path  # where the tools work; `.env` is read from the working directory
    demo_model: Callable[[], ModelClient]
    demo_prompt: str
    run: RunLoop


@click.command(
    name="ch01", cls=FriendlyCommand, help="Chapter 1: the agent loop with one tool, shell."
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
def command(prompt: str | None, max_turns: int, trace: bool, demo: bool) -> None:
    require_prompt(prompt, demo)
    cwd = working_directory()

    def run(task: str, model: ModelClient, console: Console, max_turns: int) -> str:
        tools = ToolRegistry([make_shell_tool(cwd)])
        approver = TerminalApprover(console)
        return run_agent(
            task, model=model, tools=tools, approver=approver, console=console, max_turns=max_turns
        )

    session = Session(
        chapter=1, folder=cwd, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def run_session(
    session: Session, *, prompt: str | None, max_turns: int, trace: bool, demo: bool
) -> None:
    """Build the console and the model, run the chapter's loop, print the answer."""
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
    console.answer(session.run(task, model, console, max_turns))


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

"""The command line of chapter 1: wires the real pieces into `run_agent`.

This is the only place that builds a model client, a console or an approver;
the loop receives them, which is what lets the tests hand it scripted ones.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from shared.console import Console
from shared.tools import ToolRegistry

PROG_NAME = "python -m chapters.ch01"


@click.command(
    name="ch01", cls=FriendlyCommand, help="Chapter 1: the agent loop with one tool, shell."
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
def command(prompt: str | None, max_turns: int, trace: bool, demo: bool) -> None:
    require_prompt(prompt, demo)
    console = Console(trace=trace)
    cwd = working_directory()
    if demo and prompt:
        console.notice("--demo replays a fixed exchange; --prompt is ignored.")
    task = DEMO_PROMPT if demo else str(prompt)
    model = select_model(demo=demo, demo_model=demo_model, cwd=cwd)
    console.info(f"第 1 章 chapter 1 · model: {model.label} · cwd: {cwd}")
    console.info(f"user: {task}")
    answer = run_agent(
        task,
        model=model,
        tools=ToolRegistry([make_shell_tool(cwd)]),
        approver=TerminalApprover(console),
        console=console,
        max_turns=max_turns,
    )
    console.answer(answer)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

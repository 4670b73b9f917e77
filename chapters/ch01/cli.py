"""The command line of chapter 1: its options, then the agent its composition module builds.

This is the only place that builds a model client, a console or an approver;
the loop receives them, which is what lets the tests hand it scripted ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from chapters.ch01.agent import build_agent
from chapters.ch01.demo import DEMO_PROMPT, demo_model
from chapters.ch01.loop import run_agent
from shared.agent import DEFAULT_MAX_TURNS
from shared.approval import TerminalApprover
from shared.cli import (
    FriendlyCommand,
    Session,
    common_options,
    require_prompt,
    run_session,
    working_directory,
)
from shared.completion import ModelClient
from shared.console import Console

PROG_NAME = "python -m chapters.ch01"


@click.command(
    name="ch01", cls=FriendlyCommand, help="Chapter 1: the agent loop with one tool, shell."
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
def command(prompt: str | None, max_turns: int, trace: bool, demo: bool) -> None:
    require_prompt(prompt, demo)
    cwd = working_directory()

    def run(task: str, model: ModelClient, console: Console) -> str:
        approver = TerminalApprover(console)
        agent = build_agent(
            model=model, console=console, approver=approver, cwd=cwd, max_turns=max_turns
        )
        return run_agent(task, agent)

    session = Session(
        chapter=1, folder=cwd, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

"""The command line of chapter 2: chapter 1's options, plus --workspace.

Extends: chapters/ch01/cli.py
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.agent import build_agent
from chapters.ch02.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch02.options import choose_workspace, workspace_option
from shared.agent import DEFAULT_MAX_TURNS
from shared.approval import TerminalApprover
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.console import Console

PROG_NAME = "python -m chapters.ch02"


@click.command(
    name="ch02",
    cls=FriendlyCommand,
    help="Chapter 2: file tools that cannot leave the workspace, plus the shell.",
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
@workspace_option
def command(
    prompt: str | None, max_turns: int, trace: bool, demo: bool, workspace: Path | None
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)

    def run(task: str, model: ModelClient, console: Console) -> str:
        approver = TerminalApprover(console)
        agent = build_agent(
            model=model, console=console, approver=approver, workspace=root, max_turns=max_turns
        )
        return run_agent(task, agent)

    session = Session(
        chapter=2, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

"""The command line of chapter 2: chapter 1's, plus --workspace and the file tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import click

from chapters.ch01.cli import Session, run_session
from chapters.ch01.loop import DEFAULT_MAX_TURNS, run_agent
from chapters.ch02.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from shared.approval import TerminalApprover
from shared.cli import FriendlyCommand, common_options, require_prompt, working_directory
from shared.completion import ModelClient
from shared.console import Console

PROG_NAME = "python -m chapters.ch02"

workspace_option = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The folder the file tools may reach. Default: the current folder.",
)


def choose_workspace(
    demo: bool, workspace: Path | None, make_demo_workspace: Callable[[], Path]
) -> Workspace:
    """--workspace, else the current folder; a demo makes a temporary one of its own."""
    if demo and workspace is not None:
        raise click.UsageError("--demo makes its own temporary workspace; drop --workspace")
    return Workspace(make_demo_workspace() if demo else workspace or working_directory())


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

    def run(task: str, model: ModelClient, console: Console, max_turns: int) -> str:
        return run_agent(
            task,
            model=model,
            tools=make_tools(root),
            approver=TerminalApprover(console),
            console=console,
            max_turns=max_turns,
            system_prompt=SYSTEM_PROMPT,
        )

    session = Session(
        chapter=2, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

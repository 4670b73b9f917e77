"""The command line of chapter 3: chapter 2's options, plus --mode, --allow, --deny, and `check`.

Extends: chapters/ch02/cli.py
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.options import choose_workspace
from chapters.ch02.toolset import make_tools
from chapters.ch03.agent import build_agent
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.check import make_check_command
from chapters.ch03.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch03.options import policy_from_options, policy_options
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.console import Console

PROG_NAME = "python -m chapters.ch03"


@click.command(
    name="ch03",
    cls=FriendlyCommand,
    help="Chapter 3: a permission policy decides; only its 'ask' reaches you; all is audited.",
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
@policy_options
def command(
    prompt: str | None,
    max_turns: int,
    trace: bool,
    demo: bool,
    workspace: Path | None,
    mode: str | None,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    policy = policy_from_options(root, make_tools(root), mode, allow, deny)  # exit 2 if malformed

    def run(task: str, model: ModelClient, console: Console) -> str:
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()}")
        agent = build_agent(
            model=model,
            console=console,
            asker=TerminalAsker(console),
            workspace=root,
            policy=policy,
            audit=AuditLog(root.root / AUDIT_FILE, inside=root.root),
            max_turns=max_turns,
        )
        return run_agent(task, agent)

    session = Session(
        chapter=3, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(make_tools)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

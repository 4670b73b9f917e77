"""The command line of chapter 4: chapter 3's, with the hooks from the settings files.

Extends: chapters/ch03/cli.py
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.options import choose_workspace
from chapters.ch02.toolset import make_tools
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.check import make_check_command
from chapters.ch03.options import policy_from_options, policy_options
from chapters.ch04.agent import build_agent
from chapters.ch04.check_hooks import PreToolUseAdviser
from chapters.ch04.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch04.hooks import Hooks
from chapters.ch04.settings import hook_programs, load_hooks
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.console import Console

PROG_NAME = "python -m chapters.ch04"


@click.command(
    name="ch04",
    cls=FriendlyCommand,
    help="Chapter 4: your own programs (hooks) at the loop's seams, around chapter 3's policy.",
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
    hooks = Hooks(load_hooks(root, Path.home()))  # exit 2 if malformed
    policy = policy.protecting(hook_programs(root, Path.home()))  # what the hooks run

    def run(task: str, model: ModelClient, console: Console) -> str:
        counts = ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()} · hooks: {counts}")
        agent = build_agent(
            model=model,
            console=console,
            asker=TerminalAsker(console),
            workspace=root,
            policy=policy,
            audit=AuditLog(root.root / AUDIT_FILE, inside=root.root),
            hooks=hooks,
            max_turns=max_turns,
        )
        return run_agent(task, agent)

    session = Session(
        chapter=4, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(make_tools, PreToolUseAdviser(), hook_programs)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

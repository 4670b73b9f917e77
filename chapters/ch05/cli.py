"""The command line of chapter 5: chapter 4's, plus --remind-after.

Extends: chapters/ch04/cli.py
"""

from __future__ import annotations

import sys
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
from chapters.ch04.settings import hook_programs, load_hooks
from chapters.ch05.agent import build_agent, chapter_tools
from chapters.ch05.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch05.todo import REMIND_AFTER, TodoPlan
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.console import Console, is_terminal

PROG_NAME = "python -m chapters.ch05"
DEMO_PAUSE = 0.8  # seconds per scripted reply in a terminal, to watch the plan under the spinner


@click.command(
    name="ch05",
    cls=FriendlyCommand,
    help="Chapter 5: the agent keeps a todo plan (todo_write); you watch it under the spinner.",
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
@policy_options
@click.option(
    "--remind-after",
    type=click.IntRange(min=1),
    default=REMIND_AFTER,
    show_default=True,
    help="Remind the model of its open plan after this many replies without todo_write.",
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
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    policy = policy_from_options(root, chapter_tools(root), mode, allow, deny)  # exit 2 if bad
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
            plan=TodoPlan(remind_after=remind_after),
            max_turns=max_turns,
        )
        return run_agent(task, agent)

    def paced_demo_model() -> ModelClient:
        return demo_model(pause=DEMO_PAUSE if is_terminal(sys.stderr) else 0.0)

    session = Session(
        chapter=5, folder=root.root, demo_model=paced_demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(chapter_tools, PreToolUseAdviser(), hook_programs)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

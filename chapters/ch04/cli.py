"""The command line of chapter 4: chapter 3's, with the hooks from the settings files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from chapters.ch01.cli import Session, run_session
from chapters.ch01.loop import DEFAULT_MAX_TURNS
from chapters.ch02.cli import choose_workspace
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.cli import check_command as check_command
from chapters.ch03.cli import load_chapter_policy, policy_options
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch04.gate import HookedGate
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop import run_agent
from chapters.ch04.settings import load_hooks
from shared.cli import FriendlyCommand, common_options, require_prompt
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
    policy = load_chapter_policy(root, mode, allow, deny)  # exit 2 if malformed
    hooks = Hooks(load_hooks(root, Path.home()))  # exit 2 if malformed
    tools = make_tools(root, hidden=policy.hides)

    def run(task: str, model: ModelClient, console: Console, max_turns: int) -> str:
        return run_agent(
            task,
            model=model,
            tools=tools,
            handle_call=hooked_gate(root, policy, hooks, console),
            hooks=hooks,
            workspace=root,
            console=console,
            system_prompt=SYSTEM_PROMPT,
            max_turns=max_turns,
        )

    session = Session(
        chapter=4, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def hooked_gate(root: Workspace, policy: Policy, hooks: Hooks, console: Console) -> HookedGate:
    """Chapter 3's gate inside the hooks, after one line that says how both are set up."""
    counts = ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"
    console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()} · hooks: {counts}")
    gate = PermissionGate(policy, TerminalAsker(console), AuditLog(root.root / AUDIT_FILE), console)
    return HookedGate(gate, hooks, root)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

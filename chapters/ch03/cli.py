"""The command line of chapter 3: chapter 2's, plus --mode, --allow, --deny, and `check`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from chapters.ch01.cli import Session, run_session
from chapters.ch01.loop import DEFAULT_MAX_TURNS, run_agent
from chapters.ch02.cli import choose_workspace, workspace_option
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Mode, Policy
from chapters.ch03.rules import KEY_ARGUMENTS, Rule, RuleError
from chapters.ch03.settings import load_policy
from shared.cli import FriendlyCommand, common_options, require_prompt, working_directory
from shared.completion import ModelClient
from shared.console import Console
from shared.tools import ToolRegistry

PROG_NAME = "python -m chapters.ch03"
F = TypeVar("F", bound=Callable[..., Any])


def policy_options(function: F) -> F:
    """--workspace, --mode, --allow, --deny: shared by the agent and by `check`."""
    for option in reversed(
        [
            workspace_option,
            click.option(
                "--mode",
                type=click.Choice([m.value for m in Mode]),
                help="default (reads allowed), accept-edits (writes too), plan (read-only), "
                "bypass (everything no deny rule matches runs unasked; deny rules see only the "
                "text of each part). Default: the settings' defaultMode, else default.",
            ),
            click.option(
                "--allow",
                multiple=True,
                metavar="RULE",
                help="Allow rule, e.g. 'shell(git status)'.",
            ),
            click.option(
                "--deny", multiple=True, metavar="RULE", help="Deny rule, e.g. 'shell(rm:*)'."
            ),
        ]
    ):
        function = option(function)
    return function


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
    policy = load_chapter_policy(root, mode, allow, deny)  # exit 2 if malformed
    tools = make_tools(root, hidden=policy.hides)  # grep and glob honour read deny rules

    def run(task: str, model: ModelClient, console: Console, max_turns: int) -> str:
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()}")
        audit = AuditLog(root.root / AUDIT_FILE)
        gate = PermissionGate(policy, TerminalAsker(console), audit, console)
        return run_agent(
            task,
            model=model,
            tools=tools,
            console=console,
            max_turns=max_turns,
            system_prompt=SYSTEM_PROMPT,
            handle_call=gate,
        )

    session = Session(
        chapter=3, folder=root.root, demo_model=demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def make_check_command(
    chapter_tools: Callable[[Workspace], ToolRegistry] = make_tools,
) -> click.Command:
    """`permissions check` for a chapter whose tools are `chapter_tools(workspace)`."""

    @click.command(name="check", cls=FriendlyCommand)
    @click.argument("call_text", metavar="'TOOL(ARGUMENT)'")
    @policy_options
    def check_command(
        call_text: str,
        workspace: Path | None,
        mode: str | None,
        allow: tuple[str, ...],
        deny: tuple[str, ...],
    ) -> None:
        """Print what the policy decides for a call, and why, without running anything.

        \b
          check 'shell(git push origin main)'
          check 'read_file(secrets/token.txt)' --mode plan
        """
        root = Workspace(workspace or working_directory())
        tools = chapter_tools(root).snapshot()  # for names and side effects; nothing runs
        policy = load_chapter_policy(root, mode, allow, deny, more_tools=tools.names)
        try:
            parsed = Rule.parse(call_text, "check", tools.names)
        except RuleError as error:
            raise click.UsageError(f"{error}") from None
        tool = tools.get(parsed.tool)
        assert tool is not None  # Rule.parse accepted only known tools
        arguments = {KEY_ARGUMENTS[parsed.tool]: parsed.spec} if parsed.spec is not None else {}
        call = policy.call(parsed.tool, tool.side_effect, arguments)
        verdict = policy.decide(call)
        click.echo(f"{verdict.decision}: {call.shown}")
        click.echo(f"  because: {verdict.source}")
        click.echo(f"  mode: {policy.mode}")

    return check_command


check_command = make_check_command()


def load_chapter_policy(
    root: Workspace,
    mode: str | None,
    allow: Sequence[str],
    deny: Sequence[str],
    more_tools: Sequence[str] = (),
) -> Policy:
    """The policy for this workspace: both settings files, then the flags.

    Rules may name chapter 2's tools, plus `more_tools` that a later chapter adds.
    """
    return load_policy(
        root,
        Path.home(),
        known_tools=(*make_tools(root).snapshot().names, *more_tools),
        mode=Mode(mode) if mode else None,
        allow=allow,
        deny=deny,
    )


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

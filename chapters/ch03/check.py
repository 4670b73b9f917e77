"""`python -m tutorial permissions check --chapter N 'TOOL(ARGUMENT)'`: decide, run nothing.

The policy is loaded exactly as the chapter's agent loads it (settings files,
then the flags) and asked about one call. For a path outside the workspace
it also says what happens next: the policy may allow a read, and the
workspace boundary still refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from chapters.ch02.workspace import Workspace
from chapters.ch03.options import policy_from_options, policy_options
from chapters.ch03.rules import Rule, RuleError
from shared.cli import FriendlyCommand, working_directory
from shared.decisions import Decision
from shared.tools import ToolRegistry


def make_check_command(chapter_tools: Callable[[Workspace], ToolRegistry]) -> click.Command:
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
        tools = chapter_tools(root)  # for names, keys and side effects; nothing runs
        policy = policy_from_options(root, tools, mode, allow, deny)
        try:
            parsed = Rule.parse(call_text, "check", tools)
        except RuleError as error:
            raise click.UsageError(f"{error}") from None
        tool = tools.get(parsed.tool)
        assert tool is not None  # Rule.parse accepted only known tools
        arguments = {tool.key.name: parsed.spec} if tool.key and parsed.spec is not None else {}
        call = policy.call(tool, arguments)
        verdict = policy.decide(call)
        click.echo(f"{verdict.decision}: {call.shown}")
        click.echo(f"  because: {verdict.source}")
        click.echo(f"  mode: {policy.mode}")
        if call.outside and verdict.decision is not Decision.DENY:
            click.echo(
                f"  then: the workspace boundary refuses it ({call.outside}); it would not run"
            )

    return check_command

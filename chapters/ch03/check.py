"""`python -m tutorial permissions check --chapter N 'TOOL(ARGUMENT)'`: decide, never run the call.

The policy is loaded exactly as the chapter's agent loads it (settings files,
then the flags) and asked about one call. For a path outside the workspace
it also says what happens next: the policy may allow a read, and the
workspace boundary still refuses it.

A chapter whose runs hear more than the policy before a call (programs of the
user's, say) passes an `Adviser`: it may add flags of its own, hears the call
before the policy decides, and says in the output what it did. Without one,
the check prints what this chapter's policy decides, and nothing else.

A chapter whose runs protect more control files than chapter 3's (`Policy.protecting`)
passes the function its command line builds them with (`protects`), so the check asks
about the same writes a run asks about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import click

from chapters.ch02.workspace import Workspace
from chapters.ch03.control import ControlFile
from chapters.ch03.options import policy_from_options, policy_options
from chapters.ch03.policy import Call, Policy
from chapters.ch03.rules import Rule, RuleError
from shared.cli import FriendlyCommand, working_directory
from shared.decisions import Decision
from shared.tools import ToolRegistry

CHECK_CALL_ID = "permissions_check"  # the call the check asks about has no tool_call id of its own
# A chapter's own control files, from the workspace and the home folder (`Policy.protecting`).
Protects = Callable[[Workspace, Path], Iterable[ControlFile]]


@dataclass(frozen=True)
class Advice:
    """What an adviser adds to a check: the policy to decide with, and what to say."""

    policy: Policy  # the check's policy, or one with the adviser's layers in it
    lines: Sequence[str] = ()  # printed after the decision, each on a line of its own


class Adviser(Protocol):
    """Whatever a chapter's runs hear before its policy decides, heard by the check too."""

    def options(self) -> Sequence[click.Option]:
        """The adviser's own flags; their values arrive in `advise`'s `flags`, by name."""
        ...

    def advise(
        self, policy: Policy, call: Call, arguments: Mapping[str, Any], flags: Mapping[str, Any]
    ) -> Advice:
        """Hear `call` (its key argument in `arguments`) before `policy` decides."""
        ...


def make_check_command(
    chapter_tools: Callable[[Workspace], ToolRegistry],
    adviser: Adviser | None = None,
    protects: Protects | None = None,
) -> click.Command:
    """`permissions check` for a chapter whose tools are `chapter_tools(workspace)` and
    whose runs add `protects(workspace, home)` to the control files."""

    @click.command(name="check", cls=FriendlyCommand)
    @click.argument("call_text", metavar="'TOOL(ARGUMENT)'")
    @policy_options
    def check_command(
        call_text: str,
        workspace: Path | None,
        mode: str | None,
        allow: tuple[str, ...],
        deny: tuple[str, ...],
        **flags: Any,
    ) -> None:
        """Print what the policy decides for a call, and why, without running the call.

        \b
          check 'shell(git push origin main)'
          check 'read_file(secrets/token.txt)' --mode plan
        """
        root = Workspace(workspace or working_directory())
        tools = chapter_tools(root)  # for names, keys and side effects; nothing runs
        policy = policy_from_options(root, tools, mode, allow, deny)
        if protects is not None:
            policy = policy.protecting(protects(root, Path.home()))
        try:
            parsed = Rule.parse(call_text, "check", tools)
        except RuleError as error:
            raise click.UsageError(f"{error}") from None
        tool = tools.get(parsed.tool)
        assert tool is not None  # Rule.parse accepted only known tools
        arguments = {tool.key.name: parsed.spec} if tool.key and parsed.spec is not None else {}
        call = policy.call(tool, arguments, CHECK_CALL_ID)
        advice = adviser.advise(policy, call, arguments, flags) if adviser else Advice(policy)
        verdict = advice.policy.decide(call)
        click.echo(f"{verdict.decision}: {call.shown}")
        click.echo(f"  because: {verdict.source}")
        click.echo(f"  mode: {policy.mode}")
        if call.outside and verdict.decision is not Decision.DENY:
            click.echo(
                f"  then: the workspace boundary refuses it ({call.outside}); it would not run"
            )
        for line in advice.lines:
            click.echo(f"  {line}")

    if adviser is not None:
        check_command.params.extend(adviser.options())
    return check_command

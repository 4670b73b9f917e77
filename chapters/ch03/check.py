"""`python -m tutorial permissions check --chapter N 'TOOL(ARGUMENT)'`: decide, never run the call.

The policy is loaded exactly as the chapter's agent loads it (settings files,
then the flags) and asked about one call. For a path outside the workspace
it also says what happens next: the policy may allow a read, and the
workspace boundary still refuses it.

The check is made from the chapter's recipe: its policy is the one a run's
parts make, with every control file they protect, so the check asks about the
same writes a run asks about. A part whose runs hear more than the policy
before a call (programs of the user's, say) has an `adviser`: it may add flags
of its own, hears the call before the policy decides, and says in the output
what it did. Without one, the check prints what the policy decides, and
nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from chapters.ch03.options import policy_options
from chapters.ch03.policy import Call, Policy
from chapters.ch03.rules import Rule, RuleError
from shared.cli import FriendlyCommand
from shared.decisions import Decision
from shared.recipe import listed_tools

if TYPE_CHECKING:
    from shared.recipe import Recipe

CHECK_CALL_ID = "permissions_check"  # the call the check asks about has no tool_call id of its own


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


def make_check_command(recipe: Recipe) -> click.Command:
    """`permissions check` for a chapter's recipe: its policy, made as a run makes it (with
    every control file its parts protect), and what its advisers hear before it decides."""
    from chapters.ch03.parts import POLICY, advisers

    heard = advisers(recipe)

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
        options = {"workspace": workspace, "mode": mode, "allow": allow, "deny": deny}
        setup = recipe.setup(options)
        tools = listed_tools(setup)  # for names, keys and side effects; nothing runs
        policy = setup.get(POLICY)
        try:
            parsed = Rule.parse(call_text, "check", tools)
        except RuleError as error:
            raise click.UsageError(f"{error}") from None
        tool = tools.get(parsed.tool)
        assert tool is not None  # Rule.parse accepted only known tools
        arguments = {tool.key.name: parsed.spec} if tool.key and parsed.spec is not None else {}
        call = policy.call(tool, arguments, CHECK_CALL_ID)
        advice = Advice(policy)
        for adviser in heard:
            said = adviser.advise(advice.policy, call, arguments, flags)
            advice = Advice(said.policy, [*advice.lines, *said.lines])
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

    for adviser in heard:
        check_command.params.extend(adviser.options())
    return check_command

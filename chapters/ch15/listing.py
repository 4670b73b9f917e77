"""`python -m tutorial team --chapter N [--team NAME]`: a team's members and its waiting mail.

    team default in .tutorial/teams/default/ of /home/me/shop (lead: lead@default):
    name   agent    status   undelivered
    lead   -        -        0
    alice  general  idle     1
    bob    explore  stopped  0

Read from the team's files (chapters/ch15/team_config.py, chapters/ch15/mailbox.py):
nothing runs, nothing is written and no lock is taken. A member a killed run left
`working` or `idle` says so until the next run on the team marks it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from shared.cli import FriendlyCommand, working_directory

if TYPE_CHECKING:
    from shared.recipe import Recipe

HEADER = ("name", "agent", "status", "undelivered")


def make_team_command(
    recipe: Recipe, more: Callable[[Path, str], None] | None = None
) -> click.Command:
    """`team` for a chapter's recipe; `more(root, team)` prints what else a part keeps of
    the team, after the members."""

    @click.command(name="team", cls=FriendlyCommand)
    @workspace_option
    @click.option("--team", "team", default="default", show_default=True, metavar="NAME")
    def team_command(workspace: Path | None, team: str) -> None:
        """List a team's members, their status and their undelivered messages; nothing runs."""
        from chapters.ch15.mailbox import LEAD, MailboxError, Mailboxes, team_name_problem
        from chapters.ch15.team_config import TeamConfig, TeamError

        problem = team_name_problem(team)
        if problem:
            raise click.BadParameter(problem, param_hint="--team")
        root = Workspace(workspace or working_directory()).root
        config, mail = TeamConfig(root, team), Mailboxes(root, team)
        try:
            members = config.members()
        except TeamError as error:
            raise click.ClickException(str(error)) from None

        def waiting(name: str) -> str:
            try:
                return str(mail.undelivered(name))
            except MailboxError as error:
                click.echo(f"warning: {error}", err=True)
                return "?"

        folder = f".tutorial/teams/{team}/"
        if not members and waiting(LEAD) == "0":
            click.echo(
                f"Team {team} in {folder} of {root} has no members yet: a run of chapter "
                f"{recipe.chapter} there starts them with spawn_teammate."
            )
        else:
            click.echo(f"team {team} in {folder} of {root} (lead: {LEAD}@{team}):")
            rows = [(LEAD, "-", "-", waiting(LEAD))]
            rows += [(m.name, m.agentType, m.status.value, waiting(m.name)) for m in members]
            widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]
            for row in [HEADER, *rows]:
                cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                click.echo("  ".join(cells).rstrip())
        if more is not None:
            more(root, team)

    return team_command

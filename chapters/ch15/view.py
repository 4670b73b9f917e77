"""The team as the human sees it in a terminal: one line under the lead's spinner.

    ⠋ waiting for teammates' messages (at most 600s) · 4s
    team default: alice working · bob idle

The line is drawn again at every refresh, so it follows the teammates as they
work and go idle. Plain output needs nothing from here: each teammate's lines
carry its name, and the lead's wait is a line of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

    from chapters.ch15.team import Team


def team_line(team: Team) -> str:
    """`team default: alice working · bob idle`, in the order they joined."""
    working = set(team.working())
    shown = [f"{name} {'working' if name in working else 'idle'}" for name in team.member_names()]
    return f"team {team.name}: {' · '.join(shown)}"


class TeamLine:
    """The line as rich draws it: read again at every refresh."""

    def __init__(self, team: Team) -> None:
        self.team = team

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        yield Text(team_line(self.team), style="cyan")


def team_view(team: Team | None) -> RenderableType | None:
    """The line for `console.keep_in_view`; None while no teammate of this run runs."""
    return TeamLine(team) if team is not None and team.member_names() else None

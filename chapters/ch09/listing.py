"""`python -m tutorial sessions --chapter N`: the sessions a run here could resume.

One row per session log in the workspace's `.tutorial/sessions/`, the most
recent first: its id, when it started, how many model replies it had (over
all its runs), how its latest run ended (answered, failed, or interrupted:
stopped by Ctrl-C, killed, or still running) and its first prompt. Problems
with a log (a last line cut half-way) go to stderr, one line each. Nothing is
started, no model is asked and no log is changed.
"""

from __future__ import annotations

from pathlib import Path

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch09.sessions import HEADER, list_sessions
from shared.cli import FriendlyCommand, working_directory


@click.command(name="sessions", cls=FriendlyCommand)
@workspace_option
def sessions_command(workspace: Path | None) -> None:
    """List the sessions of this folder, most recent first; resume one with --resume ID."""
    root = Workspace(workspace or working_directory()).root
    sessions, problems = list_sessions(root)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    for session in sessions:
        for warning in session.warnings:
            click.echo(f"warning: {session.shown}: {warning}", err=True)
    if not sessions:
        click.echo(
            f"No sessions in {root} yet: every run from this folder starts one, "
            f"in {SESSIONS_FOLDER.as_posix()}/."
        )
        return
    count = "1 session" if len(sessions) == 1 else f"{len(sessions)} sessions"
    click.echo(
        f"{count} in {root}, the most recent first. Go on with one: --resume ID "
        "(the start of the ID is enough), or --resume for the first.\n"
    )
    click.echo("\n".join([HEADER, *(session.row() for session in sessions)]))

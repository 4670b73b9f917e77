"""`python -m tutorial jobs --chapter N`: the background jobs of a workspace, from their files.

    2 background jobs in .tutorial/jobs/ of /home/me/shop:
    id   status     exit code  runtime  command
    bg1  completed  0          3.2s     pytest -q
    bg2  killed     -15        1m05s    python -m http.server 8000

Each row is one `.tutorial/jobs/bgN.json`, as the run that started the job last
wrote it (chapters/ch13/jobs.py). Nothing runs and no process is asked: a job
whose run was killed before it could record the end still says `running`, and
its runtime is not known (`-`). A file that cannot be read is one warning on
stderr; the rest are listed.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from shared.cli import FriendlyCommand, working_directory

if TYPE_CHECKING:
    from chapters.ch13.jobs import Job

COMMAND_CHARS = 80  # of a command, in its row
HEADER = ("id", "status", "exit code", "runtime", "command")


@click.command(name="jobs", cls=FriendlyCommand)
@workspace_option
def jobs_command(workspace: Path | None) -> None:
    """List the background jobs of this workspace, from their state files; nothing runs."""
    from chapters.ch13.jobs import JOBS_FOLDER, read_saved_jobs

    root = Workspace(workspace or working_directory()).root
    jobs, warnings = read_saved_jobs(root)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    folder = f"{JOBS_FOLDER.as_posix()}/"
    if not jobs:
        click.echo(
            f"No background jobs in {folder} of {root} yet: a run from this folder starts "
            "them with shell(run_in_background=true)."
        )
        return
    count = len(jobs)
    click.echo(f"{count} background job{'s' if count != 1 else ''} in {folder} of {root}:")
    for line in table([HEADER, *(row(job) for job in jobs)]):
        click.echo(line)


def row(job: Job) -> tuple[str, str, str, str, str]:
    exit_code = "-" if job.exit_code is None else str(job.exit_code)
    command = " ".join(job.command.split())
    if len(command) > COMMAND_CHARS:
        command = command[: COMMAND_CHARS - 1] + "…"
    return (job.id, job.status.value, exit_code, runtime(job), command)


def runtime(job: Job) -> str:
    """`3.2s`, `1m05s`, `2h03m`; `-` while the file says the job runs (or cannot say)."""
    if job.ended is None:
        return "-"
    try:
        seconds = datetime.fromisoformat(job.ended) - datetime.fromisoformat(job.started)
    except ValueError:
        return "-"
    total = max(seconds.total_seconds(), 0.0)
    if total < 60:
        return f"{total:.1f}s"
    whole = int(total)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """The rows in columns two spaces apart; the last column as it is."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(r, widths, strict=False)), r[-1]])
        for r in rows
    ]

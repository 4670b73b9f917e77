"""`python -m tutorial cron --chapter N`: the durable scheduled jobs of a folder, from their file.

    2 durable scheduled jobs in .tutorial/scheduled_tasks.json of /home/me/shop:
    5d41402a  */30 * * * *  Every 30 minutes · next 2026-12-04 10:30:00 · recurring · durable
       prompt: check the build
    ...

Each job is one entry of `.tutorial/scheduled_tasks.json`, in the lines `cron_list`
shows (`job_line`, chapters/ch14/schedule.py). The next fire is the first slot after
the job last fired (or was created), on the run's clock (TUTORIAL_NOW when set). A
slot that has passed says so: the next run that stays and owns the schedule fires a
recurring job once, marked with the runs it missed, and deletes a one-shot unrun.
Nothing runs, nothing is written and no lock is taken; a job of a run that is not
durable lives in that run's memory, and is not here. An entry that cannot be read is
one warning on stderr; the rest are listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from shared.cli import FriendlyCommand, working_directory

if TYPE_CHECKING:
    from datetime import datetime

    from chapters.ch14.schedule import ScheduledJob


@click.command(name="cron", cls=FriendlyCommand)
@workspace_option
def cron_command(workspace: Path | None) -> None:
    """List the durable scheduled jobs of this folder, as cron_list shows them; nothing runs."""
    from chapters.ch14.cron import CronError
    from chapters.ch14.parts import make_clock
    from chapters.ch14.schedule import SCHEDULE_FILE, ScheduleError, job_line, read_durable

    root = Workspace(workspace or working_directory()).root
    now = make_clock(demo=False).now()  # a bad TUTORIAL_NOW: exit 2 with the fix
    try:
        jobs, warnings = read_durable(root)
    except ScheduleError as error:
        raise click.ClickException(str(error)) from None
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    shown = SCHEDULE_FILE.as_posix()
    if not jobs:
        click.echo(
            f"No durable scheduled jobs in {shown} of {root} yet: a run from this folder "
            "makes them with cron_create(durable=true)."
        )
        return
    count = len(jobs)
    click.echo(f"{count} durable scheduled job{'s' if count != 1 else ''} in {shown} of {root}:")
    for job in jobs:
        try:
            at = next_fire(job)
        except CronError as error:  # a hand-edited file: the run refuses it the same way
            click.echo(f"warning: job {job.id}: {error}", err=True)
            continue
        click.echo(job_line(job, at))
        if at <= now:
            click.echo(f"   {passed(job)}")


def next_fire(job: ScheduledJob) -> datetime:
    """The first slot after the job last fired, or after it was created."""
    from chapters.ch14.cron import parse_cron

    return parse_cron(job.cron).next_after(job.last_fired_at or job.created_at)


def passed(job: ScheduledJob) -> str:
    """What the next run that stays does with a job whose slot has passed."""
    if job.recurring:
        return "missed: the next run that stays fires it once, marked with the runs it missed"
    return "missed: the next run that stays deletes this one-shot without running it"

"""The background jobs as the human sees them in a terminal: one line under the spinner.

    后台 jobs: 2 running · bg2: collected 214 items

and, while the run waits for a job because the model has answered, the spinner says
so and the line counts down the time left:

    ⠋ waiting for a background event (at most 600s) · 12s
    后台 jobs: 1 running · bg1: tests/test_cart.py ....  · 9m48s left

The line is drawn again at every refresh of the spinner, not only when the wait
starts: a job prints while the model thinks, and the newest line is the news. It
reads at most 4 KB of the newest job's log each time (`JobManager.newest_line`).
Plain output needs nothing from here: a job's end is a line of its own when the
inbox delivers it, and a wait is one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from chapters.ch13.inbox import Waiting
from chapters.ch13.jobs import Job, UnknownJob
from chapters.ch13.run_jobs import RunJobs
from shared.agent import Run
from shared.console import waited

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

LINE_CHARS = 80  # of the newest output line shown


def jobs_line(running: list[Job], newest: str, left: float | None = None) -> str:
    """`后台 jobs: 2 running · bg2: <its newest line>`, and the time left while waiting."""
    line = f"后台 jobs: {len(running)} running"
    if running:
        shown = newest if len(newest) <= LINE_CHARS else newest[: LINE_CHARS - 1] + "…"
        line += f" · {running[-1].id}: {shown or '(no output yet)'}"
    if left is not None:
        line += f" · {waited(left)} left"
    return line


class JobsLine:
    """The line as rich draws it: read again at every refresh."""

    def __init__(self, jobs: RunJobs) -> None:
        self.jobs = jobs

    def text(self) -> str:
        running = self.jobs.running()
        newest = ""
        if running:
            try:
                newest = self.jobs.started(running[-1].id).newest_line(running[-1].id)
            except (UnknownJob, OSError):  # the run ended meanwhile
                newest = ""
        until = self.jobs.wait_until
        left = None if until is None else max(until - self.jobs.clock(), 0.0)
        return jobs_line(running, newest, left)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        yield Text(self.text(), style="cyan")


def jobs_view(jobs: RunJobs) -> RenderableType | None:
    """The line for `console.keep_in_view`; None while no job runs and nothing is awaited."""
    if not jobs.running() and jobs.wait_until is None:
        return None
    return JobsLine(jobs)


def waiting_for_jobs(jobs: RunJobs) -> Waiting:
    """DeliverEvents' wait: the console's spinner, and the time left on the jobs' line."""

    @contextmanager
    def waiting(run: Run, seconds: float) -> Iterator[None]:
        jobs.wait_until = jobs.clock() + seconds
        try:
            with run.agent.console.waiting(
                f"waiting for a background event (at most {seconds:g}s)"
            ):
                yield
        finally:
            jobs.wait_until = None

    return waiting

"""The stay as the human sees it in a terminal: one line under the spinner.

    ⠋ staying for scheduled jobs (at most 10m00s) · 12s
    schedule: next 5d41402a at 10:00:00, in 3s · the stay ends in 9m45s

The line is drawn again at every refresh of the spinner, so both times count down
by themselves; it reads the schedule each time (its jobs in memory, and the
durable ones' file, which is small). It shows only while the run stays: while
the model thinks, a job that comes due waits for the answer anyway. Plain output
needs nothing from here: the wait is one line, and each fire a line of its own.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from chapters.ch14.schedule import ScheduleError
from chapters.ch14.staying import FireBetweenTurns
from shared.console import waited

if TYPE_CHECKING:
    from datetime import datetime

    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


def stay_line(next_id: str | None, next_at: datetime | None, until_it: float, left: float) -> str:
    """`schedule: next a1b2c3d4 at 10:00:00, in 3s · the stay ends in 9m45s`: whole seconds,
    rounded up, so the countdown says `in 1s` until the job is due."""
    if next_id is None or next_at is None:
        coming = "nothing due for this run"
    elif until_it > 0:
        coming = f"next {next_id} at {next_at:%H:%M:%S}, in {waited(math.ceil(until_it))}"
    else:
        coming = f"next {next_id} at {next_at:%H:%M:%S}, due now"
    return f"schedule: {coming} · the stay ends in {waited(math.ceil(max(left, 0.0)))}"


class StayLine:
    """The line as rich draws it: read again at every refresh."""

    def __init__(self, stay: FireBetweenTurns) -> None:
        self.stay = stay

    def text(self) -> str:
        stay, clock = self.stay, self.stay.clock
        left = 0.0 if stay.until is None else clock.seconds_until(stay.until)
        try:
            coming = stay.next_fire()
        except ScheduleError:  # drawn on rich's thread: the stay itself says what broke
            coming = None
        if coming is None:
            return stay_line(None, None, 0.0, left)
        job, at = coming
        return stay_line(job.id, at, clock.seconds_until(at), left)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        yield Text(self.text(), style="cyan")


def stay_view(stay: FireBetweenTurns) -> RenderableType | None:
    """The line for `console.keep_in_view`; None unless the run is staying."""
    return StayLine(stay) if stay.staying else None

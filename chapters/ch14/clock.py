"""The run's wall clock: the machine's, or one that starts at a given instant and runs from there.

Every time the schedule reads goes through one `Clock`, so a test or the demo
can say "it is 2026-12-04 09:59:58 now" (`TUTORIAL_NOW`) and the run behaves as
it would at that instant, while seconds still pass at their normal speed: a job
due two seconds later fires two real seconds later. Nothing waits for a real
minute to test a cron schedule.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

NOW_VARIABLE = "TUTORIAL_NOW"
EXAMPLE_NOW = "2026-12-04T09:59:58"


class ClockError(ValueError):
    """`TUTORIAL_NOW` holds something that is not an ISO 8601 instant."""


class Clock:
    """Now, as the run sees it: aware, in the machine's local time zone.

    `start` None: the machine's clock. Given (aware, or naive meaning local time):
    the clock reads `start` when it is made and runs at normal speed from there,
    measured by `monotonic` (so a change of the system clock does not move it).
    """

    def __init__(
        self, start: datetime | None = None, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._start = None if start is None else start.astimezone()
        self._monotonic = monotonic
        self._origin = monotonic()

    def now(self) -> datetime:
        if self._start is None:
            return datetime.now().astimezone()
        elapsed = self._monotonic() - self._origin
        return (self._start + timedelta(seconds=elapsed)).astimezone()

    def seconds_until(self, when: datetime) -> float:
        """Seconds from now until `when`; negative if it has passed."""
        return (when - self.now()).total_seconds()


def clock_from_env(environ: Mapping[str, str]) -> Clock:
    """The machine's clock, or one started at `TUTORIAL_NOW` (a naive instant is local time)."""
    value = environ.get(NOW_VARIABLE, "").strip()
    if not value:
        return Clock()
    try:
        start = datetime.fromisoformat(value)
    except ValueError:
        raise ClockError(
            f"{NOW_VARIABLE}={value!r} is not an ISO 8601 instant; write it like "
            f"{NOW_VARIABLE}={EXAMPLE_NOW} (local time) or {NOW_VARIABLE}={EXAMPLE_NOW}Z "
            "(UTC), or unset it to use the machine's clock"
        ) from None
    return Clock(start)

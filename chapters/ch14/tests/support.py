"""What chapter 14's run tests share: a wall clock a test may move ahead, the machine's time
zone set to UTC, job ids known in advance, and chapter 14's agent on scripted streams.

The clock starts at `START`, two seconds before 10:00, and runs at normal speed: a
job for 10:00 fires two real seconds later. A test that must not wait jumps the clock
ahead instead (`Jumps.jump`, from inside a scripted reply: while the model works).
Nothing sleeps: the run itself waits on its inbox, and every run is bounded by its
--stay-for (`BOUND` at most).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import count
from typing import Any

import pytest

from chapters.ch09.session_log import SessionLog
from chapters.ch11.tests.composed import STARTED
from chapters.ch13.tests.support import Agent13
from chapters.ch14.clock import Clock
from chapters.ch14.schedule import Schedule

BOUND = 30.0  # seconds: the most any one wait (or any one stay) in these tests may take
START = datetime(2026, 12, 4, 9, 59, 58)  # local time (UTC here): 10:00 is two seconds away
SCHEDULED = "[scheduled "  # how a fire's message starts


@pytest.fixture
def utc() -> Iterator[None]:
    """The machine's time zone is UTC for the test (TZ=UTC), and what it was after."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def at(text: str) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (the tests' TZ is UTC)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Jumps:
    """The real monotonic clock, plus the seconds a test jumped ahead."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.ahead

    def jump(self, seconds: float) -> None:
        self.ahead += seconds


def job_ids() -> Callable[[], str]:
    """Job ids known in advance: 00000001, 00000002, ..."""
    numbers = count(1)
    return lambda: f"{next(numbers):08x}"


@dataclass
class Agent14(Agent13):
    """One run of chapter 14's agent in tmp_path/ws on scripted streams, on a wall clock that
    starts at `START` (local time) and that a reply may jump ahead; ids 00000001, ..."""

    chapter = 14
    stay_for: float = 0.0
    start: datetime = START  # what the wall clock reads when the run is built
    jumps: Jumps = field(default_factory=Jumps)
    max_turns: int = 20
    schedule: Schedule | None = None  # made by `build`, on the rig's clock

    def build(self) -> Any:
        clock = Clock(self.start, monotonic=self.jumps)
        self.schedule = Schedule(self.root, clock, new_id=job_ids())
        return super().build()

    def given(self) -> dict[str, Any]:
        assert self.schedule is not None
        given = {**super().given(), "log": SessionLog.new(self.root, 14, STARTED)}
        given["wall_clock"], given["schedule"] = self.schedule.clock, self.schedule
        given["stay_for"], given["max_turns"] = self.stay_for, self.max_turns
        return given

    def timed_run(self, prompt: str) -> tuple[str, float]:
        """The answer, and how many real seconds the run took."""
        started = time.monotonic()
        answer = self.run(prompt)
        return answer, time.monotonic() - started


def scheduled_messages(request: Mapping[str, Any]) -> list[str]:
    """The contents of `request`'s messages that are fires, in order."""
    return [
        str(m["content"])
        for m in request["messages"]
        if m["role"] == "user" and str(m.get("content")).startswith(SCHEDULED)
    ]

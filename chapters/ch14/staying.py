"""The run stays after its answer, and a scheduled prompt comes back as a new turn.

The model cannot keep time: it is asked, it answers, and between two requests it
does not exist. So the harness keeps the time (chapters/ch14/schedule.py), and a
job that comes due becomes a user message, `[scheduled a1b2c3d4] <prompt>`, sent
through chapter 13's inbox. Only one moment is safe for it, the one after an answer:

    the model answers (on_stop)
      FireBetweenTurns     first time: the stay's end (now + --stay-for) and the folder's
                           owner lock (`try_own`: a missed one-shot is said and deleted).
                           Then, inside one wait (the spinner and the countdown line):
                             take_due -> each fire posted to the inbox, one line each
                             an event pending (a fire, or a background job's end): go on
                             no job of this run left / the stay over / no request left:
                               say why, and let the run end
                             inbox.wait(at most SCHEDULE_POLL s); the owner lock again
      DeliverEvents (ch13) finds the fire pending: KeepGoing with its message, a new turn

A job that comes due while the model works waits for the answer, because the
schedule is read here and nowhere else: the fire never enters in the middle of a
turn, between a tool call and its result. Due slots of one job merge into one fire
(`Schedule.take_due`). The inbox is told `expect("schedule:stay")` for the stay, so
its wait lasts until something is posted or the time is up; a background job's end
wakes it too, and chapter 13 delivers it the same way.

Bounds: the stay lasts at most --stay-for seconds (`MAX_STAY`, 7 days) from the
first answer; the schedule is read again at least every `SCHEDULE_POLL` seconds
(another run may have let the owner lock go); each fire is a request, counted by
--max-turns, and a run that has no request left does not stay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from chapters.ch13.inbox import Inbox, Waiting
from chapters.ch14.schedule import ScheduleError, job_brief, local_time
from shared.agent import Feature, Run
from shared.console import waited

if TYPE_CHECKING:
    from chapters.ch14.clock import Clock
    from chapters.ch14.schedule import Fire, Missed, Schedule, ScheduledJob

MAX_STAY = 7 * 24 * 3600.0  # seconds: the longest --stay-for (a recurring job's life)
SCHEDULE_POLL = 1.0  # seconds: the longest the stay waits before reading the schedule again
EARLY = 0.01  # seconds past a job's next fire that the stay wakes for it: then it is due
STAY_SOURCE = "schedule:stay"  # what the inbox expects while the run stays
PROMPT_CHARS = 60  # of a job's prompt, in a console line


def staying_spinner(run: Run, seconds: float) -> AbstractContextManager[object]:
    """What the console shows while the run stays: its spinner, with the time left."""
    return run.agent.console.waiting(
        f"staying for scheduled jobs (at most {waited(math.ceil(seconds))})"
    )


@dataclass
class FireBetweenTurns(Feature):
    """After each answer, stay until a job of this run comes due, and send it as a new turn."""

    schedule: Schedule
    inbox: Inbox
    clock: Clock
    stay_for: float  # seconds, from the first answer
    waiting: Waiting = staying_spinner
    until: datetime | None = field(default=None, init=False)  # the stay's end, once set
    staying: bool = field(default=False, init=False)  # while the run waits (the view reads it)

    def __post_init__(self) -> None:
        if not (0 <= self.stay_for <= MAX_STAY):
            raise ValueError(f"stay_for must be 0 to {MAX_STAY:g} seconds: {self.stay_for}")

    def on_stop(self, run: Run, answer: str) -> str:
        if self.stay_for <= 0:
            return answer  # --stay-for 0: the run ends after its answer, and nothing fires
        console = run.agent.console
        if run.turn >= run.agent.max_turns:  # a fire would be a request the run may not make
            console.notice(
                f"schedule: the run has made its {run.agent.max_turns} requests (--max-turns): "
                "it does not stay for the next fire"
            )
            return answer
        self.inbox.expect(STAY_SOURCE)
        try:
            self._stay(run)
        except ScheduleError as error:  # the file broke, or another run held it too long
            console.notice(f"schedule: {error}; the run stays no longer")
        finally:
            self.inbox.done(STAY_SOURCE)
        return answer

    def _stay(self, run: Run) -> None:
        """Post what is due; wait, inside one spinner, until something is pending or the
        stay ends (then say why)."""
        if self.until is None:
            self.until = self.clock.now() + timedelta(seconds=self.stay_for)
            self._said_missed(run, self.schedule.try_own())
        with ExitStack() as stay:
            while True:
                self._post(run, self.schedule.take_due())
                if self.inbox.pending():
                    return
                why = self._why_it_ends()
                if why is not None:
                    run.agent.console.notice(f"schedule: {why}; the run ends")
                    return
                left = self.clock.seconds_until(self.until)
                if not self.staying:  # entered once, only if the run has to wait
                    self.staying = True  # first: the view is read as the wait starts
                    stay.callback(setattr, self, "staying", False)
                    stay.enter_context(self.waiting(run, left))
                self.inbox.wait(self._timeout(left))
                self._said_missed(run, self.schedule.try_own())

    def on_end(self, run: Run, error: BaseException | None) -> None:
        try:
            self.schedule.close()  # the owner lock goes; the OS would let it go anyway
        except OSError as problem:
            run.agent.console.notice(f"schedule: the owner lock was not released: {problem}")

    def next_fire(self) -> tuple[ScheduledJob, datetime] | None:
        """The job that fires next, and when; None when there is none."""
        upcoming = [(job, self.schedule.next_fire(job)) for job in self.schedule.jobs()]
        return min(upcoming, key=lambda pair: pair[1], default=None)

    def _why_it_ends(self) -> str | None:
        assert self.until is not None
        if not self.schedule.fires_anything():
            return "no scheduled job is left for this run to fire"
        if self.clock.seconds_until(self.until) <= 0:
            count = len(self.schedule.jobs())
            left = f" with {count} job{'s' if count != 1 else ''} still scheduled" if count else ""
            return f"the stay is over (--stay-for {self.stay_for:g}){left}"
        return None

    def _timeout(self, left: float) -> float:
        """Until the next fire is due, the stay ends or `SCHEDULE_POLL` passes: the soonest."""
        soonest = SCHEDULE_POLL
        coming = self.next_fire()
        if coming is not None:
            until_it = self.clock.seconds_until(coming[1])
            if until_it > 0:  # a job due already that this run does not fire: poll
                soonest = min(soonest, until_it + EARLY)
        return max(0.0, min(soonest, left))

    def _post(self, run: Run, fires: Sequence[Fire]) -> None:
        for fire in fires:
            self.inbox.post(fire.event())
            run.agent.console.info(fired(fire))

    def _said_missed(self, run: Run, missed: Sequence[Missed]) -> None:
        for one in missed:
            run.agent.console.notice(missed_line(one))


def fired(fire: Fire) -> str:
    """`schedule: a1b2c3d4 fires (due 3 times while the model worked: once): <prompt>`."""
    notes = []
    if fire.missed:
        notes.append(f"missed {fire.missed} run{'s' if fire.missed != 1 else ''} before this run")
    during = fire.merged - fire.missed
    if during > 1:
        notes.append(f"due {during} times while the model worked")
    line = f"schedule: {fire.job.id} fires"
    if notes:
        line += f" ({'; '.join(notes)}: once)"
    line += f": {_short(fire.job.prompt)}"
    if fire.last:
        line += " · its last run: it expired 7 days after it was created, and is deleted"
    return line


def missed_line(missed: Missed) -> str:
    """`schedule: one-shot a1b2c3d4 (...) was due at ... while no run stayed: not run, deleted`."""
    return (
        f"schedule: one-shot {missed.job.id} ({job_brief(missed.job)}) was due at "
        f"{local_time(missed.slot)} while no run stayed: not run, deleted"
    )


def _short(prompt: str) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"

"""`--demo`: a check scheduled for the start of the next minute, two seconds away; the run
stays, and the check comes back as a new turn.

The workspace is a new temporary folder holding one file, `status.txt`, the state
of a build. The run's clock starts at 2026-03-02 09:59:58 local time (`DEMO_NOW`,
unless TUTORIAL_NOW names another instant) and runs at normal speed from there,
so the start of the next minute is two real seconds away; the demo stays up to
`DEMO_STAY` seconds (unless --stay-for says otherwise). Only the model is
scripted: the schedule, the stay, the inbox and the new turn are the chapter's
real code:

    reply 1   cron_create {"cron": "0 10 2 3 *", "prompt": FIRE_PROMPT, "recurring": false}:
              the next whole minute, read from the run's clock (a real model reads the
              time from where it can; the scripted one reads the clock)
    reply 2   the answer: the job's id and when it fires, read from the result. The
              model stopped; the run stays (FireBetweenTurns), and two seconds later
              the job is due: its fire goes to the inbox, and chapter 13's
              DeliverEvents sends `[scheduled <id>] <prompt>` as a user message
    reply 3   read_file status.txt: the scheduled prompt is a turn like any other
    reply 4   the answer to it. The one-shot is deleted once fired: no job of this run
              is left, and the run ends without waiting out the stay

The job's id comes from `demo_ids` (the same ids every run), so the golden files
(tests/golden/ch14/) hold every byte; `--trace` shows the `[scheduled …]` message
in request 3.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

from chapters.ch07.scripted_stream import (
    AgentStep,
    AgentStreams,
    call_result,
    calls_stream,
    said,
    tool_call,
)
from chapters.ch14.clock import Clock
from shared.scripted import scripted_text

DEMO_MODEL = "scripted-demo"
# Local time: the next minute is 2 s away. A day in the past, never a reader's today: the
# golden files' recorder writes today's date as <today> (scripts/record_demos.py).
DEMO_NOW = datetime(2026, 3, 2, 9, 59, 58)
DEMO_STAY = 90.0  # seconds: the next whole minute is at most 60 s away, whatever the clock says
STATUS = "status.txt"
STATUS_TEXT = "build 1187: green (412 tests passed, 0 failed)\n"
FIRE_PROMPT = f"Read {STATUS} and tell me whether the build is green."
DEMO_PROMPT = (
    f"When the next minute starts, check the build: read {STATUS} and tell me whether it is "
    "green. Schedule it once, for then; I will wait."
)
_CREATED = re.compile(r"^created (?P<id>[0-9a-f]{8}).*?next fire (?P<at>[\d-]+ [\d:]+)", re.S)
_SCHEDULED = re.compile(r"^\[scheduled (?P<id>[0-9a-f]{8})\] ")
_STATUS_LINE = re.compile(r"^\s*\d+\t(?P<line>build .*)$", re.M)  # read_file: number, tab, line


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch14-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    (folder / STATUS).write_text(STATUS_TEXT, encoding="utf-8")


def demo_clock() -> Clock:
    """The demo's clock, when TUTORIAL_NOW names no instant: two seconds to the minute."""
    return Clock(DEMO_NOW)


def demo_ids() -> Callable[[], str]:
    """The demo's job ids: eight hexadecimal digits, the same in every run."""
    numbers: Iterator[int] = count(1)
    return lambda: hashlib.sha256(f"chapter 14 demo job {next(numbers)}".encode()).hexdigest()[:8]


def demo_model(clock: Clock, *, stream: bool = True) -> AgentStreams:
    """The demo's script; the first reply reads `clock` (the run's) for the next minute."""
    steps: list[AgentStep] = [
        lambda request: _schedule(request, clock),
        _say_when,
        _read_the_status,
        _report,
    ]
    return AgentStreams({DEMO_PROMPT: steps}, name=DEMO_MODEL, stream=stream)


def next_minute(now: datetime) -> datetime:
    """The start of the minute after `now`."""
    return now.replace(second=0, microsecond=0) + timedelta(minutes=1)


def one_shot(at: datetime) -> str:
    """The cron expression that matches `at`'s minute (and, in a year, again: one-shots die)."""
    return f"{at.minute} {at.hour} {at.day} {at.month} *"


# --- the replies -------------------------------------------------------------------------------


def _schedule(request: Mapping[str, Any], clock: Clock) -> list[dict[str, Any]]:
    at = next_minute(clock.now())
    arguments = {"cron": one_shot(at), "prompt": FIRE_PROMPT, "recurring": False}
    text = scripted_text(
        f"I schedule the check once, for {at:%H:%M}: the start of the next minute."
    )
    return calls_stream(tool_call(1, "cron_create", arguments), text=text)


def _say_when(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    created = _CREATED.match(call_result(request, "call_1"))
    if created is None:
        return said(f"The check was not scheduled: {_first_line(call_result(request, 'call_1'))}")
    return said(
        f"Scheduled: job {created['id']} reads {STATUS} once, at {created['at']}. This run "
        "stays until then, and the check comes back to me as a new message."
    )


def _read_the_status(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    fired = _SCHEDULED.match(str(last.get("content"))) if last.get("role") == "user" else None
    if fired is None:
        return said("I was sent back to work, but no scheduled prompt came.")
    text = scripted_text(f"Job {fired['id']} is due: I read {STATUS}.")
    return calls_stream(tool_call(2, "read_file", {"path": STATUS}), text=text)


def _report(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = _STATUS_LINE.search(call_result(request, "call_2"))
    if found is None:
        return said(f"I could not read {STATUS}: {_first_line(call_result(request, 'call_2'))}")
    status = found["line"].strip()
    green = "green" in status and " 0 failed" in status
    verdict = "The build is green" if green else "The build is not green"
    return said(f"{verdict}: {STATUS} says `{status}`.")


def _first_line(text: str) -> str:
    return (text.splitlines() or ["(no result)"])[0]

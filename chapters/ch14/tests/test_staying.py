"""Chapter 14's run (chapters/ch14/staying.py, parts.py): a job of this run fires after an answer,
as a new turn, never in the middle of one; due slots merge into one fire; the stay ends when no
job is left, when its time is up, or when no request is left; --stay-for 0 fires nothing and the
tool says so; a missed durable job is said; children get no cron tools; a listing makes nothing.

The agent is built as the command line builds it (chapters/testing.py) on scripted streams, with
TZ=UTC and a wall clock that starts two seconds before 10:00 (tests/support.py). A reply that
must find a job due jumps the clock ahead; the one test that waits for a fire waits two real
seconds, and every run is bounded by its --stay-for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chapters.ch02.workspace import Workspace
from chapters.ch03.tests.support import ready_from
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch13.inbox import DeliverEvents, Inbox
from chapters.ch14.clock import Clock
from chapters.ch14.cron_tools import CRON_TOOLS, STAY_NOTE
from chapters.ch14.schedule import Schedule
from chapters.ch14.staying import FireBetweenTurns
from chapters.ch14.tests.support import (
    BOUND,
    START,
    Agent14,
    Jumps,
    job_ids,
    scheduled_messages,
    utc,  # noqa: F401 (a fixture)
)
from chapters.ch14.view import StayLine, stay_line, stay_view
from chapters.testing import setup_of
from shared.recipe import listed_tools
from tutorial.recipe_listing import listing, recipe_of

pytestmark = pytest.mark.usefixtures("isolated", "utc")

PROMPT = "Check the build when it is due."
Reply = list[dict[str, Any]]


def call(call_id: str, tool: str, **arguments: Any) -> Reply:
    return calls_stream((call_id, tool, json.dumps(arguments)))


def create(call_id: str, cron: str, prompt: str, **more: Any) -> Reply:
    return call(call_id, "cron_create", cron=cron, prompt=prompt, **more)


def jumping(jumps: Jumps, seconds: float, reply: Reply) -> Callable[[Mapping[str, Any]], Reply]:
    """`reply`, made after the wall clock jumped `seconds` ahead: the model worked that long."""

    def made(request: Mapping[str, Any]) -> Reply:
        jumps.jump(seconds)
        return reply

    return made


def agent14(tmp_path: Path, *steps: Any, **fields: Any) -> Agent14:
    return Agent14(tmp_path, {PROMPT: list(steps)}, **fields)


def in_order(text: str, *parts: str) -> None:
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} not after position {at} in:\n{text}"
        at = found + len(part)


# --- a fire is a new turn, after the answer ---------------------------------------------------


def test_a_job_two_seconds_ahead_fires_within_a_bound_as_a_new_turn(tmp_path: Path) -> None:
    agent = agent14(
        tmp_path,
        create("c1", "0 10 * * *", "Read the build log.", recurring=False),
        text_stream("Scheduled."),
        text_stream("The log says green."),
        stay_for=BOUND,
    )
    answer, took = agent.timed_run(PROMPT)
    assert answer == "The log says green."
    assert 1.5 <= took < BOUND  # 10:00 was two seconds away; nothing waited for the stay's end
    first, second, fired = agent.requests
    assert scheduled_messages(first) == scheduled_messages(second) == []
    assert [m["role"] for m in fired["messages"][-2:]] == ["assistant", "user"]
    assert fired["messages"][-2]["content"] == "Scheduled."
    assert fired["messages"][-1]["content"] == "[scheduled 00000001] Read the build log."
    assert agent.result("c1").startswith("created 00000001: At 10:00")
    assert STAY_NOTE not in agent.result("c1")  # this run stays: the job can fire
    in_order(
        agent.printed(),
        "… staying for scheduled jobs (at most 30s)",
        "schedule: 00000001 fires: Read the build log.",
        "inbox: schedule 00000001@",
        "came after the answer; asking again",
        "schedule: no scheduled job is left for this run to fire; the run ends",
    )
    assert agent.schedule is not None and not agent.schedule.owner()  # released at the end


def test_a_job_due_while_the_model_works_fires_only_after_its_answer(tmp_path: Path) -> None:
    jumps = Jumps()
    agent = agent14(
        tmp_path,
        create("c1", "0 10 * * *", "Read the build log.", recurring=False),
        jumping(jumps, 5.0, call("c2", "cron_list")),  # 10:00:03 when the call runs: due
        text_stream("Listed."),
        text_stream("Read."),
        stay_for=BOUND,
        jumps=jumps,
    )
    answer, _ = agent.timed_run(PROMPT)
    assert answer == "Read."
    first, in_a_call, after_the_call, fired = agent.requests
    assert "next 2026-12-04 10:00:00" in agent.result("c2")  # the call saw it due...
    for request in (first, in_a_call, after_the_call):  # ...and no request of that turn had it
        assert scheduled_messages(request) == []
    assert after_the_call["messages"][-1]["role"] == "tool"
    assert [(m["role"], m["content"]) for m in fired["messages"][-2:]] == [
        ("assistant", "Listed."),
        ("user", "[scheduled 00000001] Read the build log."),
    ]
    assert "staying for scheduled jobs" not in agent.printed()  # due at the answer: no wait


def test_due_slots_of_one_job_merge_into_one_fire(tmp_path: Path) -> None:
    jumps = Jumps()
    agent = agent14(
        tmp_path,
        create("c1", "* * * * *", "Look at the queue."),
        jumping(jumps, 3 * 60.0, call("c2", "cron_list")),  # three minutes of work
        text_stream("Worked."),
        call("c3", "cron_delete", id="00000001"),
        text_stream("Deleted the job."),
        stay_for=BOUND,
        jumps=jumps,
    )
    assert agent.run(PROMPT) == "Deleted the job."
    *_, fired, deleted = agent.requests
    assert scheduled_messages(fired) == ["[scheduled 00000001] Look at the queue."]
    assert scheduled_messages(deleted) == scheduled_messages(fired)  # one fire, not three
    assert (
        "schedule: 00000001 fires (due 3 times while the model worked: once): Look at the queue."
        in agent.printed()
    )
    assert agent.result("c3").startswith("deleted 00000001")


# --- how the stay ends ---------------------------------------------------------------------------


def test_the_stay_ends_when_its_time_is_up(tmp_path: Path) -> None:
    agent = agent14(
        tmp_path,
        create("c1", "0 12 * * *", "Eat lunch."),
        text_stream("Scheduled for noon."),
        stay_for=1.0,
    )
    answer, took = agent.timed_run(PROMPT)
    assert answer == "Scheduled for noon."
    assert 1.0 <= took < 2.5  # the stay's one second, not a poll or a wait more
    assert len(agent.requests) == 2
    in_order(
        agent.printed(),
        "… staying for scheduled jobs (at most 1s)",
        "schedule: the stay is over (--stay-for 1) with 1 job still scheduled; the run ends",
    )


def test_a_run_with_nothing_scheduled_does_not_stay(tmp_path: Path) -> None:
    agent = agent14(tmp_path, text_stream("Hello."), stay_for=BOUND)
    answer, took = agent.timed_run(PROMPT)
    assert answer == "Hello." and took < BOUND / 2
    printed = agent.printed()
    assert "schedule: no scheduled job is left for this run to fire; the run ends" in printed
    assert "staying for" not in printed


def test_a_run_with_no_request_left_does_not_stay_for_the_next_fire(tmp_path: Path) -> None:
    agent = agent14(
        tmp_path,
        create("c1", "0 10 * * *", "Read the build log.", recurring=False),
        text_stream("Scheduled."),
        stay_for=BOUND,
        max_turns=2,
    )
    answer, took = agent.timed_run(PROMPT)
    assert answer == "Scheduled." and took < 1.5
    assert (
        "schedule: the run has made its 2 requests (--max-turns): it does not stay for the "
        "next fire" in agent.printed()
    )


def test_stay_for_0_fires_nothing_and_cron_create_says_so(tmp_path: Path) -> None:
    jumps = Jumps()
    agent = agent14(
        tmp_path,
        create("c1", "0 10 * * *", "Read the build log.", recurring=False),
        jumping(jumps, 5.0, text_stream("Scheduled.")),  # due when the model answers
        stay_for=0.0,
        jumps=jumps,
    )
    assert agent.run(PROMPT) == "Scheduled."
    assert len(agent.requests) == 2
    assert agent.result("c1").endswith(f"this run only\n{STAY_NOTE}")
    assert "schedule:" not in agent.printed()  # the stay said nothing: it let the stop be


# --- durable jobs a run finds --------------------------------------------------------------------


def durable(tmp_path: Path, cron: str, prompt: str, *, recurring: bool) -> None:
    """A durable job made by an earlier run, at `START`, in tmp_path/ws."""
    earlier = Schedule(Workspace(tmp_path / "ws").root, Clock(START), new_id=lambda: "0000abcd")
    earlier.create(cron, prompt, recurring=recurring, durable=True)
    earlier.close()


def test_a_missed_one_shot_is_said_deleted_and_not_run(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    durable(tmp_path, "0 10 * * *", "Read the build log.", recurring=False)
    later = START + timedelta(minutes=5)  # 10:04:58: the 10:00 slot passed with no run
    agent = agent14(tmp_path, text_stream("Hello."), stay_for=BOUND, start=later)
    assert agent.run(PROMPT) == "Hello."
    assert len(agent.requests) == 1
    in_order(
        agent.printed(),
        "schedule: one-shot 0000abcd (0 10 * * *: Read the build log.) was due at "
        "2026-12-04 10:00:00 while no run stayed: not run, deleted",
        "schedule: no scheduled job is left for this run to fire; the run ends",
    )


def test_a_recurring_job_that_missed_three_runs_fires_once_saying_so(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    durable(tmp_path, "* * * * *", "Look at the queue.", recurring=True)
    later = START + timedelta(minutes=3)  # 10:02:58: 10:00, 10:01 and 10:02 passed, no run
    agent = agent14(
        tmp_path,
        text_stream("Hello."),
        call("c1", "cron_delete", id="0000abcd"),
        text_stream("Looked, and deleted it."),
        stay_for=BOUND,
        start=later,
    )
    assert agent.run(PROMPT) == "Looked, and deleted it."
    fired = agent.requests[1]
    assert scheduled_messages(fired) == ["[scheduled 0000abcd] Look at the queue. (missed 3 runs)"]
    assert (
        "schedule: 0000abcd fires (missed 3 runs before this run: once): Look at the queue."
        in agent.printed()
    )


def test_a_recurring_job_fires_a_last_time_seven_days_on_and_the_model_is_told(
    tmp_path: Path,
) -> None:
    def ms(moment: datetime) -> int:
        return int(moment.astimezone().timestamp() * 1000)

    task = {
        "id": "0000abcd", "cron": "0 10 * * *", "prompt": "Morning report.",
        "createdAt": ms(START - timedelta(days=7)),  # expires at 09:59:58 today
        "lastFiredAt": ms(START.replace(hour=10, minute=0, second=0) - timedelta(days=1)),
        "recurring": True, "permanent": False,
    }  # fmt: skip
    folder = tmp_path / "ws" / ".tutorial"
    folder.mkdir(parents=True)
    (folder / "scheduled_tasks.json").write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    agent = agent14(tmp_path, text_stream("Hello."), text_stream("Reported."), stay_for=BOUND)
    answer, took = agent.timed_run(PROMPT)
    assert answer == "Reported." and took < BOUND
    [fire] = scheduled_messages(agent.requests[1])
    assert fire.startswith("[scheduled 0000abcd] Morning report.\n(This recurring job expired")
    assert (
        "schedule: 0000abcd fires: Morning report. · its last run: it expired 7 days after it "
        "was created, and is deleted" in agent.printed()
    )
    assert json.loads((folder / "scheduled_tasks.json").read_text(encoding="utf-8")) == {
        "tasks": []
    }


def test_a_schedule_file_that_breaks_ends_the_stay_and_keeps_the_answer(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    durable(tmp_path, "0 12 * * *", "Eat lunch.", recurring=True)

    def break_the_file(request: Mapping[str, Any]) -> Reply:
        (tmp_path / "ws" / ".tutorial" / "scheduled_tasks.json").write_text("{", encoding="utf-8")
        return text_stream("Hello.")

    agent = agent14(tmp_path, break_the_file, stay_for=BOUND)
    answer, took = agent.timed_run(PROMPT)
    assert answer == "Hello." and took < BOUND / 2
    assert re.search(
        r"^schedule: \.tutorial/scheduled_tasks\.json cannot be used: it is not JSON .*; the run "
        r"stays no longer$",
        agent.printed(),
        re.M,
    ), agent.printed()


# --- the recipe ----------------------------------------------------------------------------------


@pytest.mark.parametrize("chapter", ready_from(14))
def test_the_main_agent_has_the_cron_tools_and_children_do_not(
    chapter: int, tmp_path: Path
) -> None:
    setup = setup_of(chapter, workspace=Workspace(tmp_path))
    assert set(CRON_TOOLS) <= set(listed_tools(setup).names)
    assert not set(CRON_TOOLS) & set(listed_tools(setup, child=True).names)


@pytest.mark.parametrize("chapter", ready_from(14))
def test_the_stay_comes_before_the_inbox_delivers(chapter: int, tmp_path: Path) -> None:
    staying = Agent14(tmp_path, {}, stay_for=5.0)
    staying.chapter = chapter
    kinds = [type(f) for f in staying.build().features]
    assert kinds.index(FireBetweenTurns) < kinds.index(DeliverEvents)


def test_a_listing_makes_no_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a listing made a Schedule")

    monkeypatch.setattr(Schedule, "__init__", refuse)
    recipe = recipe_of(14)
    assert recipe is not None
    text = listing(recipe)
    for name in CRON_TOOLS:
        assert re.search(rf"^  {name} +schedule \(ch14\)$", text, re.M), name
    children = text.split("\nchildren\n")[1].split("\noptions\n")[0]
    assert "cron_" not in children


# --- the line under the spinner ------------------------------------------------------------------


def test_the_line_says_the_next_fire_and_the_time_left() -> None:
    at = START.astimezone() + timedelta(seconds=2)
    assert stay_line("0000abcd", at, 1.2, 74.5) == (
        "schedule: next 0000abcd at 10:00:00, in 2s · the stay ends in 1m15s"  # rounded up
    )
    assert stay_line("0000abcd", at, -1.0, 5.0) == (
        "schedule: next 0000abcd at 10:00:00, due now · the stay ends in 5s"
    )
    assert stay_line(None, None, 0.0, -3.0) == (
        "schedule: nothing due for this run · the stay ends in 0s"
    )


def test_the_line_shows_only_while_the_run_stays(tmp_path: Path) -> None:
    jumps = Jumps()
    clock = Clock(START, monotonic=jumps)
    schedule = Schedule(tmp_path, clock, new_id=job_ids())
    stay = FireBetweenTurns(schedule, Inbox(), clock, 60.0)
    assert stay_view(stay) is None
    schedule.create("0 10 * * *", "Read the build log.", recurring=False)
    stay.until, stay.staying = clock.now() + timedelta(seconds=60), True
    line = stay_view(stay)
    assert isinstance(line, StayLine)
    assert re.fullmatch(
        r"schedule: next 00000001 at 10:00:00, in [12]s · the stay ends in (59|1m00)s", line.text()
    ), line.text()
    jumps.jump(30.0)  # drawn again at the next refresh: the times count down
    assert re.fullmatch(r".*due now · the stay ends in (29|30)s", line.text()), line.text()

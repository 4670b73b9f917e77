"""The schedule's promises: due slots merge into one fire, a slot fires once and only once
(one owner per folder, taken over when its process is gone), missed runs are said or
dropped, a recurring job dies after a week, and the file keeps Claude Code's shape.

Time never passes by itself: each clock starts at a given instant and its seconds
are moved by the test (`Ticks`). Only the two-process tests use real seconds, a
few, and every wait there has a bound.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chapters.ch14.clock import NOW_VARIABLE, Clock, ClockError, clock_from_env
from chapters.ch14.cron import CronError
from chapters.ch14.schedule import (
    EVENT_SOURCE,
    MAX_JOBS,
    MAX_PROMPT,
    MAX_SLOTS_COUNTED,
    SCHEDULE_FILE,
    Missed,
    Schedule,
    ScheduledJob,
    ScheduleFileError,
    ScheduleFull,
    UnknownScheduledJob,
    job_brief,
    job_line,
    read_durable,
)
from chapters.ch14.tests.support import at  # utc: a fixture
from chapters.ch14.tests.support import utc as utc

pytestmark = pytest.mark.usefixtures("utc")
START = datetime(2026, 12, 4, 9, 59, 58, tzinfo=UTC)  # the demo's instant
BOUND = 20.0  # seconds: the longest a test waits for a child process
REPO = Path(__file__).resolve().parents[3]
EXPIRED = (
    "\n(This recurring job expired 7 days after it was created: this was its last run, "
    "and it is deleted.)"
)


class Ticks:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds

    def advance(self, **delta: float) -> None:
        self.seconds += timedelta(**delta).total_seconds()


def ms(moment: datetime) -> int:
    return int(moment.timestamp()) * 1000 + moment.microsecond // 1000


def run_at(root: Path, start: datetime = START) -> tuple[Schedule, Ticks]:
    """A schedule whose clock reads `start` now and moves with the returned ticks."""
    ticks = Ticks()
    return Schedule(root, Clock(start, monotonic=ticks)), ticks


def file_data(root: Path) -> Any:
    return json.loads((root / SCHEDULE_FILE).read_text(encoding="utf-8"))


def write_file(root: Path, data: Any) -> None:
    (root / SCHEDULE_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / SCHEDULE_FILE).write_text(json.dumps(data, indent=2), encoding="utf-8")


# --- the clock -------------------------------------------------------------------------------


def test_clock_starts_at_the_given_instant_and_runs_at_normal_speed() -> None:
    ticks = Ticks()
    clock = Clock(START, monotonic=ticks)
    assert clock.now() == START
    ticks.advance(seconds=2.5)
    assert clock.now() == START + timedelta(seconds=2.5)
    assert clock.seconds_until(at("2026-12-04T10:00:00")) == -0.5
    assert clock.now().utcoffset() == timedelta(0)  # aware, local (UTC here)


def test_clock_from_env_reads_tutorial_now() -> None:
    assert clock_from_env({NOW_VARIABLE: "2026-12-04T09:59:58Z"}).now() - START < timedelta(
        seconds=1
    )
    assert clock_from_env({NOW_VARIABLE: "2026-12-04T09:59:58"}).now() - START < timedelta(
        seconds=1
    )  # naive: local time, UTC in these tests
    machine = clock_from_env({}).now()
    assert abs(machine - datetime.now(UTC)) < timedelta(seconds=5)


def test_clock_from_env_names_the_variable_and_the_fix_for_a_bad_value() -> None:
    with pytest.raises(ClockError) as caught:
        clock_from_env({NOW_VARIABLE: "tomorrow at nine"})
    message = str(caught.value)
    assert "TUTORIAL_NOW='tomorrow at nine'" in message
    assert "TUTORIAL_NOW=2026-12-04T09:59:58" in message
    assert isinstance(caught.value, ValueError)


# --- jobs and fires --------------------------------------------------------------------------


def test_create_answers_an_id_of_eight_hex_digits_and_a_next_fire(tmp_path: Path) -> None:
    schedule, _ = run_at(tmp_path)
    job = schedule.create("*/5 * * * *", "  check the build  ")
    assert len(job.id) == 8 and int(job.id, 16) >= 0
    assert (job.cron, job.prompt, job.recurring, job.durable) == (
        "*/5 * * * *",
        "check the build",
        True,
        False,
    )
    assert job.created_at == START
    assert schedule.next_fire(job) == at("2026-12-04T10:00:00")
    assert job.expires_at == START + timedelta(days=7)
    assert schedule.jobs() == [job]
    assert not (tmp_path / SCHEDULE_FILE).exists()  # this run only: nothing on disk


def test_due_slots_of_one_job_merge_into_one_fire(tmp_path: Path) -> None:
    schedule, ticks = run_at(tmp_path)
    job = schedule.create("* * * * *", "check the build")
    assert schedule.take_due() == []
    ticks.advance(minutes=2, seconds=30)  # a turn that took minutes: 10:00, 10:01, 10:02 due
    (fire,) = schedule.take_due()
    assert (fire.job.id, fire.slot, fire.merged, fire.missed, fire.last) == (
        job.id,
        at("2026-12-04T10:02:00"),
        3,
        0,
        False,
    )
    event = fire.event()
    assert (event.source, event.key) == (EVENT_SOURCE, f"{job.id}@2026-12-04T10:02")
    assert event.text == f"[scheduled {job.id}] check the build"
    assert schedule.take_due() == []  # the schedule goes on from now
    ticks.advance(minutes=1)
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.merged) == (at("2026-12-04T10:03:00"), 1)


def test_a_one_shot_fires_once_at_its_next_match_and_is_deleted(tmp_path: Path) -> None:
    schedule, ticks = run_at(tmp_path)
    job = schedule.create("* * * * *", "see whether the server came up", recurring=False)
    ticks.advance(seconds=1)
    assert schedule.take_due() == []
    assert schedule.fires_anything()
    ticks.advance(minutes=5)
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.merged, fire.last) == (at("2026-12-04T10:00:00"), 1, False)
    assert fire.job.id == job.id
    assert schedule.jobs() == []
    assert not schedule.fires_anything()
    ticks.advance(minutes=5)
    assert schedule.take_due() == []


def test_the_51st_job_is_refused(tmp_path: Path) -> None:
    other, _ = run_at(tmp_path)
    for _ in range(20):
        other.create("0 9 * * *", "durable", durable=True)
    schedule, _ = run_at(tmp_path)
    for _ in range(MAX_JOBS - 20):
        schedule.create("0 9 * * *", "this run")
    for durable in (False, True):
        with pytest.raises(ScheduleFull) as caught:
            schedule.create("0 9 * * *", "one too many", durable=durable)
        message = str(caught.value)
        assert "at most 50 jobs" in message and "there are 50" in message
        assert "cron_delete" in message
    assert len(file_data(tmp_path)["tasks"]) == 20
    schedule.delete(schedule.jobs()[0].id)
    schedule.create("0 9 * * *", "room again")


def test_a_prompt_must_say_something_and_be_at_most_4000_characters(tmp_path: Path) -> None:
    schedule, _ = run_at(tmp_path)
    for prompt in ("", "   \n "):
        with pytest.raises(ValueError, match="the prompt is empty"):
            schedule.create("0 9 * * *", prompt)
    with pytest.raises(ValueError, match="4,001 characters; at most 4,000"):
        schedule.create("0 9 * * *", "x" * (MAX_PROMPT + 1))
    with pytest.raises(CronError):
        schedule.create("*/0 * * * *", "a step of 0")
    assert schedule.jobs() == []
    schedule.create("0 9 * * *", "x" * MAX_PROMPT)


def test_delete_removes_a_job_and_an_unknown_id_names_the_ids_there_are(tmp_path: Path) -> None:
    schedule, _ = run_at(tmp_path)
    mine = schedule.create("0 9 * * *", "mine")
    kept = schedule.create("0 9 * * *", "kept", durable=True)
    with pytest.raises(UnknownScheduledJob) as caught:
        schedule.delete("0badc0de")
    assert str(caught.value) == f"no scheduled job 0badc0de; there are: {mine.id}, {kept.id}"
    assert schedule.delete(mine.id) == mine
    assert schedule.delete(f" {kept.id.upper()} ") == kept
    assert file_data(tmp_path) == {"tasks": []}
    with pytest.raises(UnknownScheduledJob, match="there are none"):
        schedule.delete(kept.id)


def test_jobs_lists_this_runs_and_the_durable_ones_soonest_first(tmp_path: Path) -> None:
    schedule, _ = run_at(tmp_path)
    late = schedule.create("0 12 * * *", "noon")
    soon = schedule.create("0 10 * * *", "ten", durable=True)
    other, _ = run_at(tmp_path)
    assert [job.id for job in schedule.jobs()] == [soon.id, late.id]
    assert [job.id for job in other.jobs()] == [soon.id]  # another run sees the durable one


# --- the file --------------------------------------------------------------------------------


def test_a_durable_job_is_written_in_claude_codes_shape(tmp_path: Path) -> None:
    schedule, ticks = run_at(tmp_path)
    assert schedule.try_own() == []
    job = schedule.create("*/5 * * * *", "check the build", durable=True)
    text = (tmp_path / SCHEDULE_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert list(data) == ["tasks"]
    (task,) = data["tasks"]
    assert list(task) == ["id", "cron", "prompt", "createdAt", "recurring", "permanent"]
    assert task == {
        "id": job.id,
        "cron": "*/5 * * * *",
        "prompt": "check the build",
        "createdAt": ms(START),
        "recurring": True,
        "permanent": False,
    }
    ticks.advance(seconds=3)
    (fire,) = schedule.take_due()
    (task,) = file_data(tmp_path)["tasks"]
    assert list(task) == [
        "id",
        "cron",
        "prompt",
        "createdAt",
        "lastFiredAt",
        "recurring",
        "permanent",
    ]
    assert task["lastFiredAt"] == ms(at("2026-12-04T10:00:00")) == ms(fire.slot)
    assert read_durable(tmp_path) == ([fire.job], [])


def test_the_file_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schedule, _ = run_at(tmp_path)
    first = schedule.create("0 9 * * *", "first", durable=True)
    before = (tmp_path / SCHEDULE_FILE).read_bytes()

    def power_cut(source: object, target: object) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(ScheduleFileError, match="could not be written"):
        schedule.create("0 9 * * *", "second", durable=True)
    monkeypatch.undo()
    assert (tmp_path / SCHEDULE_FILE).read_bytes() == before
    assert sorted(p.name for p in (tmp_path / SCHEDULE_FILE).parent.iterdir()) == [
        "scheduled_tasks.json",
        "scheduled_tasks.json.lock",
    ]  # no temporary file left behind
    assert [job.id for job in schedule.jobs()] == [first.id]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "it is not JSON"),
        ('{"tasks": {}}', 'it is not an object with a list "tasks"'),
        ("[]", 'it is not an object with a list "tasks"'),
    ],
)
def test_a_file_that_cannot_be_used_stops_with_a_clear_error(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / SCHEDULE_FILE
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScheduleFileError) as caught:
        read_durable(tmp_path)
    message = str(caught.value)
    assert message.startswith(".tutorial/scheduled_tasks.json cannot be used: ")
    assert says in message
    assert "fix it by hand, or delete it to start with no durable jobs" in message
    schedule, _ = run_at(tmp_path)
    with pytest.raises(ScheduleFileError):
        schedule.create("0 9 * * *", "durable", durable=True)
    assert path.read_text(encoding="utf-8") == content  # never overwritten
    schedule.create("0 9 * * *", "this run only")  # needs no file
    assert schedule.fires_anything()


def test_a_malformed_entry_is_skipped_with_a_warning_and_kept(tmp_path: Path) -> None:
    good = {
        "id": "a1b2c3d4",
        "cron": "0 9 * * *",
        "prompt": "check the build",
        "createdAt": ms(START),
        "recurring": True,
        "permanent": False,
        "agentId": "kept as it is",  # a key we do not know stays
    }
    bad = [
        {**good, "id": "b0000002", "cron": "*/0 * * * *"},
        "not an object",
        {key: value for key, value in good.items() if key != "recurring"} | {"id": "b0000004"},
        {**good, "id": "nothex!!"},
        {**good, "id": "b0000006", "createdAt": "yesterday"},
        {**good, "id": "b0000007", "prompt": "x" * (MAX_PROMPT + 1)},
        good,  # the same id twice: the first one counts
    ]
    write_file(tmp_path, {"tasks": [good, *bad]})
    jobs, warnings = read_durable(tmp_path)
    assert [job.id for job in jobs] == ["a1b2c3d4"]
    assert warnings == [
        ".tutorial/scheduled_tasks.json: task 2 skipped: task b0000002: its cron '*/0 * * * *' "
        "is not valid (minute: a step of 0 never advances)",
        ".tutorial/scheduled_tasks.json: task 3 skipped: it is not an object",
        ".tutorial/scheduled_tasks.json: task 4 skipped: task b0000004: recurring is missing",
        ".tutorial/scheduled_tasks.json: task 5 skipped: its id 'nothex!!' is not 8 hex digits",
        ".tutorial/scheduled_tasks.json: task 6 skipped: task b0000006: createdAt is not a "
        "time in milliseconds since 1970",
        ".tutorial/scheduled_tasks.json: task 7 skipped: task b0000007: the prompt is 4,001 "
        "characters; at most 4,000",
        ".tutorial/scheduled_tasks.json: task 8 skipped: its id a1b2c3d4 is used by an earlier "
        "task",
    ]
    schedule, ticks = run_at(tmp_path)
    schedule.try_own()
    new = schedule.create("0 9 * * MON", "new", durable=True)  # December 4 is a Friday
    ticks.advance(days=1)
    (fire,) = schedule.take_due()
    assert fire.job.id == "a1b2c3d4"
    tasks = file_data(tmp_path)["tasks"]
    assert tasks[1:-1] == bad  # every malformed entry as it was
    assert tasks[0] == {**good, "lastFiredAt": ms(at("2026-12-05T09:00:00"))}
    assert tasks[-1]["id"] == new.id


def test_a_tutorial_folder_that_leads_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / ".tutorial").symlink_to(tmp_path / "elsewhere")
    schedule, _ = run_at(tmp_path / "work")
    with pytest.raises(ScheduleFileError, match="leads outside"):
        schedule.create("0 9 * * *", "durable", durable=True)
    with pytest.raises(ScheduleFileError, match="leads outside"):
        schedule.try_own()
    assert list((tmp_path / "elsewhere").iterdir()) == []


# --- owning, missed runs ---------------------------------------------------------------------


def test_only_the_owner_fires_durable_jobs_and_another_takes_over_when_it_closes(
    tmp_path: Path,
) -> None:
    first, first_ticks = run_at(tmp_path)
    second, second_ticks = run_at(tmp_path)
    assert first.try_own() == [] and first.owner()
    assert second.try_own() == [] and not second.owner()
    job = second.create("* * * * *", "check the build", durable=True)
    first_ticks.advance(seconds=3)
    second_ticks.advance(seconds=3)
    assert second.take_due() == []  # due, but not its to fire
    (fire,) = first.take_due()
    assert fire.job.id == job.id
    first.close()
    first.close()  # twice is fine
    assert not first.owner()
    assert second.try_own() == [] and second.owner()
    second_ticks.advance(minutes=1)
    (fire,) = second.take_due()
    assert fire.slot == at("2026-12-04T10:01:00")
    second.close()


def test_missed_recurring_runs_fire_once_then_keep_the_schedule(tmp_path: Path) -> None:
    earlier, _ = run_at(tmp_path)
    job = earlier.create("* * * * *", "check the build", durable=True)
    earlier.close()  # that run ended after its answer: 10:00, 10:01, 10:02 passed unseen
    later, ticks = run_at(tmp_path, at("2026-12-04T10:02:30"))
    assert later.take_due() == []  # not the owner yet
    assert later.try_own() == []  # a recurring job is not dropped
    ticks.advance(seconds=35)  # the first look comes after 10:03, which this run saw come
    (fire,) = later.take_due()
    assert (fire.slot, fire.merged, fire.missed, fire.last) == (
        at("2026-12-04T10:03:00"),
        4,
        3,
        False,
    )
    assert fire.event().text == f"[scheduled {job.id}] check the build (missed 3 runs)"
    assert later.take_due() == []
    ticks.advance(seconds=60)
    (fire,) = later.take_due()
    assert (fire.slot, fire.merged, fire.missed) == (at("2026-12-04T10:04:00"), 1, 0)
    assert fire.event().text == f"[scheduled {job.id}] check the build"
    later.close()


def test_a_missed_one_shot_is_returned_by_try_own_deleted_and_never_fired(
    tmp_path: Path,
) -> None:
    earlier, _ = run_at(tmp_path)
    prompt = "see whether the server came up"
    missed = earlier.create("0 10 * * *", prompt, recurring=False, durable=True)
    coming = earlier.create("10 10 * * *", "later today", recurring=False, durable=True)
    later, ticks = run_at(tmp_path, at("2026-12-04T10:05:00"))
    holder, _ = run_at(tmp_path)
    assert holder.try_own() == []  # while another run owns the folder, nothing is dropped
    assert later.try_own() == []
    assert len(file_data(tmp_path)["tasks"]) == 2
    holder.close()
    assert later.try_own() == [Missed(missed, at("2026-12-04T10:00:00"))]
    assert [task["id"] for task in file_data(tmp_path)["tasks"]] == [coming.id]
    assert later.take_due() == []
    ticks.advance(minutes=6)
    (fire,) = later.take_due()
    assert (fire.job.id, fire.missed) == (coming.id, 0)
    assert file_data(tmp_path) == {"tasks": []}
    later.close()


# --- expiry ----------------------------------------------------------------------------------


@pytest.mark.parametrize("durable", [False, True])
def test_a_recurring_job_fires_a_last_time_seven_days_on_and_is_deleted(
    tmp_path: Path, durable: bool
) -> None:
    schedule, ticks = run_at(tmp_path)
    schedule.try_own()
    job = schedule.create("0 9 * * *", "morning report", durable=durable)
    ticks.advance(days=6, hours=23, seconds=32)  # 2026-12-11 09:00:30, before 09:59:58
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.merged, fire.last) == (at("2026-12-11T09:00:00"), 7, False)
    ticks.advance(days=1)
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.last) == (at("2026-12-12T09:00:00"), True)
    assert fire.event().text == f"[scheduled {job.id}] morning report{EXPIRED}"
    assert schedule.jobs() == []
    assert not schedule.fires_anything()
    if durable:
        assert file_data(tmp_path) == {"tasks": []}
    schedule.close()


def test_a_fire_at_the_very_moment_of_expiry_is_the_last(tmp_path: Path) -> None:
    schedule, ticks = run_at(tmp_path, at("2026-12-04T10:00:00"))
    schedule.create("0 10 * * *", "morning report")
    ticks.advance(days=7, seconds=1)
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.merged, fire.last) == (at("2026-12-11T10:00:00"), 7, True)


def test_permanent_in_the_file_exempts_a_job_from_expiry(tmp_path: Path) -> None:
    task = {
        "id": "a1b2c3d4",
        "cron": "0 9 * * *",
        "prompt": "morning report",
        "createdAt": ms(START),
        "recurring": True,
        "permanent": True,
    }
    write_file(tmp_path, {"tasks": [task]})
    schedule, ticks = run_at(tmp_path)
    schedule.try_own()
    ((job,), _) = read_durable(tmp_path)
    assert job.permanent and job.expires_at is None
    ticks.advance(days=30)
    (fire,) = schedule.take_due()
    assert (fire.merged, fire.last) == (30, False)
    assert file_data(tmp_path)["tasks"][0]["lastFiredAt"] == ms(at("2027-01-03T09:00:00"))
    schedule.close()


def test_more_due_slots_than_are_counted_still_fire_once_at_the_last_one(tmp_path: Path) -> None:
    task = {
        "id": "a1b2c3d4",
        "cron": "* * * * *",
        "prompt": "every minute",
        "createdAt": ms(START),
        "recurring": True,
        "permanent": True,
    }
    write_file(tmp_path, {"tasks": [task]})
    schedule, _ = run_at(tmp_path, at("2026-12-24T10:00:30"))  # 28,801 slots later
    schedule.try_own()
    (fire,) = schedule.take_due()
    assert (fire.slot, fire.merged) == (at("2026-12-24T10:00:00"), MAX_SLOTS_COUNTED)
    assert fire.missed == MAX_SLOTS_COUNTED
    assert schedule.take_due() == []
    schedule.close()


# --- never twice -----------------------------------------------------------------------------


def test_two_schedules_without_the_owner_lock_never_fire_a_slot_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [run_at(tmp_path) for _ in range(2)]
    for schedule, _ in runs:
        monkeypatch.setattr(schedule, "owner", lambda: True)  # both think they fire
    job = runs[0][0].create("* * * * *", "check the build", durable=True)
    for _, ticks in runs:
        ticks.advance(seconds=3)
    assert len(runs[0][0].take_due()) == 1
    assert runs[1][0].take_due() == []  # the file says 10:00 has fired
    for _, ticks in runs:
        ticks.advance(minutes=1)
    fires: list[str] = []
    start = threading.Barrier(2)

    def race(schedule: Schedule) -> None:
        start.wait(timeout=BOUND)
        for _ in range(20):
            fires.extend(fire.event().key for fire in schedule.take_due())

    threads = [threading.Thread(target=race, args=(schedule,)) for schedule, _ in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=BOUND)
    assert fires == [f"{job.id}@2026-12-04T10:01"]


def test_a_job_deleted_by_another_run_is_not_fired(tmp_path: Path) -> None:
    owner, ticks = run_at(tmp_path)
    owner.try_own()
    other, _ = run_at(tmp_path)
    job = other.create("* * * * *", "check the build", durable=True)
    other.delete(job.id)
    ticks.advance(minutes=2)
    assert owner.take_due() == []
    owner.close()


def test_fires_anything_counts_this_runs_jobs_and_the_durable_ones(tmp_path: Path) -> None:
    schedule, _ = run_at(tmp_path)
    assert not schedule.fires_anything()
    job = schedule.create("0 9 * * *", "mine")
    assert schedule.fires_anything()
    schedule.delete(job.id)
    other, _ = run_at(tmp_path)
    other.create("0 9 * * *", "durable", durable=True)
    assert schedule.fires_anything()


# --- how a job is shown ----------------------------------------------------------------------


def test_job_line_shows_a_job_as_cron_list_and_tutorial_cron_do() -> None:
    job = ScheduledJob("a1b2c3d4", "*/5 * * * *", "check the build", START, None, True, True)
    assert job_line(job, at("2026-12-04T10:05:00")) == (
        "a1b2c3d4  */5 * * * *  every fifth minute of every hour · next 2026-12-04 10:05:00 · "
        "recurring · durable\n"
        "    prompt: check the build"
    )
    once = ScheduledJob("0000beef", "0 10 * * *", "one\ntwo", START, None, False, False)
    assert job_line(once, at("2026-12-04T10:00:00")) == (
        "0000beef  0 10 * * *  at 10:00 every day · next 2026-12-04 10:00:00 · one-shot · "
        "this run only\n"
        "    prompt: one\n"
        "            two"
    )
    assert job_brief(once) == "0 10 * * *: one two"


# --- two processes ---------------------------------------------------------------------------

CHILD = """
import os, sys, time
from datetime import datetime, timedelta
from pathlib import Path
from chapters.ch14.clock import Clock
from chapters.ch14.schedule import Schedule

root, virtual, real, quit_file, most, deadline = sys.argv[1:]
# Every process reads the same instant at the same real moment (`real` is `virtual`).
start = datetime.fromisoformat(virtual) + timedelta(seconds=time.time() - float(real))
schedule = Schedule(Path(root), Clock(start))
fired = 0
owner = False
print("started", flush=True)
while True:
    schedule.try_own()
    if schedule.owner() and not owner:
        owner = True
        print("owner", flush=True)
    for fire in schedule.take_due():
        fired += 1
        print("fired", fire.event().key, fire.missed, flush=True)
    if owner and Path(quit_file).exists() or fired >= int(most) or time.time() > float(deadline):
        break
    time.sleep(0.02)  # a bounded poll loop: the run itself waits on its inbox instead
print("exit", flush=True)
os._exit(0)  # no clean-up at all: only the OS releases the owner lock
"""


def child(
    root: Path, virtual: datetime, real: float, *, most: int = 99, seconds: float = BOUND
) -> subprocess.Popen[str]:
    arguments = [str(root), virtual.isoformat(), repr(real), str(root / "quit"), str(most)]
    env = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *arguments, repr(real + seconds)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_until(process: subprocess.Popen[str], word: str) -> list[str]:
    """Lines from the child up to the first that starts with `word` (the child's own deadline
    bounds the wait: at the latest it exits, and the pipe ends)."""
    assert process.stdout is not None
    lines: list[str] = []
    while True:
        line = process.stdout.readline()
        assert line, f"the child ended before {word!r}: {lines} {finish(process)}"
        lines.append(line.strip())
        if line.startswith(word):
            return lines


def finish(process: subprocess.Popen[str]) -> list[str]:
    out, err = process.communicate(timeout=BOUND)
    assert process.returncode == 0, err
    return out.splitlines()


def fired(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines if line.startswith("fired")]


def test_two_processes_started_together_fire_a_durable_slot_once(tmp_path: Path) -> None:
    real = time.time()
    virtual = at("2026-12-04T10:00:58.500")  # 10:01:00 comes 1.5 real seconds from now
    maker, _ = run_at(tmp_path, virtual - timedelta(seconds=1))
    job = maker.create("* * * * *", "check the build", durable=True)
    processes = [child(tmp_path, virtual, real, seconds=2.5) for _ in range(2)]
    outputs = [finish(process) for process in processes]
    # The first to exit may hand the lock to the other just before its own end: fine.
    assert "owner" in outputs[0] + outputs[1]
    assert fired(outputs[0]) + fired(outputs[1]) == [f"{job.id}@2026-12-04T10:01"]


def test_when_the_owner_process_is_gone_the_other_takes_over(tmp_path: Path) -> None:
    real = time.time()
    virtual = at("2026-12-04T10:00:58.500")
    maker, _ = run_at(tmp_path, virtual - timedelta(seconds=1))
    job = maker.create("* * * * *", "check the build", durable=True)
    first = child(tmp_path, virtual, real)
    read_until(first, "owner")
    # A minute ahead, so that its next slot comes without waiting a real minute: for it,
    # 10:01:00 is due at once, and it must leave it to the owner.
    second = child(tmp_path, virtual + timedelta(minutes=1), real, most=1)
    read_until(second, "started")
    first_lines = read_until(first, "fired")
    (tmp_path / "quit").touch()
    first_lines += finish(first)
    second_lines = finish(second)
    assert fired(first_lines) == [f"{job.id}@2026-12-04T10:01"]
    assert "owner" in second_lines
    assert fired(second_lines) == [f"{job.id}@2026-12-04T10:02"]
    assert [line for line in second_lines if line.startswith("fired")] == [
        f"fired {job.id}@2026-12-04T10:02 0"
    ]
    (task,) = file_data(tmp_path)["tasks"]
    assert task["lastFiredAt"] == ms(at("2026-12-04T10:02:00"))

"""Cron expressions: every refusal names its field, and the slots are cron's wall-clock times.

Local time matters here, so each test runs with TZ=UTC (or the zone it names),
set for the test and put back after it.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import pytest

from chapters.ch14.cron import FIELDS, CronError, parse_cron
from chapters.ch14.tests.support import at  # utc: a fixture
from chapters.ch14.tests.support import utc as utc

pytestmark = pytest.mark.usefixtures("utc")


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("*/0 * * * *", "minute", "minute: a step of 0 never advances"),
        ("60 * * * *", "minute", "minute: 60 is out of range (0-59)"),
        ("* 24 * * *", "hour", "hour: 24 is out of range (0-23)"),
        ("0 0 0 * *", "day of month", "day of month: 0 is out of range (1-31)"),
        ("0 0 32 * *", "day of month", "day of month: 32 is out of range (1-31)"),
        ("0 0 * 13 *", "month", "month: 13 is out of range (1-12)"),
        ("0 0 * 0 *", "month", "month: 0 is out of range (1-12)"),
        ("0 0 * * 8", "day of week", "day of week: 8 is out of range (0-7)"),
        ("0 0 L * *", "day of month", "day of month: 'L' is an extension"),
        ("0 0 15W * *", "day of month", "day of month: 'W' is an extension"),
        ("0 0 ? * *", "day of month", "day of month: '?' is an extension"),
        ("0 0 * * 1#2", "day of week", "day of week: '#' is an extension"),
        ("0 0 * * 5L", "day of week", "day of week: 'L' is an extension"),
        ("0 0 31 2 *", "day of month", "never fires"),
        ("0 0 30 2 *", "day of month", "never fires"),
        ("5-3 * * * *", "minute", "minute: the range 5-3 runs backwards"),
        ("x * * * *", "minute", "minute: 'x' is not a number (0-59)"),
        ("0 0 * * FOO", "day of week", "or a name (SUN-SAT)"),
        ("*/a * * * *", "minute", "minute: the step 'a' is not a whole number"),
        ("1,,2 * * * *", "minute", "minute: '1,,2' has an empty item"),
        ("% * * * *", "minute", "minute: '%' is not part of a cron field"),
        (
            "0 9 * * * *",
            None,
            "has 5 fields (minute hour day-of-month month day-of-week); this one has 6",
        ),
        ("* * * *", None, "this one has 4"),
        ("", None, "this one is empty"),
        ("@reboot", None, "'@reboot' is a macro, not five fields; write the fields"),
        ("@daily", None, "(e.g. '0 9 * * *' for @daily)"),
        ("0," * 600 + "0 * * * *", None, "at most 1,000 characters; this one has 1,209"),
    ],
)
def test_invalid_expression_raises_cron_error_naming_the_field(
    text: str, field: str | None, says: str
) -> None:
    with pytest.raises(CronError) as caught:
        parse_cron(text)
    assert caught.value.field == field
    assert says in str(caught.value)
    if field is not None:
        assert str(caught.value).startswith(f"{field}: ")
        assert field in FIELDS


def test_valid_expressions_are_normalised_and_explained() -> None:
    assert parse_cron("  */5   *  * * * ").text == "*/5 * * * *"
    assert parse_cron("*/5 * * * *").words() == "Every fifth minute of every hour"
    assert parse_cron("0 9 * * mon-fri").words() == "At 09:00 on Monday through Friday"
    assert parse_cron("0 0 * JUL,aug *").words() == "At 00:00 every day in July and August"
    assert parse_cron("0 0 29 2 *").text == "0 0 29 2 *"  # a leap day does come
    assert parse_cron("0 0 * * 7").text == "0 0 * * 7"  # 7 is Sunday, as 0 is


def test_next_after_is_strictly_after() -> None:
    cron = parse_cron("*/5 * * * *")
    assert cron.next_after(at("2026-12-04T10:00:00")) == at("2026-12-04T10:05:00")
    assert cron.next_after(at("2026-12-04T09:59:58")) == at("2026-12-04T10:00:00")
    assert cron.next_after(at("2026-12-04T10:04:59.999")) == at("2026-12-04T10:05:00")


def test_next_after_takes_either_day_when_both_days_are_given() -> None:
    cron = parse_cron("0 9 13 * FRI")  # Debian cron: the 13th OR a Friday
    fires = cron.slots(at("2026-12-01T00:00"), at("2026-12-31T23:59"), 10)
    assert [slot.day for slot in fires] == [4, 11, 13, 18, 25]


def test_slots_lie_in_after_until_and_stop_at_the_limit() -> None:
    cron = parse_cron("* * * * *")
    after, until = at("2026-12-04T10:00:00"), at("2026-12-04T10:03:00")
    assert cron.slots(after, until, 10) == [
        at("2026-12-04T10:01:00"),
        at("2026-12-04T10:02:00"),
        at("2026-12-04T10:03:00"),
    ]
    assert cron.slots(after, until, 2) == [at("2026-12-04T10:01:00"), at("2026-12-04T10:02:00")]
    assert cron.slots(after, until, 0) == []
    assert cron.slots(until, after, 10) == []
    assert cron.count(after, at("2026-12-11T10:00:00"), 20_000) == 7 * 24 * 60
    assert cron.count(after, at("2026-12-31T10:00:00"), 20_000) == 20_000


def test_slots_are_aware_local_times() -> None:
    slot = parse_cron("0 9 * * *").next_after(at("2026-12-04T10:00:00"))
    assert slot.tzinfo is not None
    assert slot.utcoffset() == timedelta(0)


def test_last_until_finds_the_last_slot_at_or_before_a_moment() -> None:
    cron = parse_cron("*/5 * * * *")
    assert cron.last_until(at("2026-12-04T10:07:30")) == at("2026-12-04T10:05:00")
    assert cron.last_until(at("2026-12-04T10:05:00")) == at("2026-12-04T10:05:00")


def test_slots_follow_the_wall_clock_across_a_change_of_offset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    nine = parse_cron("0 9 * * *")
    start = datetime(2026, 3, 28, 10, 0).astimezone()
    slots = nine.slots(start, start + timedelta(days=2), 5)
    assert [(s.hour, s.utcoffset()) for s in slots] == [
        (9, timedelta(hours=2)),
        (9, timedelta(hours=2)),
    ]
    # In the hour the clock skips, 02:30 comes at 03:30; the next day is 02:30 again.
    half_past_two = parse_cron("30 2 * * *")
    start = datetime(2026, 3, 28, 12, 0).astimezone()
    slots = half_past_two.slots(start, start + timedelta(days=2), 5)
    assert [s.strftime("%d %H:%M") for s in slots] == ["29 03:30", "30 02:30"]
    # Either way, the slots never repeat nor go backwards (02:00 skipped is 03:00, once).
    every_20 = parse_cron("*/20 * * * *")
    for day, month in ((29, 3), (25, 10)):
        start = datetime(2026, month, day, 1, 30).astimezone()
        slots = every_20.slots(start, start + timedelta(hours=3), 20)
        assert slots == sorted(set(slots))
        assert slots[0] == start + timedelta(minutes=10)

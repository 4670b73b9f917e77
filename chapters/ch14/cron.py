"""Cron expressions: five fields, checked with a message that names the field, computed by cronsim.

    ┌──────── minute        0-59
    │ ┌────── hour          0-23
    │ │ ┌──── day of month  1-31
    │ │ │ ┌── month         1-12 or JAN-DEC
    │ │ │ │ ┌ day of week   0-7 or SUN-SAT (0 and 7 are Sunday)
    */5 9-17 * * MON-FRI    each field: *, a number or a name, a-b, lists a,b and steps /n

The arithmetic is not ours: `cronsim` (one small, typed module with no
dependencies, written for the cron checks of healthchecks.io) knows
the calendar, the Debian rule that a job with both a day of month and a day
of week runs when either matches (unless one of them starts with `*`), and
the names. What we add is a check before it, for two reasons: cronsim accepts
more than the standard five fields (a sixth field of seconds, and Quartz's
`L`, `LW` and `#`), which another cron would read differently or refuse; and
its messages ("Bad minute", "Bad day-of-month" for a `W` or a `?`) do not say
what is wrong. A model that wrote
`*/0 * * * *` learns from "minute: a step of 0 never advances".

Cron is wall-clock time: "0 9 * * *" is nine o'clock on the clock on the
wall, whatever the offset from UTC that day. So the arithmetic runs on naive
local times and each result becomes an aware one with `.astimezone()`. In
the hour a clock goes back, the repeated times match once; in the hour it
skips, a slot at a time that does not exist comes an hour later by the clock
(02:30 becomes 03:30), so no day loses its run, and slots never go backwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from cronsim import CronSim, CronSimError

FIELDS = ("minute", "hour", "day of month", "month", "day of week")
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
_DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
_NAMES = {3: _MONTHS, 4: _DAYS}  # field index: the names it takes, in value order
_CRONSIM_FIELDS = {  # cronsim's "Bad <name>" to ours
    "minute": "minute",
    "hour": "hour",
    "day-of-month": "day of month",
    "month": "month",
    "day-of-week": "day of week",
}
_SYNTAX = "use numbers, names, *, a-b, a,b and /n"
_LAYOUT = "minute hour day-of-month month day-of-week"
# Quartz's and others' additions, which cronsim takes in part: 5L, L, 15W, LW, 1#2, ?
_EXTENSION = re.compile(r"[0-9]*(LW|L|W)[0-9]*|[A-Z0-9]*[#?][A-Z0-9#?]*", re.IGNORECASE)
_ALLOWED = re.compile(r"[0-9A-Za-z*]+")  # what a value may hold; , - / are split off before
MAX_TEXT = 1_000  # characters; every value of every field, listed one by one, is under 400


class CronError(ValueError):
    """An expression that is not five standard cron fields. `field` names the one at fault
    (one of `FIELDS`), or is None when the expression as a whole is wrong (the field count,
    an `@` macro). The message starts with the field's name and says what to write."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Cron:
    """A checked expression. `text` is normalised: the five fields, single spaces."""

    text: str

    def next_after(self, moment: datetime) -> datetime:
        """The first slot strictly after `moment`, aware, in local time."""
        return next(self._walk(moment))

    def slots(self, after: datetime, until: datetime, limit: int) -> list[datetime]:
        """The slots in (after, until], oldest first, at most `limit` of them."""
        found: list[datetime] = []
        if limit <= 0:
            return found
        for slot in self._walk(after):
            if slot > until:
                break
            found.append(slot)
            if len(found) >= limit:
                break
        return found

    def count(self, after: datetime, until: datetime, limit: int) -> int:
        """How many slots are in (after, until], counting at most `limit`."""
        return len(self.slots(after, until, limit))

    def last_until(self, moment: datetime) -> datetime | None:
        """The last slot at or before `moment` (within 50 years), without walking forward to it:
        for a job whose due slots were too many to count."""
        wall = moment.astimezone().replace(tzinfo=None, microsecond=0) + timedelta(seconds=1)
        for naive in CronSim(self.text, wall, reverse=True):
            slot = naive.astimezone()
            if slot <= moment:
                return slot
        return None

    def words(self) -> str:
        """What it means, in English: "At 09:00 on Monday through Friday"."""
        return CronSim(self.text, datetime(2000, 1, 1)).explain()

    def _walk(self, after: datetime) -> Iterator[datetime]:
        """Slots after `after`, each later than the one before (see the clock changes above)."""
        wall = after.astimezone().replace(tzinfo=None)  # local wall-clock time, naive
        previous = after
        for naive in CronSim(self.text, wall):
            slot = naive.astimezone()
            if slot.replace(tzinfo=None) != naive:  # in the hour the clock skips
                slot = naive.replace(fold=1).astimezone()
            if slot > previous:  # the repeated hour, and slots the skip moved past
                previous = slot
                yield slot


def parse_cron(text: str) -> Cron:
    """`text` checked field by field; a `CronError` naming the field if it is not standard."""
    return _parse(" ".join(text.split()))


@lru_cache(maxsize=256)
def _parse(text: str) -> Cron:
    if len(text) > MAX_TEXT:
        raise CronError(
            f"a cron expression is at most {MAX_TEXT:,} characters; this one has {len(text):,}"
        )
    if text.startswith("@"):
        macro = text.split()[0]
        raise CronError(
            f"{macro!r} is a macro, not five fields; write the fields (e.g. '0 9 * * *' for @daily)"
        )
    fields = text.split()
    if len(fields) != len(FIELDS):
        found = f"this one has {len(fields)}" if fields else "this one is empty"
        extra = " (a field of seconds or of years is not standard)" if len(fields) > 5 else ""
        raise CronError(f"a cron expression has 5 fields ({_LAYOUT}); {found}{extra}")
    for index, field in enumerate(fields):
        _check_field(index, field)
    try:
        cron = CronSim(text, datetime(2000, 1, 1))
        next(cron)
    except CronSimError as error:
        name = _CRONSIM_FIELDS.get(str(error).removeprefix("Bad "))
        if name == "day of month":
            raise CronError(
                f"day of month: {fields[2]!r} never comes in month {fields[3]!r}, so this "
                "schedule never fires",
                name,
            ) from None
        raise CronError(f"{name or 'expression'}: {error}", name) from None
    except StopIteration:
        raise CronError(
            "day of month: no date matches these fields in 50 years; this schedule never fires",
            "day of month",
        ) from None
    return Cron(text)


def _check_field(index: int, field: str) -> None:
    """What cronsim would accept but another cron reads differently, or what it cannot explain."""
    for item in field.split(","):
        _check_item(index, item, field)


def _check_item(index: int, item: str, field: str) -> None:
    name = FIELDS[index]
    if not item:
        raise CronError(f"{name}: {field!r} has an empty item in its list", name)
    base, slash, step = item.partition("/")
    if slash:
        if not step.isdigit():
            raise CronError(f"{name}: the step {step!r} is not a whole number", name)
        if int(step) == 0:
            raise CronError(f"{name}: a step of 0 never advances", name)
    if base == "*":
        return
    start, dash, end = base.partition("-")
    low = _value(index, start)
    if dash:
        high = _value(index, end)
        if high < low:
            raise CronError(
                f"{name}: the range {base} runs backwards; write the smaller value first", name
            )


def _value(index: int, text: str) -> int:
    name = FIELDS[index]
    low, high = _RANGES[index]
    if text.isdigit():
        value = int(text)
        if not low <= value <= high:
            raise CronError(f"{name}: {value} is out of range ({low}-{high})", name)
        return value
    if _is_name(index, text):
        return _NAMES[index].index(text.upper()) + (1 if index == 3 else 0)
    if not text:
        raise CronError(f"{name}: a value is missing (a range needs a start and an end)", name)
    if _EXTENSION.fullmatch(text):
        character = next(c for c in text.upper() if c in "LW#?")
        raise CronError(f"{name}: {character!r} is an extension; {_SYNTAX}", name)
    if not _ALLOWED.fullmatch(text):
        bad = next(c for c in text if not _ALLOWED.fullmatch(c))
        raise CronError(f"{name}: {bad!r} is not part of a cron field; {_SYNTAX}", name)
    names = f" or a name ({_NAMES[index][0]}-{_NAMES[index][-1]})" if index in _NAMES else ""
    raise CronError(f"{name}: {text!r} is not a number ({low}-{high}){names}", name)


def _is_name(index: int, text: str) -> bool:
    return index in _NAMES and text.upper() in _NAMES[index]

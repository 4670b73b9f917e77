"""The schedule: who fires which job when, so that every slot fires once and only once.

Two kinds of job, one rule for when they are due:

    this run only   kept in this object's memory; gone when the process ends
    durable         kept in `.tutorial/scheduled_tasks.json`, Claude Code's shape, and
                    seen by every run in the folder:
                        {"tasks": [{"id": "a1b2c3d4", "cron": "*/5 * * * *",
                                    "prompt": "check the build", "createdAt": 1796378398000,
                                    "lastFiredAt": 1796378700000, "recurring": true,
                                    "permanent": false}]}
                    (times in milliseconds since 1970; lastFiredAt absent until it fires)

A job is due when a slot of its cron expression lies in (anchor, now], where
the anchor is its last fire, or its creation. All the due slots of one job go
as ONE `Fire` (a turn that took three minutes over an every-minute job fires it
once, not three times), and the job's anchor moves to the last of them: the
next fire keeps the schedule from now. A one-shot fires at its first slot and
is deleted.

One owner per folder. Several runs may share a folder; only the run holding
`OWNER_LOCK` fires durable jobs. It is an OS file lock (`filelock`: fcntl, or
LockFileEx on Windows) taken without waiting and held for the run's life; the
OS drops it when the process is gone, however it ended, so a waiting run's
next `try_own` takes over a stale owner with no timeout to guess.

A slot is never fired twice. Every change to the file happens under
`WRITE_LOCK` (held for one change, at most `LOCK_TIMEOUT` seconds of waiting):
read the file, check, write it whole with chapter 2's `atomic_write`. A fire
of a durable job is such a change, and the file is written BEFORE the fire is
returned: a job gone from the file, or whose lastFiredAt already covers the
slot, is not fired, even by two runs that both think they own it. (Written
first, a crash right after loses a fire; fired first, it could repeat one. A
prompt that comes back twice does harm; one that is late by a slot does not.)

Missed runs: a slot at or before this run started, of a durable job never
fired for it, was missed while no run stayed. A recurring job fires once for
all of them, its text saying `(missed N runs)`; a missed one-shot is not run
(its moment has passed: "in ten minutes, see whether the server came up" is
meaningless a day later): `try_own` deletes it and returns it as `Missed`, for
a notice.

Expiry: a recurring job dies `EXPIRY` after it was created. Its first fire at
or after that moment is its last; the model is told so in the fire's text, and
the job is deleted. A forgotten "* * * * *" would otherwise prompt the model
every minute forever. `"permanent": true`, set by hand in the file, exempts a job.

A malformed entry of the file (a bad cron, a missing key) is skipped with a
warning and kept as it is when the file is written again; a file that is not
JSON at all stops with `ScheduleFileError`, which says where it is and what to
do, and is never overwritten.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chapters.ch02.text_files import READ_FLAGS, atomic_write, read_open_file
from chapters.ch03.harness_files import harness_folder, open_harness_file
from chapters.ch13.inbox import Event
from chapters.ch14.clock import Clock
from chapters.ch14.cron import CronError, parse_cron
from shared.errors import EXIT_USAGE, TutorialError

if TYPE_CHECKING:
    from filelock import BaseFileLock

SCHEDULE_FILE = Path(".tutorial") / "scheduled_tasks.json"  # below the workspace
WRITE_LOCK = Path(".tutorial") / "scheduled_tasks.json.lock"  # held for one change
OWNER_LOCK = Path(".tutorial") / "scheduled_tasks.owner.lock"  # held by the firing run
LOCK_TIMEOUT = 10.0  # seconds a change waits for another run's change to end
MAX_JOBS = 50  # this run's jobs plus the folder's durable ones
MAX_PROMPT = 4_000  # characters of a prompt
EXPIRY = timedelta(days=7)  # a recurring job's life, from its creation
# Slots counted when merging or counting missed runs: a week of minutes is 10,080.
MAX_SLOTS_COUNTED = 20_000
# Of the file: 50 jobs whose prompts are 4,000 six-byte escapes are about 1.2 MB.
MAX_FILE_BYTES = 2 * 1024 * 1024
EVENT_SOURCE = "schedule"  # the inbox source every fire posts as
_ID = re.compile(r"[0-9a-f]{8}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SHOWN = SCHEDULE_FILE.as_posix()
_EXPIRED_NOTE = (
    "(This recurring job expired 7 days after it was created: this was its last run, "
    "and it is deleted.)"
)


class ScheduleError(TutorialError):
    """Something the schedule refused, or could not do; the message says what to do."""


class ScheduleFileError(ScheduleError):
    """The schedule's file cannot be used as a whole (not JSON, not the shape, unreadable)."""

    exit_code = EXIT_USAGE

    def cli_line(self) -> str:
        return str(self)


class ScheduleFull(ScheduleError):
    """`MAX_JOBS` jobs are scheduled already."""


class UnknownScheduledJob(ScheduleError):
    """No job has that id, in this run or in the file."""


class ScheduleBusy(ScheduleError):
    """Another run held the write lock for `LOCK_TIMEOUT` seconds."""


@dataclass(frozen=True)
class ScheduledJob:
    """One job. `id`: 8 hex digits; `cron`: normalised; times aware, local."""

    id: str
    cron: str
    prompt: str
    created_at: datetime
    last_fired_at: datetime | None
    recurring: bool
    durable: bool
    permanent: bool = False  # exempt from expiry: set only by editing the file by hand

    @property
    def expires_at(self) -> datetime | None:
        """When a recurring job dies; None for one-shots and permanent jobs."""
        if not self.recurring or self.permanent:
            return None
        return self.created_at + EXPIRY

    @property
    def anchor(self) -> datetime:
        """Slots after this are due: the last fire, or the creation."""
        return self.last_fired_at or self.created_at


@dataclass(frozen=True)
class Fire:
    """One job's due slots, fired as one turn.

    `slot`: the last due slot it covers; `merged`: how many slots it covers (at least 1,
    at most `MAX_SLOTS_COUNTED`); `missed`: how many of those came at or before this run
    started (durable jobs only); `last`: the job expired with this fire and is deleted.
    """

    job: ScheduledJob
    slot: datetime
    merged: int
    missed: int
    last: bool

    def event(self) -> Event:
        """What the model reads, through chapter 13's inbox: `[scheduled <id>] <prompt>`."""
        text = f"[scheduled {self.job.id}] {self.job.prompt}"
        if self.missed:
            text += f" (missed {self.missed} runs)"
        if self.last:
            text += f"\n{_EXPIRED_NOTE}"
        # The slot in local wall-clock time, to the minute (a cron slot has no seconds): the
        # same key on every machine for the same schedule, so the console line says the same.
        return Event(EVENT_SOURCE, f"{self.job.id}@{self.slot:%Y-%m-%dT%H:%M}", text)


@dataclass(frozen=True)
class Missed:
    """A durable one-shot whose moment passed while no run stayed: not run, deleted."""

    job: ScheduledJob
    slot: datetime


@dataclass
class _Book:
    """The file as read: its top-level object, its entries as they are, and the jobs read
    from them (entry index -> job). Malformed entries stay in `entries`, untouched."""

    top: dict[str, Any] = field(default_factory=dict)
    entries: list[Any] = field(default_factory=list)
    jobs: dict[int, ScheduledJob] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    changed: bool = False

    def find(self, job_id: str) -> int | None:
        return next((i for i, job in self.jobs.items() if job.id == job_id), None)

    def remove(self, index: int) -> None:
        self.entries[index] = None  # dropped when written; indexes stay valid meanwhile
        del self.jobs[index]
        self.changed = True

    def fired(self, index: int, slot: datetime) -> None:
        entry = {key: value for key, value in self.entries[index].items() if key != "lastFiredAt"}
        at = list(entry).index("createdAt") + 1  # Claude Code's order: after createdAt
        items = list(entry.items())
        self.entries[index] = dict([*items[:at], ("lastFiredAt", _to_ms(slot)), *items[at:]])
        self.jobs[index] = replace(self.jobs[index], last_fired_at=_from_ms(_to_ms(slot)))
        self.changed = True

    def file_bytes(self) -> bytes:
        top = dict(self.top)
        top["tasks"] = [entry for entry in self.entries if entry is not None]
        return (json.dumps(top, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class Schedule:
    """One run's view of the schedule: its own jobs in memory, the folder's durable ones on
    disk (read fresh by every call, so runs sharing a folder always agree).

    `started_at` is the clock when the schedule was made: durable slots at or before it that
    never fired were missed. Every method may be called from any thread.
    """

    def __init__(
        self, root: Path, clock: Clock, *, new_id: Callable[[], str] = lambda: secrets.token_hex(4)
    ) -> None:
        self.root = root
        self.clock = clock
        self.new_id = new_id
        self.started_at = clock.now()
        self._own: dict[str, ScheduledJob] = {}  # this run's jobs, by id
        self._owner_lock: BaseFileLock | None = None  # held while this run owns the folder
        self._guard = threading.RLock()

    # --- changing -------------------------------------------------------------------------

    def create(
        self, cron: str, prompt: str, *, recurring: bool = True, durable: bool = False
    ) -> ScheduledJob:
        """A new job; `CronError`, `ScheduleFull`, or ValueError for an empty or long prompt."""
        checked = parse_cron(cron)
        prompt = _checked_prompt(prompt)
        with self._guard:
            if not durable:
                book = self._read_or_empty()
                self._check_room(book)
                job = self._new_job(checked.text, prompt, recurring, False, book)
                self._own[job.id] = job
                return job
            with self._write_lock():
                book = self._read()
                self._check_room(book)
                job = self._new_job(checked.text, prompt, recurring, True, book)
                book.entries.append(_entry(job))
                book.changed = True
                self._write(book)
                return job

    def delete(self, job_id: str) -> ScheduledJob:
        """Remove a job of this run or of the file; `UnknownScheduledJob` lists the ids."""
        job_id = job_id.strip().lower()
        with self._guard:
            own = self._own.pop(job_id, None)
            if own is not None:
                return own
            if not self._read().jobs:  # nothing durable: no lock taken, no folder made
                raise _unknown(job_id, list(self._own))
            with self._write_lock():
                book = self._read()
                index = book.find(job_id)
                if index is None:
                    raise _unknown(job_id, [*self._own, *(job.id for job in book.jobs.values())])
                job = book.jobs[index]
                book.remove(index)
                self._write(book)
                return job

    # --- reading --------------------------------------------------------------------------

    def jobs(self) -> list[ScheduledJob]:
        """This run's jobs and the folder's durable ones, soonest fire first."""
        with self._guard:
            own = list(self._own.values())
        every = own + list(self._read().jobs.values())
        return sorted(every, key=lambda job: (self.next_fire(job), job.id))

    def next_fire(self, job: ScheduledJob) -> datetime:
        """The job's first slot after its anchor (in the past if it is due, or was missed)."""
        return parse_cron(job.cron).next_after(job.anchor)

    def fires_anything(self) -> bool:
        """Whether a job remains that this run could still fire: its own, or a durable one
        (which it fires once it owns the folder). A file that cannot be read counts as none."""
        with self._guard:
            if self._own:
                return True
        return bool(self._read_or_empty().jobs)

    # --- owning and firing ----------------------------------------------------------------

    def owner(self) -> bool:
        """Whether this run holds `OWNER_LOCK`: it fires the folder's durable jobs."""
        return self._owner_lock is not None

    def try_own(self) -> list[Missed]:
        """Take `OWNER_LOCK` if nobody holds it (never waits). On becoming the owner: delete
        the durable one-shots missed before this run started and return them. Already the
        owner, or the lock is held by another run: [] (cheap: call it on every poll)."""
        with self._guard:
            if self.owner():
                return []
            from filelock import FileLock, Timeout  # only a run that fires needs it

            folder = self._folder()
            lock = FileLock(folder / OWNER_LOCK.name, thread_local=False, fallback_to_soft=False)
            try:
                lock.acquire(blocking=False)
            except Timeout:
                return []
            except OSError as error:
                raise ScheduleFileError(
                    f"{OWNER_LOCK.as_posix()} cannot be taken ({error})"
                ) from None
            self._owner_lock = lock
            return self._drop_missed_one_shots()

    def take_due(self) -> list[Fire]:
        """One `Fire` per job this run fires that has a due slot: its own jobs, and the
        durable ones while it is the owner (each recorded in the file before it is returned)."""
        with self._guard:
            now = self.clock.now()
            fires = []
            for job in list(self._own.values()):
                fire = self._due(job, now)
                if fire is None:
                    continue
                fires.append(fire)
                if fire.job.recurring and not fire.last:
                    self._own[job.id] = fire.job
                else:
                    del self._own[job.id]
            if self.owner():
                fires += self._take_durable(now)
            return fires

    def close(self) -> None:
        """Give up `OWNER_LOCK` (another run may take over). Safe to call twice."""
        with self._guard:
            lock, self._owner_lock = self._owner_lock, None
            if lock is not None:
                lock.release(force=True)

    # --- inside ---------------------------------------------------------------------------

    def _due(self, job: ScheduledJob, now: datetime) -> Fire | None:
        """The fire `job` has at `now`, with `job` moved to its last due slot; None if none."""
        cron = parse_cron(job.cron)
        limit = MAX_SLOTS_COUNTED if job.recurring else 1
        slots = cron.slots(job.anchor, now, limit)
        if not slots:
            return None
        slot = slots[-1]
        if len(slots) == limit and job.recurring:  # counted no further: find the last one
            slot = cron.last_until(now) or slot
        missed = sum(s <= self.started_at for s in slots) if job.durable else 0
        expires = job.expires_at
        last = expires is not None and slot >= expires
        fired = replace(job, last_fired_at=_from_ms(_to_ms(slot)))
        return Fire(fired, slot, len(slots), missed, last)

    def _take_durable(self, now: datetime) -> list[Fire]:
        with self._write_lock():
            book = self._read()
            fires = []
            for index, job in list(book.jobs.items()):
                fire = self._due(job, now)
                if fire is None:
                    continue
                fires.append(fire)
                if job.recurring and not fire.last:
                    book.fired(index, fire.slot)
                else:
                    book.remove(index)
            self._write(book)  # before the fires leave: a slot recorded is never fired again
            return fires

    def _drop_missed_one_shots(self) -> list[Missed]:
        with self._write_lock():
            book = self._read()
            missed = []
            for index, job in list(book.jobs.items()):
                if job.recurring or job.last_fired_at is not None:
                    continue
                slot = parse_cron(job.cron).next_after(job.created_at)
                if slot <= self.started_at:
                    missed.append(Missed(job, slot))
                    book.remove(index)
            self._write(book)
            return missed

    def _check_room(self, book: _Book) -> None:
        count = len(self._own) + len(book.jobs)
        if count >= MAX_JOBS:
            raise ScheduleFull(
                f"at most {MAX_JOBS} jobs may be scheduled (this run's and the folder's durable "
                f"ones), and there are {count}; delete one with cron_delete first"
            )

    def _new_job(
        self, cron: str, prompt: str, recurring: bool, durable: bool, book: _Book
    ) -> ScheduledJob:
        taken = {*self._own, *(job.id for job in book.jobs.values())}
        for _ in range(100):
            job_id = self.new_id()
            if _ID.fullmatch(job_id) and job_id not in taken:
                break
        else:
            raise RuntimeError("new_id gave no unused id of 8 hex digits in 100 tries")
        created = _from_ms(_to_ms(self.clock.now()))  # as the file will hold it
        return ScheduledJob(job_id, cron, prompt, created, None, recurring, durable)

    def _read(self) -> _Book:
        return _read_book(self.root)

    def _read_or_empty(self) -> _Book:
        """The file, or nothing if it cannot be used: a job of this run does not need it."""
        try:
            return _read_book(self.root)
        except ScheduleFileError:
            return _Book()

    def _write(self, book: _Book) -> None:
        if not book.changed:
            return
        folder = self._folder()
        try:
            atomic_write(folder / SCHEDULE_FILE.name, book.file_bytes())
        except OSError as error:
            raise ScheduleFileError(f"{_SHOWN} could not be written ({error})") from None
        book.changed = False

    def _folder(self) -> Path:
        """`.tutorial/`, made if missing, checked to stay inside the workspace (a link that
        leads out is refused: chapters/ch03/harness_files.py)."""
        try:
            return harness_folder(self.root, SCHEDULE_FILE.parent, create=True)
        except OSError as error:
            raise ScheduleFileError(
                f"{SCHEDULE_FILE.parent.as_posix()}/ cannot be used ({error})"
            ) from None

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        from filelock import FileLock, Timeout

        folder = self._folder()
        lock = FileLock(folder / WRITE_LOCK.name, timeout=LOCK_TIMEOUT, fallback_to_soft=False)
        try:
            lock.acquire()
        except Timeout:
            raise ScheduleBusy(
                f"the schedule {_SHOWN} is locked by another run (waited {LOCK_TIMEOUT:g} s); "
                "try again"
            ) from None
        except OSError as error:
            raise ScheduleFileError(f"{WRITE_LOCK.as_posix()} cannot be taken ({error})") from None
        try:
            yield
        finally:
            lock.release()


def read_durable(root: Path) -> tuple[list[ScheduledJob], list[str]]:
    """The folder's durable jobs, in file order, and one warning per entry skipped.

    Takes no lock: the file is replaced whole, so a reader sees it before or after a change.
    `ScheduleFileError` if the file as a whole cannot be used.
    """
    book = _read_book(root)
    return list(book.jobs.values()), book.warnings


def job_line(job: ScheduledJob, next_fire: datetime) -> str:
    """How cron_list and `tutorial cron` show a job, two lines (the first one is long):

    a1b2c3d4  */5 * * * *  every fifth minute of every hour · next 2026-12-04 10:05:00 ·
    recurring · durable
        prompt: check the build
    """
    words = parse_cron(job.cron).words()
    words = words[:1].lower() + words[1:]
    kind = "recurring" if job.recurring else "one-shot"
    if job.permanent:
        kind += " (permanent)"
    where = "durable" if job.durable else "this run only"
    head = f"{job.id}  {job.cron}  {words} · next {local_time(next_fire)} · {kind} · {where}"
    prompt = job.prompt.replace("\n", "\n" + " " * 12)
    return f"{head}\n    prompt: {prompt}"


def job_brief(job: ScheduledJob) -> str:
    """A job in a few words, for a notice: `*/5 * * * *: check the build`."""
    prompt = " ".join(job.prompt.split())
    if len(prompt) > 60:
        prompt = prompt[:59] + "…"
    return f"{job.cron}: {prompt}"


def local_time(moment: datetime) -> str:
    """A moment as people read it here: local time, to the second, no offset."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


# --- the file ---------------------------------------------------------------------------


def _read_book(root: Path) -> _Book:
    try:
        descriptor = open_harness_file(root, SCHEDULE_FILE, READ_FLAGS)
        data = read_open_file(descriptor, MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return _Book()
    except (OSError, ValueError) as error:
        raise ScheduleFileError(f"{_SHOWN} cannot be read ({error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise _unusable(f"it is more than {MAX_FILE_BYTES:,} bytes")
    try:
        top = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _unusable(f"it is not JSON ({error})") from None
    if not isinstance(top, dict) or not isinstance(top.get("tasks"), list):
        raise _unusable('it is not an object with a list "tasks"')
    book = _Book(top=top, entries=list(top["tasks"]))
    seen: set[str] = set()
    for index, entry in enumerate(book.entries):
        job = _job_from(entry)
        if isinstance(job, ScheduledJob) and job.id in seen:
            job = f"its id {job.id} is used by an earlier task"
        if isinstance(job, str):
            book.warnings.append(f"{_SHOWN}: task {index + 1} skipped: {job}")
            continue
        seen.add(job.id)
        book.jobs[index] = job
    return book


def _unknown(job_id: str, ids: list[str]) -> UnknownScheduledJob:
    there = f"there are: {', '.join(ids)}" if ids else "there are none"
    return UnknownScheduledJob(f"no scheduled job {job_id}; {there}")


def _unusable(why: str) -> ScheduleFileError:
    return ScheduleFileError(
        f"{_SHOWN} cannot be used: {why}. It holds this folder's durable scheduled jobs, as "
        '{"tasks": [{"id", "cron", "prompt", "createdAt", "recurring", ...}]}: fix it by '
        "hand, or delete it to start with no durable jobs"
    )


def _job_from(entry: Any) -> ScheduledJob | str:
    """The job an entry holds, or why it holds none."""
    if not isinstance(entry, dict):
        return "it is not an object"
    job_id = entry.get("id")
    if not isinstance(job_id, str) or not _ID.fullmatch(job_id):
        return f"its id {job_id!r} is not 8 hex digits"
    where = f"task {job_id}"
    cron = entry.get("cron")
    if not isinstance(cron, str):
        return f"{where}: its cron is not text"
    try:
        cron = parse_cron(cron).text
    except CronError as error:
        return f"{where}: its cron {cron!r} is not valid ({error})"
    prompt = entry.get("prompt")
    if not isinstance(prompt, str):
        return f"{where}: its prompt is not text"
    try:
        prompt = _checked_prompt(prompt)
    except ValueError as error:
        return f"{where}: {error}"
    for key in ("recurring", "permanent"):
        if key in entry and not isinstance(entry[key], bool):
            return f"{where}: {key} is not true or false"
    if "recurring" not in entry:
        return f"{where}: recurring is missing"
    created = _time_of(entry.get("createdAt"))
    if created is None:
        return f"{where}: createdAt is not a time in milliseconds since 1970"
    fired = None
    if entry.get("lastFiredAt") is not None:
        fired = _time_of(entry["lastFiredAt"])
        if fired is None:
            return f"{where}: lastFiredAt is not a time in milliseconds since 1970"
    permanent = bool(entry.get("permanent", False))
    return ScheduledJob(job_id, cron, prompt, created, fired, entry["recurring"], True, permanent)


def _entry(job: ScheduledJob) -> dict[str, Any]:
    """A job as the file holds it, in Claude Code's keys and order."""
    entry: dict[str, Any] = {
        "id": job.id,
        "cron": job.cron,
        "prompt": job.prompt,
        "createdAt": _to_ms(job.created_at),
    }
    if job.last_fired_at is not None:
        entry["lastFiredAt"] = _to_ms(job.last_fired_at)
    entry["recurring"] = job.recurring
    entry["permanent"] = job.permanent
    return entry


def _checked_prompt(prompt: str) -> str:
    prompt = prompt.strip()
    if not prompt:
        raise ValueError("the prompt is empty; say what to do when the job fires")
    if len(prompt) > MAX_PROMPT:
        raise ValueError(f"the prompt is {len(prompt):,} characters; at most {MAX_PROMPT:,}")
    return prompt


def _time_of(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    try:
        return _from_ms(value)
    except (OverflowError, ValueError, OSError):
        return None


def _to_ms(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _from_ms(ms: int) -> datetime:
    return (_EPOCH + timedelta(milliseconds=ms)).astimezone()

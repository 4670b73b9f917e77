"""The task graph: tasks that outlive a session, one JSON file each, changed under a lock.

    .tutorial/tasks/<list>/      one task list (the list name: 1-64 of A-Z a-z 0-9 _ -)
        1.json                   one task, Claude Code's shape (UTF-8, indent 2, newline):
                                     {"id": "1", "subject": "...", "description": "",
                                      "activeForm": "", "owner": "", "status": "pending",
                                      "blocks": ["3"], "blockedBy": [], "metadata": {}}
        .highwatermark           the last id handed out, as decimal text
        .lock                    taken by every change (`filelock`: fcntl, or LockFileEx on Windows)

A plan kept in the agent's memory (chapter 5's todo list) is gone when the
process ends, and a subagent or a second agent cannot see it. Files in the
workspace are seen by every process, so the list needs what shared files need:

    one writer at a time    every change takes `.lock` (at most `LOCK_TIMEOUT` seconds of
                            waiting: then a result says the list is busy), reads the files
                            fresh, checks everything, and only then writes, each file
                            atomically (chapter 2's `atomic_write`). A refused change writes
                            nothing: not a byte of any file changes.
    ids never reused        "1", "2", ... in creation order; `.highwatermark` keeps the last
                            one handed out, so a deleted task's id is never given again (and
                            an id that a file on disk has, even a corrupt one, is counted).
    edges both ways         a task's `blocks` and the `blockedBy` of the tasks it blocks name
                            each other, always: a change writes both ends. Read back, a list
                            edited by hand so that they disagree counts the edge if either
                            end names it, and an id with no readable task is dropped.

The rules are results, never exceptions (`Outcome`, its text what the model
reads, starting with the keyword):

    not_found           no task with that id; the text lists the ids there are
    invalid_arguments   a bound broken, an unknown id in a dependency list, a task made to
                        block itself, a dependency that would close a cycle (as a path,
                        `1 → 2 → 1`, where → means "blocks"), a full list
    blocked             in_progress on a task that waits for unfinished tasks (named)
    already_claimed     an owner set while another owner holds the task (named)
    already_resolved    any change to the owner of a completed task
    error               the list is locked by another process, or cannot be read or written

A claim is `update(id, owner=me, status="in_progress")`: both are set, or
neither is. Completing a task says which tasks it unblocked (those whose last
unfinished blocker it was). "deleted" is a status the update takes, never one a
task has: the file goes, and the id leaves every other task's lists, under the
same lock.

A corrupt task file (not JSON, the wrong shape, an id that is not its name,
more than `MAX_FILE_BYTES`) is left out of the list with one warning naming
it, is never overwritten, and its id is never handed out again. It does not
stop the run.

Bounds: subject and activeForm at most 200 characters, description 4,000,
owner 64, at most 1,000 task files in a list, a task file at most 64 KB (read
or written). Reads (`get`, `list`) take no lock: every file is replaced whole,
so a reader sees each task as it was before a change or after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chapters.ch02.text_files import READ_FLAGS, atomic_write, read_open_file
from chapters.ch03.harness_files import NO_FOLLOW, harness_folder

TASKS_FOLDER = Path(".tutorial") / "tasks"  # below the workspace
DEFAULT_LIST = "default"
HIGH_WATER_MARK = ".highwatermark"
LOCK_FILE = ".lock"
SUFFIX = ".json"
LOCK_TIMEOUT = 10.0  # seconds a change waits for another process's change to end
MAX_SUBJECT = 200
MAX_ACTIVE_FORM = 200
MAX_DESCRIPTION = 4_000
MAX_OWNER = 64
MAX_TASKS = 1_000  # task files in one list, corrupt ones included
# Of a task file, read or written. A task at every bound (subject, description, activeForm and
# owner of 6-byte escapes, 999 ids of 7 digits in each list) is under 60 KB.
MAX_FILE_BYTES = 64 * 1024
MAX_MARK_BYTES = 64  # .highwatermark: a number
_LIST_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ID = re.compile(r"[1-9][0-9]{0,17}")  # what `Task.id` is; a file name "<id>.json"
_NUMBER = re.compile(r"[0-9]{1,18}")  # a file name the high-water mark counts
CHANGED = ("created", "ok")  # the keywords of a change that was made


class TaskStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


DELETED = "deleted"  # an update's status, never a task's: the task is removed
STATUSES = (*(s.value for s in TaskStatus), DELETED)


class Task(BaseModel):
    """One task, exactly the keys of its file (Claude Code's names: `activeForm`, `blockedBy`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    subject: str
    description: str = ""
    activeForm: str = ""  # "Writing the summary": what a spinner shows while it is in progress
    owner: str = ""  # who claimed it; "" is nobody
    status: TaskStatus = TaskStatus.PENDING
    blocks: list[str] = Field(default_factory=list)  # tasks that wait for this one
    blockedBy: list[str] = Field(default_factory=list)  # tasks this one waits for
    metadata: dict[str, Any] = Field(default_factory=dict)

    def file_bytes(self) -> bytes:
        """The file, exactly as written: indent 2, UTF-8 as it is, one newline at the end."""
        data = self.model_dump(mode="json")
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Outcome:
    """What a change or a look-up did. `text` is what the model reads; it starts with `keyword`
    and a colon (`created` starts `created task <id>`). `tasks`: the tasks changed (the one
    asked about first; a deleted one as it was), or the task looked up."""

    keyword: str  # created, ok, not_found, invalid_arguments, blocked, already_claimed, ...
    text: str
    tasks: tuple[Task, ...] = ()

    @property
    def ok(self) -> bool:
        return self.keyword in CHANGED

    @property
    def task(self) -> Task | None:
        return self.tasks[0] if self.tasks else None


@dataclass(frozen=True)
class Snapshot:
    """The list as read at one moment: tasks by number, and one warning per file left out."""

    tasks: tuple[Task, ...] = ()
    warnings: tuple[str, ...] = ()
    _by_id: Mapping[str, Task] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {task.id: task for task in self.tasks})

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks)

    def get(self, task_id: str) -> Task | None:
        return self._by_id.get(task_id)

    def waiting_for(self, task: Task) -> tuple[str, ...]:
        """The ids of the tasks `task` waits for that are not completed."""
        return tuple(
            blocker
            for blocker in task.blockedBy
            if (found := self._by_id.get(blocker)) is not None
            and found.status is not TaskStatus.COMPLETED
        )

    def is_ready(self, task: Task) -> bool:
        """Pending, and nothing unfinished blocks it: it can be started now."""
        return task.status is TaskStatus.PENDING and not self.waiting_for(task)

    def as_json(self) -> list[dict[str, Any]]:
        """The tasks as plain data, each as its file holds it (for a Stop hook's stdin)."""
        return [task.model_dump(mode="json") for task in self.tasks]


def list_name_problem(name: str) -> str | None:
    """Why `name` cannot name a task list (it is a folder's name); None if it can."""
    if _LIST_NAME.fullmatch(name):
        return None
    return (
        f"task list name {name!r} must be 1 to 64 characters, each a letter, a digit, - or _ "
        "(it names a folder)"
    )


def canonical_id(raw: object) -> str:
    """The id as the files spell it: "3" for 3, "3", " 3" or "03"; anything else as text."""
    text = str(raw).strip()
    if _NUMBER.fullmatch(text):
        return str(int(text))
    return text


def names(ids: Iterable[str]) -> str:
    return ", ".join(ids)


@dataclass
class _Listing:
    """The folder as read under (or without) the lock: what every rule is checked against."""

    tasks: dict[str, Task]  # readable tasks, edges normalised both ways
    on_disk: dict[str, bytes]  # the bytes each readable task's file holds
    files: int  # task files, corrupt ones included
    last_id: int  # the high-water mark: max(.highwatermark, every numbered file name)
    warnings: list[str]

    def snapshot(self) -> Snapshot:
        ordered = sorted(self.tasks.values(), key=lambda task: int(task.id))
        return Snapshot(tuple(ordered), tuple(self.warnings))

    def ids_text(self) -> str:
        ids = sorted(self.tasks, key=int)
        return f"The tasks: {names(ids)}." if ids else "The task list is empty."


class TaskStore:
    """One task list of a workspace: `root/.tutorial/tasks/<list_name>/`.

    Holds no tasks itself: every call reads the files, so stores in several
    processes (or several in one) on the same folder always agree.
    """

    def __init__(
        self, root: Path, list_name: str = DEFAULT_LIST, *, lock_timeout: float = LOCK_TIMEOUT
    ) -> None:
        problem = list_name_problem(list_name)
        if problem:
            raise ValueError(problem)
        self.root = root
        self.list_name = list_name
        self.lock_timeout = lock_timeout

    @property
    def relative(self) -> Path:
        """The folder below the workspace: `.tutorial/tasks/default`."""
        return TASKS_FOLDER / self.list_name

    @property
    def shown(self) -> str:
        """The folder as people write it: `.tutorial/tasks/default/`."""
        return f"{self.relative.as_posix()}/"

    @property
    def folder(self) -> Path:
        return self.root / self.relative

    # --- reading ----------------------------------------------------------------------------

    def list(self) -> Snapshot:
        """Every readable task, by number, and a warning per file left out. Takes no lock."""
        try:
            return self._read(create=False).snapshot()
        except OSError as error:
            return Snapshot(warnings=(f"{self.shown} cannot be read ({error}); no tasks shown",))

    def get(self, task_id: str) -> Outcome:
        """One task in full (`ok:` and its fields), or `not_found:` with the ids there are."""
        task_id = canonical_id(task_id)
        try:
            listing = self._read(create=False)
        except OSError as error:
            return _error(f"the task list {self.list_name} cannot be read ({error})")
        task = listing.tasks.get(task_id)
        if task is None:
            return _not_found(task_id, listing, self.shown)
        return Outcome("ok", f"ok: {describe(task, listing.snapshot())}", (task,))

    # --- changing ---------------------------------------------------------------------------

    def create(
        self,
        subject: str,
        description: str = "",
        active_form: str = "",
        blocked_by: Sequence[str] = (),
    ) -> Outcome:
        """A new pending task with the next id, waiting for `blocked_by` (which must exist)."""
        subject, active_form = subject.strip(), active_form.strip()
        problem = _text_problem("subject", subject, MAX_SUBJECT, required=True)
        problem = problem or _text_problem("description", description, MAX_DESCRIPTION)
        problem = problem or _text_problem("activeForm", active_form, MAX_ACTIVE_FORM)
        if problem:
            return _invalid(f"{problem}. No task was created.")
        blockers = _unique(canonical_id(raw) for raw in blocked_by)
        if blockers and not self._exists():  # no list yet: no task to wait for, nothing made
            return self._create(_Listing({}, {}, 0, 0, []), subject, description, "", blockers)
        return self._locked(
            lambda listing: self._create(listing, subject, description, active_form, blockers),
            create=True,
        )

    def update(
        self,
        task_id: str,
        *,
        status: str | None = None,
        owner: str | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        add_blocked_by: Sequence[str] = (),
        add_blocks: Sequence[str] = (),
    ) -> Outcome:
        """Change one task: any of its fields, new dependencies both ways, or "deleted".

        All of it, or (with a result saying why) nothing.
        """
        task_id = canonical_id(task_id)
        change = _Change(
            task_id=task_id,
            status=None if status is None else str(status).strip(),
            owner=None if owner is None else owner.strip(),
            subject=None if subject is None else subject.strip(),
            description=description,
            active_form=None if active_form is None else active_form.strip(),
            add_blocked_by=_unique(canonical_id(raw) for raw in add_blocked_by),
            add_blocks=_unique(canonical_id(raw) for raw in add_blocks),
        )
        problem = change.problem()
        if problem:
            return _invalid(f"{problem}. Nothing was changed.")
        if not self._exists():  # no folder: nothing to change, and none is made
            listing = _Listing({}, {}, 0, 0, [])
            return _not_found(task_id, listing, self.shown)
        return self._locked(lambda listing: self._update(listing, change), create=False)

    # --- inside -----------------------------------------------------------------------------

    def _exists(self) -> bool:
        if not self.root.is_dir():
            return False
        try:
            return harness_folder(self.root, self.relative).is_dir()
        except OSError:
            return True  # let the change itself say why it cannot read the folder

    def _locked(self, change: Any, *, create: bool) -> Outcome:
        """Run `change(listing)` holding the list's lock, on the files read after taking it."""
        from filelock import FileLock, Timeout  # only a run that uses the task list needs it

        try:
            folder = self._folder(create=create)
            with FileLock(folder / LOCK_FILE, timeout=self.lock_timeout):
                listing = self._read(create=False)
                outcome: Outcome = change(listing)
                return outcome
        except Timeout:
            return _error(
                f"the task list {self.list_name} is locked by another process "
                f"(waited {self.lock_timeout:g} s); try again"
            )
        except OSError as error:
            return _error(f"the task list {self.list_name} could not be changed ({error})")

    def _folder(self, *, create: bool) -> Path:
        """The list's real folder, checked to stay inside the workspace (a link that leads out
        is refused: chapters/ch03/harness_files.py)."""
        return harness_folder(self.root, self.relative, create=create)

    def _read(self, *, create: bool) -> _Listing:
        if not self.root.is_dir():
            return _Listing({}, {}, 0, 0, [])
        folder = self._folder(create=create)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except FileNotFoundError:
            return _Listing({}, {}, 0, 0, [])
        last_id, problem = _read_mark(folder)
        warnings = [f"{self.shown}{HIGH_WATER_MARK} {problem}; ignored"] if problem else []
        numbered: list[tuple[int, str]] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") or not name.endswith(SUFFIX):
                continue  # the lock, the mark, a write's temporary file
            stem = name[: -len(SUFFIX)]
            if not _NUMBER.fullmatch(stem):
                warnings.append(self._left_out(name, "its name is not a task id (<number>.json)"))
                continue
            numbered.append((int(stem), name))
        numbered.sort()
        if numbered:
            last_id = max(last_id, numbered[-1][0])
        if len(numbered) > MAX_TASKS:
            skipped = len(numbered) - MAX_TASKS
            warnings.append(
                f"{self.shown}: {skipped} task files beyond the first {MAX_TASKS:,} were not "
                "read (a list holds at most that many)"
            )
            numbered = numbered[:MAX_TASKS]
        tasks: dict[str, Task] = {}
        on_disk: dict[str, bytes] = {}
        for _, name in numbered:
            task_or_problem, data = _read_task(folder, name)
            if isinstance(task_or_problem, str):
                warnings.append(self._left_out(name, task_or_problem))
                continue
            tasks[task_or_problem.id] = task_or_problem
            on_disk[task_or_problem.id] = data
        return _Listing(_mirrored(tasks), on_disk, len(numbered), last_id, warnings)

    def _left_out(self, name: str, why: str) -> str:
        return f"{self.shown}{name}: {why}; left out of the task list"

    def _create(
        self,
        listing: _Listing,
        subject: str,
        description: str,
        active_form: str,
        blockers: Sequence[str],
    ) -> Outcome:
        if listing.files >= MAX_TASKS:
            return _invalid(
                f"the task list {self.list_name} already holds {listing.files:,} tasks, the "
                f"most a list holds; delete finished ones first. No task was created."
            )
        unknown = [blocker for blocker in blockers if blocker not in listing.tasks]
        if unknown:
            return _invalid(
                f"blockedBy names {_task_word(unknown)} {names(unknown)}, which "
                f"{'does' if len(unknown) == 1 else 'do'} not exist. {listing.ids_text()} "
                "No task was created."
            )
        blockers = sorted(blockers, key=int)
        new_id = str(listing.last_id + 1)
        task = Task(
            id=new_id,
            subject=subject,
            description=description,
            activeForm=active_form,
            blockedBy=blockers,
        )
        changed = [task] + [
            _with_link(listing.tasks[blocker], "blocks", new_id) for blocker in blockers
        ]
        problem = _size_problem(changed)
        if problem:
            return _invalid(f"{problem}. No task was created.")
        folder = self._folder(create=True)
        atomic_write(folder / HIGH_WATER_MARK, new_id.encode("ascii"))  # first: never reused
        for each in changed:
            atomic_write(folder / f"{each.id}{SUFFIX}", each.file_bytes())
        waits = ""
        if blockers:
            after = Snapshot((*listing.tasks.values(), *changed))
            unfinished = after.waiting_for(task)
            waits = f"; waits for {names(blockers)}" + (
                f" (it can start when {names(unfinished)} "
                f"{'is' if len(unfinished) == 1 else 'are'} completed)"
                if unfinished
                else " (all completed: it is ready)"
            )
        return Outcome("created", f"created task {new_id}: {subject}{waits}", tuple(changed))

    def _update(self, listing: _Listing, change: _Change) -> Outcome:
        task = listing.tasks.get(change.task_id)
        if task is None:
            return _not_found(change.task_id, listing, self.shown)
        if change.status == DELETED:
            return self._delete(listing, task, change)
        unknown = [
            (argument, other)
            for argument, ids in (
                ("addBlockedBy", change.add_blocked_by),
                ("addBlocks", change.add_blocks),
            )
            for other in ids
            if other not in listing.tasks
        ]
        if unknown:
            named = "; ".join(
                f"{argument} names task {other}, which does not exist"
                for argument, other in unknown
            )
            return _invalid(f"{named}. {listing.ids_text()} Nothing was changed.")
        new_edges = [(blocker, task.id) for blocker in change.add_blocked_by] + [
            (task.id, blocked) for blocked in change.add_blocks
        ]
        edges = {(a, b) for a in listing.tasks for b in listing.tasks[a].blocks}
        for blocker, blocked in new_edges:
            if (blocker, blocked) in edges:
                continue
            path = _path(edges, blocked, blocker)
            if path is not None:
                return _invalid(
                    f"task {blocker} cannot block task {blocked}: that closes a cycle, "
                    f"{' → '.join([blocker, *path])} (→ means blocks). Nothing was changed."
                )
            edges.add((blocker, blocked))
        if change.owner is not None and change.owner != task.owner:
            if task.status is TaskStatus.COMPLETED:
                return Outcome(
                    "already_resolved",
                    f"already_resolved: task {task.id} is completed; its owner "
                    f"({_owner(task.owner)}) no longer changes. Nothing was changed.",
                )
            if task.owner and change.owner:
                return Outcome(
                    "already_claimed",
                    f"already_claimed: task {task.id} is owned by {task.owner}; nothing was "
                    "changed. Pick another task that nobody owns.",
                )
        tasks = dict(listing.tasks)
        for blocker, blocked in new_edges:
            tasks[blocker] = _with_link(tasks[blocker], "blocks", blocked)
            tasks[blocked] = _with_link(tasks[blocked], "blockedBy", blocker)
        fields: dict[str, Any] = {}
        for key, value in (
            ("status", change.status),
            ("owner", change.owner),
            ("subject", change.subject),
            ("description", change.description),
            ("activeForm", change.active_form),
        ):
            if value is not None and value != getattr(task, key):
                fields[key] = TaskStatus(value) if key == "status" else value
        updated = tasks[task.id].model_copy(update=fields)
        tasks[task.id] = updated
        after = Snapshot(tuple(tasks.values()))
        if change.status == TaskStatus.IN_PROGRESS:
            waiting = after.waiting_for(updated)
            if waiting:
                return Outcome(
                    "blocked",
                    f"blocked: task {task.id} waits for {names(waiting)}, not completed yet. "
                    "Finish those first, or start a task that is ready. Nothing was changed.",
                )
        touched = [
            tasks[each] for each in _unique([task.id, *(x for edge in new_edges for x in edge)])
        ]
        changed = [each for each in touched if each.file_bytes() != listing.on_disk.get(each.id)]
        problem = _size_problem(changed)
        if problem:
            return _invalid(f"{problem}. Nothing was changed.")
        folder = self._folder(create=False)
        for each in changed:
            atomic_write(folder / f"{each.id}{SUFFIX}", each.file_bytes())
        said = _what_changed(task, fields, change)
        if not said:
            return Outcome("ok", f"ok: task {task.id} unchanged (it already says that)", (updated,))
        text = f"ok: task {task.id} updated: {', '.join(said)}"
        if fields.get("status") is TaskStatus.COMPLETED:
            before = listing.snapshot()
            freed = _freed(before, after, task.id)
            text += f"; unblocked: {names(freed)}" if freed else "; it unblocked no task"
        ordered = [updated, *(each for each in changed if each.id != task.id)]
        return Outcome("ok", text, tuple(ordered))

    def _delete(self, listing: _Listing, task: Task, change: _Change) -> Outcome:
        tasks = dict(listing.tasks)
        del tasks[task.id]
        neighbours = _unique([*task.blocks, *task.blockedBy])
        changed = []
        for other in neighbours:
            kept = tasks[other].model_copy(
                update={
                    "blocks": [x for x in tasks[other].blocks if x != task.id],
                    "blockedBy": [x for x in tasks[other].blockedBy if x != task.id],
                }
            )
            tasks[other] = kept
            changed.append(kept)
        folder = self._folder(create=False)
        # The file first: stopped after it, the others still name an id with no task, and a
        # read drops such ids; the deletion is done either way.
        with contextlib.suppress(FileNotFoundError):
            (folder / f"{task.id}{SUFFIX}").unlink()
        for each in changed:
            atomic_write(folder / f"{each.id}{SUFFIX}", each.file_bytes())
        text = f"ok: task {task.id} deleted"
        if task.status is not TaskStatus.COMPLETED:
            freed = _freed(listing.snapshot(), Snapshot(tuple(tasks.values())), task.id)
            if freed:
                text += f"; unblocked: {names(freed)}"
        ignored = change.other_fields()
        if ignored:
            text += f" (not applied, the task is gone: {', '.join(ignored)})"
        return Outcome("ok", text, (task, *changed))


@dataclass(frozen=True)
class _Change:
    """An update's arguments, stripped and with ids made canonical."""

    task_id: str
    status: str | None
    owner: str | None
    subject: str | None
    description: str | None
    active_form: str | None
    add_blocked_by: list[str]
    add_blocks: list[str]

    def problem(self) -> str | None:
        """What is wrong with the arguments alone, before the files are read."""
        if self.status is not None and self.status not in STATUSES:
            return f"status {self.status!r} is not one of {', '.join(STATUSES)}"
        if self.subject is not None:
            problem = _text_problem("subject", self.subject, MAX_SUBJECT, required=True)
            if problem:
                return problem
        checks = [
            ("description", self.description, MAX_DESCRIPTION),
            ("activeForm", self.active_form, MAX_ACTIVE_FORM),
            ("owner", self.owner, MAX_OWNER),
        ]
        for name, value, limit in checks:
            problem = None if value is None else _text_problem(name, value, limit)
            if problem:
                return problem
        for argument, ids in (
            ("addBlockedBy", self.add_blocked_by),
            ("addBlocks", self.add_blocks),
        ):
            if self.task_id in ids:
                return f"task {self.task_id} cannot block itself ({argument} names {self.task_id})"
        return None

    def other_fields(self) -> list[str]:
        given = [
            ("owner", self.owner),
            ("subject", self.subject),
            ("description", self.description),
            ("activeForm", self.active_form),
        ]
        said = [name for name, value in given if value is not None]
        said += [
            name
            for name, ids in (("addBlockedBy", self.add_blocked_by), ("addBlocks", self.add_blocks))
            if ids
        ]
        return said


def describe(task: Task, snapshot: Snapshot) -> str:
    """A task in full, as task_get shows it: a heading line, then one line per field set."""
    lines = [f"task {task.id} [{task.status.value}] {task.subject}"]
    if task.description:
        lines.append(f"description: {task.description}")
    if task.activeForm:
        lines.append(f"activeForm: {task.activeForm}")
    lines.append(f"owner: {_owner(task.owner)}")
    if task.blockedBy:
        statuses = [
            f"{other} [{found.status.value}]"
            for other in task.blockedBy
            if (found := snapshot.get(other)) is not None
        ]
        lines.append(f"waits for: {', '.join(statuses)}")
    if task.blocks:
        lines.append(f"blocks: {names(task.blocks)}")
    waiting = snapshot.waiting_for(task)
    if snapshot.is_ready(task):
        lines.append("ready: yes, nothing unfinished blocks it")
    elif task.status is TaskStatus.PENDING:
        lines.append(f"ready: no, it waits for {names(waiting)}")
    return "\n".join(lines)


def _read_mark(folder: Path) -> tuple[int, str | None]:
    """The high-water mark (0 when there is none yet), and what is wrong with it if it is bad."""
    try:
        data = read_open_file(
            os.open(folder / HIGH_WATER_MARK, READ_FLAGS | NO_FOLLOW), MAX_MARK_BYTES + 1
        )
    except FileNotFoundError:
        return 0, None
    except (OSError, ValueError) as error:
        return 0, f"cannot be read ({error})"
    text = data.decode("ascii", errors="replace").strip()
    if len(data) > MAX_MARK_BYTES or not _NUMBER.fullmatch(text):
        return 0, "is not a number"
    return int(text), None


def _read_task(folder: Path, name: str) -> tuple[Task | str, bytes]:
    """The task in `folder/name`, or why it cannot be used; and the bytes read."""
    try:
        data = read_open_file(os.open(folder / name, READ_FLAGS | NO_FOLLOW), MAX_FILE_BYTES + 1)
    except (OSError, ValueError) as error:  # ValueError: a folder, a pipe (NotRegularFile)
        return f"cannot be read ({error})", b""
    if len(data) > MAX_FILE_BYTES:
        return f"it is more than {MAX_FILE_BYTES:,} bytes, more than any task holds", b""
    try:
        task = Task.model_validate_json(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        kind = "not JSON" if first["type"] == "json_invalid" else "not a task"
        return f"{kind} ({where + ': ' if where else ''}{first['msg']})", b""
    stem = name[: -len(SUFFIX)]
    if not _ID.fullmatch(stem):  # "0.json", "007.json": counted by the mark, never a task
        return "its name is not a task id (ids are 1, 2, 3, ... with no leading zero)", b""
    if task.id != stem:
        return f"its id {task.id!r} is not its file's name", b""
    return task, data


def _mirrored(tasks: dict[str, Task]) -> dict[str, Task]:
    """Each edge named by both of its ends, among readable tasks only, ids in number order."""
    blocks: dict[str, set[str]] = {task_id: set() for task_id in tasks}
    blocked_by: dict[str, set[str]] = {task_id: set() for task_id in tasks}
    for task in tasks.values():
        for other in task.blocks:
            if other in tasks and other != task.id:
                blocks[task.id].add(other)
                blocked_by[other].add(task.id)
        for other in task.blockedBy:
            if other in tasks and other != task.id:
                blocked_by[task.id].add(other)
                blocks[other].add(task.id)
    result = {}
    for task_id, task in tasks.items():
        new_blocks = sorted(blocks[task_id], key=int)
        new_blocked_by = sorted(blocked_by[task_id], key=int)
        if new_blocks != task.blocks or new_blocked_by != task.blockedBy:
            task = task.model_copy(update={"blocks": new_blocks, "blockedBy": new_blocked_by})
        result[task_id] = task
    return result


def _with_link(task: Task, key: str, other: str) -> Task:
    """`task` with `other` added to its `blocks` or `blockedBy` list (kept in number order)."""
    current: list[str] = getattr(task, key)
    if other in current:
        return task
    return task.model_copy(update={key: sorted([*current, other], key=int)})


def _path(edges: set[tuple[str, str]], start: str, goal: str) -> list[str] | None:
    """The ids from `start` to `goal` following "blocks" edges, both included; None if none."""
    following: dict[str, list[str]] = {}
    for a, b in edges:
        following.setdefault(a, []).append(b)
    came_from: dict[str, str | None] = {start: None}
    queue = [start]
    while queue:
        here = queue.pop(0)
        if here == goal:
            path = [here]
            while (previous := came_from[path[-1]]) is not None:
                path.append(previous)
            return path[::-1]
        for there in sorted(following.get(here, []), key=int):
            if there not in came_from:
                came_from[there] = here
                queue.append(there)
    return None


def _freed(before: Snapshot, after: Snapshot, finished: str) -> list[str]:
    """Tasks that waited for `finished` (among others, all done) and now wait for nothing."""
    freed = []
    for task in before.tasks:
        now = after.get(task.id)
        if now is None or now.status is TaskStatus.COMPLETED:
            continue
        if finished in before.waiting_for(task) and not after.waiting_for(now):
            freed.append(task.id)
    return freed


def _what_changed(task: Task, fields: Mapping[str, Any], change: _Change) -> list[str]:
    said = []
    if "status" in fields:
        said.append(f"status {task.status.value} → {fields['status'].value}")
    if "owner" in fields:
        said.append(f"owner {_owner(fields['owner'])}")
    said += [key for key in ("subject", "description", "activeForm") if key in fields]
    new_blockers = [x for x in change.add_blocked_by if x not in task.blockedBy]
    new_blocked = [x for x in change.add_blocks if x not in task.blocks]
    if new_blockers:
        said.append(f"now waits for {names(new_blockers)}")
    if new_blocked:
        said.append(f"now blocks {names(new_blocked)}")
    return said


def _size_problem(tasks: Iterable[Task]) -> str | None:
    for task in tasks:
        size = len(task.file_bytes())
        if size > MAX_FILE_BYTES:
            return (
                f"task {task.id}'s file would be {size:,} bytes, more than a task file may be "
                f"({MAX_FILE_BYTES:,})"
            )
    return None


def _text_problem(name: str, value: str, limit: int, *, required: bool = False) -> str | None:
    if required and not value:
        return f"{name} is empty; it must say what the task is"
    if len(value) > limit:
        return f"{name} is {len(value):,} characters; at most {limit:,}"
    return None


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _owner(owner: str) -> str:
    return owner or "(nobody)"


def _task_word(ids: Sequence[str]) -> str:
    return "task" if len(ids) == 1 else "tasks"


def _invalid(detail: str) -> Outcome:
    return Outcome("invalid_arguments", f"invalid_arguments: {detail}")


def _error(detail: str) -> Outcome:
    return Outcome("error", f"error: {detail}")


def _not_found(task_id: str, listing: _Listing, shown: str) -> Outcome:
    detail = f"there is no task {task_id}. {listing.ids_text()}"
    corrupt = [w for w in listing.warnings if w.startswith(f"{shown}{task_id}{SUFFIX}:")]
    if corrupt:
        detail += f" Its file is there but cannot be used: {corrupt[0]}."
    return Outcome("not_found", f"not_found: {detail}")

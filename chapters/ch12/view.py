"""The task list as the human sees it in a terminal: one line under the spinner.

    任务 tasks: 1 ready · 1 in progress · 1 blocked · 2 done

The line is read from the files each time the console asks (once per model
request, when the spinner starts), not kept: another process, a child agent or
the person at the terminal may change the list between two requests, and the
line must show the list as it is. Reading is cheap enough for that: the
largest list (1,000 task files, `MAX_TASKS`) reads in about 25 ms on Linux, a
fraction of any model's reply, so there is no cache to go stale.

Plain output needs nothing from here: every task tool's result is printed.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from chapters.ch12.tasks import Snapshot, Task, TaskStatus, TaskStore

if TYPE_CHECKING:
    from rich.console import RenderableType

# What a task is, for the counts: pending ones split by whether they can start now.
READY, IN_PROGRESS, BLOCKED, DONE = "ready", "in progress", "blocked", "done"
KINDS = (READY, IN_PROGRESS, BLOCKED, DONE)


def counts(snapshot: Snapshot) -> dict[str, int]:
    """How many tasks are ready, in progress, blocked and done, in that order (zeros kept)."""
    found = Counter(kind_of(snapshot, task) for task in snapshot.tasks)
    return {kind: found[kind] for kind in KINDS}


def kind_of(snapshot: Snapshot, task: Task) -> str:
    """One of `KINDS`: blocked means pending while a task it waits for is unfinished."""
    if task.status is TaskStatus.COMPLETED:
        return DONE
    if task.status is TaskStatus.IN_PROGRESS:
        return IN_PROGRESS
    return READY if snapshot.is_ready(task) else BLOCKED


def counts_line(snapshot: Snapshot) -> str:
    """`1 ready · 1 in progress · 2 done`: the kinds there are, in a fixed order."""
    return " · ".join(f"{n} {kind}" for kind, n in counts(snapshot).items() if n)


def tasks_view(store: TaskStore) -> RenderableType | None:
    """The line for `console.keep_in_view`; None while the list is empty (or unreadable)."""
    snapshot = store.list()
    if not snapshot.tasks:
        return None
    from rich.text import Text

    return Text(f"任务 tasks: {counts_line(snapshot)}", style="cyan")

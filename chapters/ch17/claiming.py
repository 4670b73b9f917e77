"""Claiming work from the task board: an idle teammate takes the next ready task itself.

    next_claim(store, owner)     the lowest-numbered task that is pending, has no owner and
                                 waits for nothing unfinished, claimed for `owner`; or why
                                 nothing was (it holds a task already, or none is ready)
    release(store, owner)        every in_progress task of `owner` back to pending, no owner
                                 (chapter 16's `release_tasks`, which a stopped teammate uses)
    assignment(task)             the claimed task as the teammate's next turn:
                                     <task-assignment id="3">subject

                                     description</task-assignment>

Pull instead of push. Until now the lead handed out every job: it had to know
who was free, and a job waited while the lead was busy with something else.
Here the lead only writes the tasks (chapter 12's list) and a teammate with
nothing to do looks at the board and takes the next task that can start. The
graph decides the order: a task whose blockers are unfinished is not ready, so
nobody takes it until they are completed.

The claim is ONE change. `next_claim` reads the list without a lock (a
snapshot), picks a candidate, and then calls

    store.update(id, status="in_progress", owner=owner)

once. That call takes the list's file lock, reads the task again under it, and
sets the owner and the status together, or neither (chapters/ch12/tasks.py).
The snapshot is only a guess: between the read and the change another teammate
may have claimed the task, or one of its blockers may have been reopened. The
locked change sees that and refuses (`already_claimed`, `blocked`, or, for a
task completed or deleted meanwhile, `already_resolved` or `not_found`), writing
nothing; `next_claim` then tries the next candidate. Any other refusal (the
list is locked too long, cannot be read) is handed back as data, never raised.

learn-claude-code's s17 claims with a check and then a write, no lock between
them: it reads the task, sees no owner, and writes its own name. Two teammates
that read at the same moment both see no owner and both write, and both work
on the task, the second write hiding the first. The tests race four threads,
and four processes, for one task: here exactly one wins.

A teammate holds at most one `in_progress` task: while it has one, `next_claim`
claims nothing (Claude Code's teammates work the same way).

A task stays claimed after its owner is gone. A teammate that crashes or is
stopped leaves its task `in_progress` under its name, and since the claim
refuses an owned task, nobody else ever takes it: the graph behind it waits
forever. So a teammate that fails or stops calls `release`, which puts each of
its `in_progress` tasks back to `pending` with no owner (one locked change
each), and the next idle teammate claims it. A task completed in the meantime
is not reopened: chapter 12 refuses to change a completed task's owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from chapters.ch12.tasks import Outcome, Task, TaskStatus, TaskStore
from chapters.ch16.team_protocols import release_tasks as release

__all__ = ["Claimed", "NothingToClaim", "assignment", "next_claim", "release"]

# Refusals that mean the task changed meanwhile (claimed, a blocker reopened, completed or
# deleted by someone else): a lost race, not a failure; try the next candidate.
RETRY = ("already_claimed", "blocked", "already_resolved", "not_found")


@dataclass(frozen=True)
class Claimed:
    """The task `owner` now holds, as it is after the claim (in_progress, owned)."""

    task: Task
    text: str  # the store's answer: `ok: task 3 updated: ...`


@dataclass(frozen=True)
class NothingToClaim:
    """Why nothing was claimed, in one line. `failure`: a refusal other than a lost race
    (the list locked, unreadable, ...), as the store returned it; None when there was
    simply nothing to take."""

    reason: str
    failure: Outcome | None = None


def next_claim(store: TaskStore, owner: str) -> Claimed | NothingToClaim:
    """Claim the lowest-numbered ready task nobody owns for `owner`, unless it holds one."""
    snapshot = store.list()
    holding = [
        task
        for task in snapshot.tasks
        if task.owner == owner and task.status is TaskStatus.IN_PROGRESS
    ]
    if holding:
        held = ", ".join(task.id for task in holding)
        return NothingToClaim(f"{owner} is holding task {held} already; nothing claimed")
    candidates = sorted(
        (task for task in snapshot.tasks if not task.owner and snapshot.is_ready(task)),
        key=lambda task: int(task.id),
    )
    lost = []
    for task in candidates:
        outcome = store.update(task.id, status="in_progress", owner=owner)
        if outcome.ok and outcome.task is not None:
            return Claimed(outcome.task, outcome.text)
        if outcome.keyword in RETRY:
            lost.append(task.id)
            continue
        return NothingToClaim(
            f"claiming task {task.id} for {owner} failed: {outcome.text}", failure=outcome
        )
    if lost:
        return NothingToClaim(
            f"no task is pending and ready: {', '.join(lost)} were taken or blocked meanwhile"
        )
    return NothingToClaim("no task is pending, unowned and ready")


def assignment(task: Task) -> str:
    """The task as the turn that hands it to its teammate (subject and description escaped)."""
    body = escape(task.subject)
    if task.description:
        body += f"\n\n{escape(task.description)}"
    task_id = escape(task.id, {'"': "&quot;"})
    return f'<task-assignment id="{task_id}">{body}</task-assignment>'

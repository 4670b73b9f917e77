"""Benchmark: chapter 12's task list changed by several processes at once, and read when long.

    python scripts/bench_tasks.py [--processes 4] [--changes 200] [--tasks 1000] [--repeat 7]
                                                                          (exit 1: goal missed)

What it measures, in a temporary workspace:

    contention   P processes (chapters/ch12/tests/contender.py, action `mixed`), released
                 at the same moment through a pipe, each making C changes to one list, in
                 turn: create a task blocked by task 1 (so every create also rewrites task 1's
                 file, the one file all of them fight over), and claim the next task of a
                 shared pool of C/2 (`owner` + `in_progress`; every process tries every pool
                 task, in the same order). Changes per second: P*C over the wall time from
                 the release to the last process's end (a refused claim counts: it took the
                 lock, read the list and decided).
                 Lost updates: ids handed out twice, created tasks missing or not as their
                 creator made them, created ids missing from task 1's `blocks`, a high-water
                 mark short of the last id. Double owners: pool tasks that more than one
                 process believes it claimed, and pool tasks whose recorded owner is not the
                 one process that believes it claimed them.
    task_list    a list of N tasks (written as files: a chain, each waiting for the one before,
                 every fifth completed), then the task_list tool on it: one warm-up, then the
                 median (and min) of R runs.

Why: the task list is shared by every process working in the workspace (subagents, a
second agent); a lost update or a task with two owners is two agents doing the same work,
or work that silently disappears. task_list is what a model calls to find the next task,
and what the spinner's view reads: it should cost nothing a person notices.

Goal: 0 lost updates, 0 double owners, task_list of 1,000 tasks under 100 ms (median).
Changes per second are reported for information.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch02.text_files import atomic_write
from chapters.ch12.task_tools import TaskListArgs, make_task_tools
from chapters.ch12.tasks import HIGH_WATER_MARK, SUFFIX, Task, TaskStatus, TaskStore
from chapters.ch12.tests.contender import contend

GOAL_LIST_MS = 100.0
DEADLINE = 600.0  # seconds any contender may take once released


def contention(processes: int, changes: int) -> tuple[float, list[str], list[str]]:
    """(changes per second, lost updates, double owners), each problem as a line."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        store = TaskStore(root)
        pool = changes // 2
        for subject in ["the root", *(f"pool {n}" for n in range(1, pool + 1))]:
            assert store.create(subject).keyword == "created"
        names = [f"p{n}" for n in range(1, processes + 1)]
        said, seconds = contend(root, "mixed", names, changes, DEADLINE)
        snapshot = store.list()
        mark = int((store.folder / HIGH_WATER_MARK).read_text("ascii"))
    lost = [f"{name}: {text}" for name in names for text in said[name]["other"]]
    lost += _lost_updates(snapshot.tasks, said, names, pool, mark)
    doubles = _double_owners(snapshot.tasks, said, names, pool)
    return processes * changes / seconds, lost, doubles


def _lost_updates(
    tasks: tuple[Task, ...], said: dict[str, Any], names: list[str], pool: int, mark: int
) -> list[str]:
    by_id = {task.id: task for task in tasks}
    created = [task_id for name in names for task_id in said[name]["created"]]
    problems = [
        f"id {task_id} handed out twice" for task_id in set(created) if created.count(task_id) > 1
    ]
    for name in names:
        for number, task_id in enumerate(said[name]["created"], start=1):
            task = by_id.get(task_id)
            if task is None or task.subject != f"{name} {number}" or task.blockedBy != ["1"]:
                problems.append(f"task {task_id}, created by {name}, is missing or changed")
    missing = set(created) - set(by_id["1"].blocks)
    problems += [f"task 1's blocks lost {task_id}" for task_id in sorted(missing, key=int)]
    if mark != 1 + pool + len(created):
        problems.append(f"the high-water mark is {mark}, not {1 + pool + len(created)}")
    return problems


def _double_owners(
    tasks: tuple[Task, ...], said: dict[str, Any], names: list[str], pool: int
) -> list[str]:
    by_id = {task.id: task for task in tasks}
    problems = []
    for task_id in (str(n) for n in range(2, pool + 2)):
        believers = [name for name in names if task_id in said[name]["won"]]
        recorded = by_id[task_id].owner
        if len(believers) != 1 or recorded != believers[0]:
            problems.append(f"task {task_id}: owner {recorded!r}, claimed by {believers}")
    return problems


def write_long_list(store: TaskStore, count: int) -> None:
    """`count` tasks as files: a chain (each waits for the one before), every fifth completed."""
    for number in range(1, count + 1):
        task = Task(
            id=str(number),
            subject=f"Step {number} of the long job",
            description="What done means for this step, in a sentence or two. " * 3,
            activeForm=f"Working on step {number}",
            owner="main" if number % 5 == 1 else "",
            status=TaskStatus.COMPLETED if number % 5 == 0 else TaskStatus.PENDING,
            blocks=[str(number + 1)] if number < count else [],
            blockedBy=[str(number - 1)] if number > 1 else [],
        )
        atomic_write(store.folder / f"{number}{SUFFIX}", task.file_bytes())
    atomic_write(store.folder / HIGH_WATER_MARK, str(count).encode("ascii"))


def list_times(count: int, repeat: int) -> tuple[list[float], str]:
    """task_list on a list of `count` tasks: ms of each timed run, and the first line it said."""
    with tempfile.TemporaryDirectory() as tmp:
        store = TaskStore(Path(tmp).resolve())
        write_long_list(store, count)
        task_list = make_task_tools(store)[3]
        result = task_list.run(TaskListArgs())  # warm-up
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            result = task_list.run(TaskListArgs())
            times.append((time.perf_counter() - started) * 1e3)
    return times, result.content.splitlines()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4, help="processes changing one list")
    parser.add_argument("--changes", type=int, default=200, help="changes each process makes")
    parser.add_argument("--tasks", type=int, default=1000, help="tasks in the list task_list reads")
    parser.add_argument("--repeat", type=int, default=7, help="timed task_list runs; the median")
    args = parser.parse_args()
    if args.processes < 2 or args.changes < 2 or not 1 <= args.tasks <= 1000 or args.repeat < 1:
        parser.error("--processes and --changes at least 2, --tasks 1 to 1000, --repeat at least 1")
    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")

    rate, lost, doubles = contention(args.processes, args.changes)
    print(
        f"contention: {args.processes} processes x {args.changes} changes on one list "
        f"({args.changes // 2} creates and {args.changes // 2} claims each)"
    )
    print(f"  {rate:8.0f} changes per second (information)")
    print(f"  {len(lost):8d} lost updates  (goal 0)")
    print(f"  {len(doubles):8d} double owners (goal 0)")
    times, said = list_times(args.tasks, args.repeat)
    median = statistics.median(times)
    print(f"task_list on {args.tasks:,} tasks, {args.repeat} runs after one warm-up: {said!r}")
    print(
        f"  median {median:6.1f} ms, min {min(times):6.1f} ms  (goal median < {GOAL_LIST_MS:g} ms)"
    )

    failures = [f"lost update: {line}" for line in lost[:10]]
    failures += [f"double owner: {line}" for line in doubles[:10]]
    if median >= GOAL_LIST_MS:
        failures.append(f"task_list took {median:.1f} ms (median), goal < {GOAL_LIST_MS:g} ms")
    for failure in failures:
        print(f"GOAL MISSED: {failure}")
    if not failures:
        print("goal met: no lost update, no double owner, task_list under the time")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

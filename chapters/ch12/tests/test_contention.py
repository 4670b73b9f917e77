"""Real processes changing one task list at the same moment: only the lock stands between them.

Each contender is a separate Python process (chapters/ch12/tests/contender.py).
They are started together through a pipe, not by sleeping: each prints `ready`
and waits for a line on stdin; once every one is ready, each gets `go`. Every
wait is bounded: a contender exits by itself after its lifetime, and the test
waits at most `DEADLINE` seconds for each to finish once released.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chapters.ch12.tasks import TaskStore
from chapters.ch12.tests import contender

DEADLINE = 120.0  # seconds: far more than a healthy run takes; only a hung one waits it out


def contend(root: Path, action: str, names: list[str], count: int) -> dict[str, dict[str, Any]]:
    said, _ = contender.contend(root, action, names, count, DEADLINE)
    return said


def test_two_processes_claiming_the_same_50_tasks_leave_each_with_exactly_one_owner(
    tmp_path: Path,
) -> None:
    store = TaskStore(tmp_path)
    for number in range(1, 51):
        assert store.create(f"task {number}").keyword == "created"
    said = contend(tmp_path, "claim", ["ann", "bob"], 50)
    assert said["ann"]["other"] == said["bob"]["other"] == []
    won = {name: set(said[name]["won"]) for name in said}
    assert not won["ann"] & won["bob"]
    assert won["ann"] | won["bob"] == {str(n) for n in range(1, 51)}
    for name in said:  # what each lost, the other won
        assert set(said[name]["lost"]) == won["bob" if name == "ann" else "ann"]
    recorded = {task.id: (task.owner, task.status.value) for task in store.list().tasks}
    believed = {task_id: (name, "in_progress") for name in won for task_id in won[name]}
    assert recorded == believed


def test_processes_creating_tasks_at_once_lose_no_update_and_reuse_no_id(tmp_path: Path) -> None:
    store = TaskStore(tmp_path)
    assert store.create("the root every new task waits for").keyword == "created"
    names, each = ["p1", "p2", "p3", "p4"], 25
    said = contend(tmp_path, "create", names, each)
    handed_out = [task_id for name in names for task_id in said[name]["created"]]
    assert all(said[name]["other"] == [] for name in names)
    assert sorted(handed_out, key=int) == [str(n) for n in range(2, 2 + len(names) * each)]
    snapshot = store.list()
    assert snapshot.warnings == ()
    subjects = {task.id: task.subject for task in snapshot.tasks}
    for name in names:  # every task as its creator made it, under the id it was told
        for number, task_id in enumerate(said[name]["created"], start=1):
            assert subjects[task_id] == f"{name} {number}"
    root = snapshot.tasks[0]
    assert root.blocks == sorted(handed_out, key=int)  # 100 writes to one file, none lost
    assert all(task.blockedBy == ["1"] for task in snapshot.tasks[1:])
    assert (store.folder / ".highwatermark").read_text("ascii") == str(1 + len(names) * each)

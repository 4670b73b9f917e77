"""Claiming from the task board (chapters/ch17/claiming.py): one owner per task, in id
order, never before its blockers are completed, and released when its owner stops.

Races start together without sleeping: threads wait at a `threading.Barrier`,
processes at chapter 12's `released_together` (each prints `ready` and waits
for `go` on stdin).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

from chapters.ch12.tasks import Outcome, Snapshot, TaskStatus, TaskStore
from chapters.ch12.tests.contender import released_together
from chapters.ch17.claiming import Claimed, NothingToClaim, assignment, next_claim, release

DEADLINE = 120.0  # seconds: far more than a healthy run takes; only a hung one waits it out
RACERS = ("ann", "bob", "cat", "dan")

# One claimer process: ready, wait for go, claim once, print what it got as JSON.
CLAIMER = """
import json, sys
from pathlib import Path
from chapters.ch12.tasks import TaskStore
from chapters.ch17.claiming import Claimed, next_claim
store = TaskStore(Path(sys.argv[1]))
print("ready", flush=True)
if sys.stdin.readline().strip() != "go":
    sys.exit(2)
result = next_claim(store, sys.argv[2])
claimed = result.task.id if isinstance(result, Claimed) else None
print(json.dumps({"claimed": claimed, "said": getattr(result, "reason", "")}), flush=True)
"""


def board(root: Path, *subjects: str) -> TaskStore:
    store = TaskStore(root)
    for subject in subjects:
        assert store.create(subject).keyword == "created"
    return store


def owners(store: TaskStore) -> dict[str, tuple[str, str]]:
    return {task.id: (task.owner, task.status.value) for task in store.list().tasks}


def claimed_id(result: Claimed | NothingToClaim) -> str:
    assert isinstance(result, Claimed), result
    return result.task.id


def test_three_free_tasks_two_claimers_in_turn_claim_each_task_once(tmp_path: Path) -> None:
    store = board(tmp_path, "one", "two", "three")
    claims: list[tuple[str, str]] = []
    for turn in range(6):
        owner = ("ann", "bob")[turn % 2]
        result = next_claim(store, owner)
        if isinstance(result, Claimed):
            assert result.task.owner == owner
            assert result.task.status is TaskStatus.IN_PROGRESS
            claims.append((result.task.id, owner))
            assert store.update(result.task.id, status="completed").ok
    assert claims == [("1", "ann"), ("2", "bob"), ("3", "ann")]
    assert owners(store) == {
        "1": ("ann", "completed"),
        "2": ("bob", "completed"),
        "3": ("ann", "completed"),
    }
    result = next_claim(store, "bob")
    assert isinstance(result, NothingToClaim) and result.failure is None
    assert "no task is pending" in result.reason


def test_four_threads_racing_for_one_task_leave_exactly_one_owner(tmp_path: Path) -> None:
    board(tmp_path, "the only one")
    barrier = threading.Barrier(len(RACERS))
    results: dict[str, Claimed | NothingToClaim] = {}

    def claim(owner: str) -> None:
        store = TaskStore(tmp_path)  # each its own store, as each teammate has
        barrier.wait(timeout=DEADLINE)
        results[owner] = next_claim(store, owner)

    threads = [threading.Thread(target=claim, args=(owner,)) for owner in RACERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=DEADLINE)
    winners = [owner for owner, result in results.items() if isinstance(result, Claimed)]
    assert len(results) == len(RACERS)
    assert len(winners) == 1, results
    assert owners(TaskStore(tmp_path)) == {"1": (winners[0], "in_progress")}
    for owner in RACERS:
        if owner != winners[0]:
            lost = results[owner]
            assert isinstance(lost, NothingToClaim) and lost.failure is None, lost


def test_four_processes_racing_for_one_task_leave_exactly_one_owner(tmp_path: Path) -> None:
    board(tmp_path, "the only one")
    commands = {owner: [sys.executable, "-c", CLAIMER, str(tmp_path), owner] for owner in RACERS}
    said, _ = released_together(commands, DEADLINE)
    winners = [owner for owner in RACERS if said[owner]["claimed"] is not None]
    assert len(winners) == 1, said
    assert said[winners[0]]["claimed"] == "1"
    assert owners(TaskStore(tmp_path)) == {"1": (winners[0], "in_progress")}


def test_the_lowest_id_is_claimed_first_in_number_order(tmp_path: Path) -> None:
    store = board(tmp_path, *(f"task {n}" for n in range(1, 12)))
    for task_id in ("1", "2"):
        assert store.update(task_id, status="completed").ok
    # pending and free: 3..11; as text "10" and "11" sort before "3"
    assert claimed_id(next_claim(store, "ann")) == "3"
    assert claimed_id(next_claim(store, "bob")) == "4"


def test_a_task_is_not_claimed_before_its_blockers_are_completed(tmp_path: Path) -> None:
    store = board(tmp_path, "first", "second")
    assert store.create("third", blocked_by=["1", "2"]).keyword == "created"
    assert claimed_id(next_claim(store, "ann")) == "1"
    assert claimed_id(next_claim(store, "bob")) == "2"
    assert store.update("1", status="completed").ok
    waiting = next_claim(store, "ann")  # 3 still waits for 2
    assert isinstance(waiting, NothingToClaim) and waiting.failure is None, waiting
    assert owners(store)["3"] == ("", "pending")
    assert store.update("2", status="completed").ok
    assert claimed_id(next_claim(store, "ann")) == "3"
    assert owners(store)["3"] == ("ann", "in_progress")


def test_an_owner_holding_an_in_progress_task_claims_nothing(tmp_path: Path) -> None:
    store = board(tmp_path, "first", "second")
    assert claimed_id(next_claim(store, "ann")) == "1"
    result = next_claim(store, "ann")
    assert isinstance(result, NothingToClaim) and result.failure is None
    assert "holding task 1" in result.reason
    assert owners(store)["2"] == ("", "pending")
    assert claimed_id(next_claim(store, "bob")) == "2"  # another teammate still can


class StaleStore(TaskStore):
    """A store whose `list` is overtaken at once: right after the first read, `meanwhile`
    changes the list, as another teammate would between a claimer's read and its change."""

    def __init__(self, root: Path, meanwhile: Callable[[TaskStore], Outcome]) -> None:
        super().__init__(root)
        self.meanwhile: Callable[[TaskStore], Outcome] | None = meanwhile

    def list(self) -> Snapshot:
        snapshot = super().list()
        if self.meanwhile is not None:
            assert self.meanwhile(TaskStore(self.root)).ok
            self.meanwhile = None
        return snapshot


def test_a_task_taken_between_the_read_and_the_claim_is_skipped(tmp_path: Path) -> None:
    board(tmp_path, "first", "second")
    store = StaleStore(tmp_path, lambda other: other.update("1", status="in_progress", owner="bob"))
    assert claimed_id(next_claim(store, "ann")) == "2"
    assert owners(store) == {"1": ("bob", "in_progress"), "2": ("ann", "in_progress")}


def test_a_task_whose_blocker_reopened_after_the_read_is_skipped(tmp_path: Path) -> None:
    board(tmp_path, "first")
    setup = TaskStore(tmp_path)
    assert setup.create("second", blocked_by=["1"]).keyword == "created"
    assert setup.create("third").keyword == "created"
    assert setup.update("1", status="in_progress", owner="bob").ok
    assert setup.update("1", status="completed").ok
    store = StaleStore(tmp_path, lambda other: other.update("1", status="in_progress"))  # reopened
    assert claimed_id(next_claim(store, "ann")) == "3"
    assert owners(store)["2"] == ("", "pending")


def test_release_returns_its_tasks_to_pending_and_leaves_others_alone(tmp_path: Path) -> None:
    store = board(tmp_path, "a", "b", "c", "d", "e")
    for task_id, owner in (("1", "ann"), ("2", "bob"), ("3", "ann"), ("4", "ann")):
        assert store.update(task_id, status="in_progress", owner=owner).ok
    assert store.update("4", status="completed").ok  # ann's finished work stays finished
    assert release(store, "ann") == ["1", "3"]
    assert owners(store) == {
        "1": ("", "pending"),
        "2": ("bob", "in_progress"),
        "3": ("", "pending"),
        "4": ("ann", "completed"),
        "5": ("", "pending"),
    }
    assert release(store, "ann") == []
    assert claimed_id(next_claim(store, "cat")) == "1"  # released work is claimable again


def test_assignment_text_and_escaping(tmp_path: Path) -> None:
    store = board(tmp_path, "plain")
    assert store.create("a < b & c", description='say "hi" <now> & go').keyword == "created"
    plain, tricky = store.list().tasks
    assert assignment(plain) == '<task-assignment id="1">plain</task-assignment>'
    assert assignment(tricky) == (
        '<task-assignment id="2">a &lt; b &amp; c\n\n'
        'say "hi" &lt;now&gt; &amp; go</task-assignment>'
    )

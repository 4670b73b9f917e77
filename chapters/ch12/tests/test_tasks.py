"""The task store on its own: every rule as an `Outcome`, the files it writes, what it reads back.

A refused change is checked against the folder's bytes (`files`): not one file
may differ, and no file or folder may appear. The mirror invariant and "no id is
reused" are checked on the files themselves after every step of random sequences
of changes (hypothesis's state machine, `TaskGraphMachine`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from chapters.ch12.tasks import (
    LOCK_TIMEOUT,
    MAX_ACTIVE_FORM,
    MAX_DESCRIPTION,
    MAX_FILE_BYTES,
    MAX_OWNER,
    MAX_SUBJECT,
    MAX_TASKS,
    Outcome,
    Task,
    TaskStatus,
    TaskStore,
    list_name_problem,
)

FOLDER = ".tutorial/tasks/default"


def files(root: Path) -> dict[str, bytes | None]:
    """Every file below `root` with its bytes, and every folder (None): what a refusal keeps."""
    return {
        path.relative_to(root).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def task_file(root: Path, task_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / FOLDER / f"{task_id}.json").read_text("utf-8"))
    return data


def write_task(root: Path, name: str, data: dict[str, Any] | str | bytes) -> Path:
    """A task file written by hand (or by another program), as it is given."""
    path = root / FOLDER / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, dict):
        data = json.dumps(data)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def made(store: TaskStore, *subjects: str) -> list[str]:
    """Create tasks, each one created, and return their ids."""
    ids = []
    for subject in subjects:
        outcome = store.create(subject)
        assert outcome.keyword == "created", outcome.text
        assert outcome.task is not None
        ids.append(outcome.task.id)
    return ids


def edges_on_disk(root: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(blocker, blocked) pairs as the `blocks` lists say, and as the `blockedBy` lists say."""
    blocks, blocked_by = set(), set()
    for path in (root / FOLDER).glob("*.json"):
        data = json.loads(path.read_text("utf-8"))
        blocks |= {(data["id"], other) for other in data["blocks"]}
        blocked_by |= {(other, data["id"]) for other in data["blockedBy"]}
    return blocks, blocked_by


@pytest.fixture
def store(tmp_path: Path) -> TaskStore:
    return TaskStore(tmp_path)


@pytest.fixture
def diamond(store: TaskStore) -> TaskStore:
    """1 and 2, and 3 waiting for both."""
    made(store, "Write a", "Write b")
    assert store.create("Summarise", blocked_by=["1", "2"]).keyword == "created"
    return store


# --- the list's name and folder --------------------------------------------------------------


@pytest.mark.parametrize("name", ["default", "a", "x" * 64, "Team_2-review"])
def test_a_list_name_of_letters_digits_dash_and_underscore_is_accepted(
    tmp_path: Path, name: str
) -> None:
    assert list_name_problem(name) is None
    assert TaskStore(tmp_path, name).folder == tmp_path / ".tutorial" / "tasks" / name


@pytest.mark.parametrize("name", ["", "x" * 65, "a/b", "..", "a b", "über", "a\\b", "a.b"])
def test_any_other_list_name_is_a_value_error_at_construction(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match=r"task list name .* must be 1 to 64 characters"):
        TaskStore(tmp_path, name)
    assert files(tmp_path) == {}


def test_a_task_file_holds_exactly_claude_codes_keys_in_utf8_with_indent_2(
    store: TaskStore, tmp_path: Path
) -> None:
    store.create("Écrire le résumé", "Two lines\nof text", "Écrivant")
    data = (tmp_path / FOLDER / "1.json").read_bytes()
    expected = {
        "id": "1",
        "subject": "Écrire le résumé",
        "description": "Two lines\nof text",
        "activeForm": "Écrivant",
        "owner": "",
        "status": "pending",
        "blocks": [],
        "blockedBy": [],
        "metadata": {},
    }
    assert data == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert list(json.loads(data)) == list(expected)  # the keys, in this order


def test_the_folder_holds_task_files_the_high_water_mark_and_the_lock(
    store: TaskStore, tmp_path: Path
) -> None:
    made(store, "a", "b")
    assert sorted(os.listdir(tmp_path / FOLDER)) == [".highwatermark", ".lock", "1.json", "2.json"]
    assert (tmp_path / FOLDER / ".highwatermark").read_text("ascii") == "2"


def test_lists_of_other_names_are_other_folders(tmp_path: Path) -> None:
    made(TaskStore(tmp_path, "one"), "in one")
    assert TaskStore(tmp_path, "two").list().tasks == ()
    assert [t.subject for t in TaskStore(tmp_path, "one").list().tasks] == ["in one"]


# --- ids ---------------------------------------------------------------------------------------


def test_ids_are_1_2_3_in_creation_order(store: TaskStore) -> None:
    assert made(store, "a", "b", "c") == ["1", "2", "3"]


def test_the_id_of_a_deleted_task_is_never_handed_out_again(store: TaskStore) -> None:
    made(store, "a", "b", "c")
    assert store.update("3", status="deleted").keyword == "ok"
    assert store.update("2", status="deleted").keyword == "ok"
    assert made(store, "d") == ["4"]


def test_the_high_water_mark_is_the_larger_of_the_mark_and_the_largest_id_on_disk(
    store: TaskStore, tmp_path: Path
) -> None:
    made(store, "a")
    write_task(tmp_path, "7.json", {"id": "7", "subject": "put here by hand"})
    assert made(store, "b") == ["8"]
    (tmp_path / FOLDER / "8.json").unlink()
    (tmp_path / FOLDER / "7.json").unlink()
    assert made(store, "c") == ["9"]  # the mark (8) remembers what the files no longer show


def test_a_high_water_mark_that_is_not_a_number_is_a_warning_and_the_files_still_count(
    store: TaskStore, tmp_path: Path
) -> None:
    made(store, "a", "b")
    (tmp_path / FOLDER / ".highwatermark").write_text("lots", "ascii")
    assert store.list().warnings == (f"{FOLDER}/.highwatermark is not a number; ignored",)
    assert made(store, "c") == ["3"]
    assert store.list().warnings == ()  # the create wrote a good mark


@pytest.mark.parametrize("raw", ["3", " 3", "03"])
def test_an_id_is_read_as_its_number(diamond: TaskStore, raw: str) -> None:
    outcome = diamond.get(raw)
    assert outcome.keyword == "ok"
    assert outcome.task is not None and outcome.task.id == "3"


# --- blocks and blockedBy mirror each other ------------------------------------------------


def test_create_with_blocked_by_writes_both_ends(diamond: TaskStore, tmp_path: Path) -> None:
    assert task_file(tmp_path, "3")["blockedBy"] == ["1", "2"]
    assert task_file(tmp_path, "1")["blocks"] == ["3"]
    assert task_file(tmp_path, "2")["blocks"] == ["3"]


def test_add_blocks_and_add_blocked_by_write_both_ends(store: TaskStore, tmp_path: Path) -> None:
    made(store, "a", "b", "c")
    outcome = store.update("2", add_blocks=["3"], add_blocked_by=["1"])
    assert outcome.text == "ok: task 2 updated: now waits for 1, now blocks 3"
    assert [t.id for t in outcome.tasks] == ["2", "1", "3"]
    assert (task_file(tmp_path, "2")["blocks"], task_file(tmp_path, "2")["blockedBy"]) == (
        ["3"],
        ["1"],
    )
    assert task_file(tmp_path, "1")["blocks"] == ["2"]
    assert task_file(tmp_path, "3")["blockedBy"] == ["2"]


def test_a_dependency_that_already_exists_changes_nothing(
    diamond: TaskStore, tmp_path: Path
) -> None:
    before = files(tmp_path)
    outcome = diamond.update("3", add_blocked_by=["1"])
    assert outcome.text == "ok: task 3 unchanged (it already says that)"
    assert files(tmp_path) == before


def test_deleting_a_task_removes_its_file_and_its_id_from_every_list(
    diamond: TaskStore, tmp_path: Path
) -> None:
    diamond.create("After", blocked_by=["3"])
    outcome = diamond.update("3", status="deleted")
    assert outcome.text == "ok: task 3 deleted; unblocked: 4"
    assert not (tmp_path / FOLDER / "3.json").exists()
    assert task_file(tmp_path, "1")["blocks"] == task_file(tmp_path, "2")["blocks"] == []
    assert task_file(tmp_path, "4")["blockedBy"] == []
    assert [t.id for t in diamond.list().tasks] == ["1", "2", "4"]


def test_deleted_is_never_a_stored_status_and_other_fields_of_a_delete_are_not_applied(
    diamond: TaskStore, tmp_path: Path
) -> None:
    outcome = diamond.update("1", status="deleted", subject="renamed", owner="me")
    assert outcome.text == ("ok: task 1 deleted (not applied, the task is gone: owner, subject)")
    assert all(t.status in set(TaskStatus) for t in diamond.list().tasks)
    assert "deleted" not in {m.value for m in TaskStatus}


def test_a_list_edited_by_hand_on_one_end_reads_as_both_ends(
    store: TaskStore, tmp_path: Path
) -> None:
    made(store, "a", "b")
    data = task_file(tmp_path, "2")
    data["blockedBy"] = ["1", "99"]  # 1 does not say it blocks 2; 99 does not exist
    write_task(tmp_path, "2.json", data)
    snapshot = store.list()
    first, second = snapshot.tasks
    assert (first.blocks, second.blockedBy) == (["2"], ["1"])
    assert store.update("1", subject="A").keyword == "ok"  # written: both ends now
    assert task_file(tmp_path, "1")["blocks"] == ["2"]


# --- not_found and invalid_arguments --------------------------------------------------------


def test_an_unknown_task_id_is_not_found_listing_the_ids_there_are(diamond: TaskStore) -> None:
    for outcome in (diamond.get("9"), diamond.update("9", status="completed")):
        assert outcome == Outcome("not_found", "not_found: there is no task 9. The tasks: 1, 2, 3.")


def test_a_change_to_a_list_that_does_not_exist_is_not_found_and_makes_nothing(
    store: TaskStore, tmp_path: Path
) -> None:
    outcome = store.update("1", status="completed")
    assert outcome.text == "not_found: there is no task 1. The task list is empty."
    assert store.get("1").keyword == "not_found"
    assert files(tmp_path) == {}


def test_an_unknown_id_in_blocked_by_is_invalid_arguments_naming_it(diamond: TaskStore) -> None:
    outcome = diamond.create("x", blocked_by=["1", "8", "9"])
    assert outcome.text == (
        "invalid_arguments: blockedBy names tasks 8, 9, which do not exist. "
        "The tasks: 1, 2, 3. No task was created."
    )


def test_an_unknown_id_in_add_blocked_by_or_add_blocks_is_invalid_arguments_naming_it(
    diamond: TaskStore,
) -> None:
    outcome = diamond.update("1", add_blocked_by=["8"], add_blocks=["2", "9"])
    assert outcome.text == (
        "invalid_arguments: addBlockedBy names task 8, which does not exist; addBlocks names "
        "task 9, which does not exist. The tasks: 1, 2, 3. Nothing was changed."
    )


def test_a_dependency_that_closes_a_cycle_is_invalid_arguments_naming_the_path(
    store: TaskStore,
) -> None:
    made(store, "a", "b", "c")
    assert store.update("2", add_blocked_by=["1"]).keyword == "ok"
    assert store.update("1", add_blocked_by=["2"]).text == (
        "invalid_arguments: task 2 cannot block task 1: that closes a cycle, 2 → 1 → 2 "
        "(→ means blocks). Nothing was changed."
    )
    assert store.update("3", add_blocked_by=["2"]).keyword == "ok"
    assert store.update("3", add_blocks=["1"]).text == (
        "invalid_arguments: task 3 cannot block task 1: that closes a cycle, 3 → 1 → 2 → 3 "
        "(→ means blocks). Nothing was changed."
    )


def test_a_task_cannot_block_itself(diamond: TaskStore) -> None:
    for name, outcome in [
        ("addBlockedBy", diamond.update("2", add_blocked_by=["2"])),
        ("addBlocks", diamond.update("2", add_blocks=["1", "2"])),
    ]:
        assert outcome.text == (
            f"invalid_arguments: task 2 cannot block itself ({name} names 2). Nothing was changed."
        )


def test_a_status_outside_the_four_is_invalid_arguments(diamond: TaskStore) -> None:
    assert diamond.update("1", status="done").text == (
        "invalid_arguments: status 'done' is not one of pending, in_progress, completed, "
        "deleted. Nothing was changed."
    )


# --- blocked, completed, claims ------------------------------------------------------------


def test_in_progress_on_a_task_with_unfinished_blockers_is_blocked_naming_them(
    diamond: TaskStore,
) -> None:
    diamond.update("1", status="completed")
    assert diamond.update("3", status="in_progress").text == (
        "blocked: task 3 waits for 2, not completed yet. Finish those first, or start a task "
        "that is ready. Nothing was changed."
    )
    diamond.update("2", status="completed")
    assert diamond.update("3", status="in_progress").keyword == "ok"


def test_a_blocker_added_in_the_same_call_blocks_it_too(store: TaskStore) -> None:
    made(store, "a", "b")
    outcome = store.update("2", status="in_progress", add_blocked_by=["1"])
    assert outcome.keyword == "blocked"
    assert store.list().tasks[1].blockedBy == []


def test_completing_a_task_names_the_tasks_it_unblocked(diamond: TaskStore) -> None:
    diamond.create("Also after 1", blocked_by=["1"])
    assert diamond.update("2", status="completed").text == (
        "ok: task 2 updated: status pending → completed; it unblocked no task"
    )
    assert diamond.update("1", status="completed").text == (
        "ok: task 1 updated: status pending → completed; unblocked: 3, 4"
    )


def test_completing_an_already_completed_task_changes_nothing(
    diamond: TaskStore, tmp_path: Path
) -> None:
    diamond.update("1", status="completed")
    before = files(tmp_path)
    assert diamond.update("1", status="completed").text == (
        "ok: task 1 unchanged (it already says that)"
    )
    assert files(tmp_path) == before


def test_an_owner_set_while_another_owner_holds_it_is_already_claimed(diamond: TaskStore) -> None:
    assert diamond.update("1", owner="ann", status="in_progress").text == (
        "ok: task 1 updated: status pending → in_progress, owner ann"
    )
    assert diamond.update("1", owner="bob").text == (
        "already_claimed: task 1 is owned by ann; nothing was changed. Pick another task that "
        "nobody owns."
    )
    assert diamond.update("1", owner="ann").keyword == "ok"  # the owner again: no change
    assert diamond.update("1", owner="").text == "ok: task 1 updated: owner (nobody)"
    assert diamond.update("1", owner="bob").keyword == "ok"  # released: free to claim


def test_any_change_to_a_completed_tasks_owner_is_already_resolved(diamond: TaskStore) -> None:
    diamond.update("1", owner="ann", status="completed")
    for owner in ("bob", ""):
        assert diamond.update("1", owner=owner).text == (
            "already_resolved: task 1 is completed; its owner (ann) no longer changes. "
            "Nothing was changed."
        )
    assert diamond.update("1", owner="ann").keyword == "ok"  # the same owner is no change


def test_owner_and_in_progress_are_set_together_or_not_at_all(
    diamond: TaskStore, tmp_path: Path
) -> None:
    before = files(tmp_path)
    assert diamond.update("3", owner="ann", status="in_progress").keyword == "blocked"
    assert files(tmp_path) == before  # not the owner alone
    diamond.update("1", owner="ann")
    before = files(tmp_path)
    assert diamond.update("1", owner="bob", status="in_progress").keyword == "already_claimed"
    assert files(tmp_path) == before  # not the status alone


def test_other_fields_are_changed_and_said(diamond: TaskStore, tmp_path: Path) -> None:
    outcome = diamond.update("1", subject="New", description="d", active_form="Doing")
    assert outcome.text == "ok: task 1 updated: subject, description, activeForm"
    data = task_file(tmp_path, "1")
    assert (data["subject"], data["description"], data["activeForm"]) == ("New", "d", "Doing")


def test_metadata_written_by_another_program_is_kept(store: TaskStore, tmp_path: Path) -> None:
    made(store, "a")
    data = task_file(tmp_path, "1") | {"metadata": {"ticket": 42}}
    write_task(tmp_path, "1.json", data)
    store.update("1", status="completed")
    assert task_file(tmp_path, "1")["metadata"] == {"ticket": 42}


# --- bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"subject": ""}, "subject is empty; it must say what the task is"),
        ({"subject": "   "}, "subject is empty; it must say what the task is"),
        ({"subject": "s" * (MAX_SUBJECT + 1)}, "subject is 201 characters; at most 200"),
        (
            {"subject": "s", "description": "d" * (MAX_DESCRIPTION + 1)},
            "description is 4,001 characters; at most 4,000",
        ),
        (
            {"subject": "s", "active_form": "a" * (MAX_ACTIVE_FORM + 1)},
            "activeForm is 201 characters; at most 200",
        ),
    ],
)
def test_create_beyond_a_bound_is_invalid_arguments_and_makes_nothing(
    store: TaskStore, tmp_path: Path, arguments: dict[str, str], problem: str
) -> None:
    outcome = store.create(**arguments)
    assert outcome.text == f"invalid_arguments: {problem}. No task was created."
    assert files(tmp_path) == {}


def test_create_at_every_bound_is_created(store: TaskStore) -> None:
    outcome = store.create("s" * MAX_SUBJECT, "d" * MAX_DESCRIPTION, "a" * MAX_ACTIVE_FORM)
    assert outcome.keyword == "created"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"subject": ""}, "subject is empty; it must say what the task is"),
        ({"subject": "s" * (MAX_SUBJECT + 1)}, "subject is 201 characters; at most 200"),
        ({"description": "d" * (MAX_DESCRIPTION + 1)}, "description is 4,001 characters"),
        ({"active_form": "a" * (MAX_ACTIVE_FORM + 1)}, "activeForm is 201 characters"),
        ({"owner": "o" * (MAX_OWNER + 1)}, "owner is 65 characters; at most 64"),
    ],
)
def test_update_beyond_a_bound_is_invalid_arguments(
    diamond: TaskStore, arguments: dict[str, str], problem: str
) -> None:
    outcome = diamond.update("1", **arguments)
    assert outcome.keyword == "invalid_arguments"
    assert outcome.text.startswith(f"invalid_arguments: {problem}")


def test_a_list_holds_at_most_1000_tasks(store: TaskStore, tmp_path: Path) -> None:
    for number in range(1, MAX_TASKS):
        write_task(tmp_path, f"{number}.json", {"id": str(number), "subject": "s"})
    assert made(store, "the thousandth") == [str(MAX_TASKS)]
    outcome = store.create("one more")
    assert outcome.text == (
        "invalid_arguments: the task list default already holds 1,000 tasks, the most a list "
        "holds; delete finished ones first. No task was created."
    )
    store.update("1", status="deleted")
    assert made(store, "now there is room") == ["1001"]


def test_a_task_file_over_64_kb_is_left_out_as_corrupt(store: TaskStore, tmp_path: Path) -> None:
    big = {"id": "1", "subject": "s", "description": "d" * MAX_FILE_BYTES}
    write_task(tmp_path, "1.json", big)
    snapshot = store.list()
    assert snapshot.tasks == ()
    assert snapshot.warnings == (
        f"{FOLDER}/1.json: it is more than 65,536 bytes, more than any task holds; "
        "left out of the task list",
    )


# --- corrupt files --------------------------------------------------------------------------

CORRUPT = {
    "not JSON": ("2.json", b"{not json", "not JSON (Invalid JSON: key must be a string"),
    "wrong shape": ("2.json", b'{"id": "2"}', "not a task (subject: Field required)"),
    "an unknown key": (
        "2.json",
        b'{"id": "2", "subject": "s", "extra": 1}',
        "not a task (extra: Extra inputs are not permitted)",
    ),
    "a number for the id": (
        "2.json",
        b'{"id": 2, "subject": "s"}',
        "not a task (id: Input should be a valid string)",
    ),
    "an id not its name": (
        "2.json",
        b'{"id": "5", "subject": "s"}',
        "its id '5' is not its file's name",
    ),
    "not UTF-8": ("2.json", b'{"id": "2", "subject": "\xff"}', "not JSON ("),
    "a name that is no id": ("notes.json", b"{}", "its name is not a task id (<number>.json)"),
    "a leading zero": (
        "007.json",
        b'{"id": "007", "subject": "s"}',
        "its name is not a task id (ids are 1, 2, 3, ... with no leading zero)",
    ),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_file_is_left_out_with_one_warning_naming_it(
    store: TaskStore, tmp_path: Path, case: str
) -> None:
    made(store, "good")
    name, data, why = CORRUPT[case]
    write_task(tmp_path, name, data)
    snapshot = store.list()
    assert [t.subject for t in snapshot.tasks] == ["good"]
    (warning,) = snapshot.warnings
    assert warning.startswith(f"{FOLDER}/{name}: {why}")
    assert warning.endswith("; left out of the task list")


def test_a_corrupt_file_is_never_overwritten_and_create_skips_its_id(
    store: TaskStore, tmp_path: Path
) -> None:
    made(store, "a")
    path = write_task(tmp_path, "2.json", b"{broken")
    assert made(store, "b", "c") == ["3", "4"]
    assert store.update("2", status="completed").keyword == "not_found"
    assert store.update("2", status="deleted").keyword == "not_found"
    assert store.create("d", blocked_by=["2"]).keyword == "invalid_arguments"
    assert path.read_bytes() == b"{broken"
    assert len(store.list().warnings) == 1  # and the run goes on


def test_get_on_a_corrupt_task_says_why(store: TaskStore, tmp_path: Path) -> None:
    made(store, "a")
    write_task(tmp_path, "2.json", b"[]")
    assert store.get("2").text.startswith(
        "not_found: there is no task 2. The tasks: 1. Its file is there but cannot be used: "
        f"{FOLDER}/2.json: not a task"
    )


def test_a_folder_named_like_a_task_file_is_left_out(store: TaskStore, tmp_path: Path) -> None:
    made(store, "a")
    (tmp_path / FOLDER / "2.json").mkdir()
    (warning,) = store.list().warnings
    assert warning.startswith(f"{FOLDER}/2.json: cannot be read (")
    assert made(store, "b") == ["3"]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_task_folder_that_links_out_of_the_workspace_is_neither_read_nor_written(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / ".tutorial").mkdir(parents=True)
    outside.mkdir()
    (workspace / ".tutorial" / "tasks").symlink_to(outside, target_is_directory=True)
    store = TaskStore(workspace)
    outcome = store.create("a")
    assert outcome.keyword == "error"
    assert outcome.text.startswith("error: the task list default could not be changed (")
    assert "leads outside" in outcome.text
    assert list(outside.iterdir()) == []
    (warning,) = store.list().warnings
    assert warning.startswith(f"{FOLDER}/ cannot be read (")


# --- refusals change nothing ----------------------------------------------------------------

REFUSALS: dict[str, Callable[[TaskStore], Outcome]] = {
    "a cycle": lambda s: s.update("1", add_blocked_by=["3"]),
    "an unknown id": lambda s: s.update("9", status="completed"),
    "an unknown dependency": lambda s: s.update("1", add_blocks=["9"]),
    "an unknown blocker": lambda s: s.create("x", blocked_by=["9"]),
    "blocking itself": lambda s: s.update("1", add_blocks=["1"]),
    "blocked": lambda s: s.update("3", owner="bob", status="in_progress"),
    "already_claimed": lambda s: s.update("1", owner="bob", subject="changed"),
    "already_resolved": lambda s: s.update("2", owner="bob", description="changed"),
    "a bound": lambda s: s.create("s" * (MAX_SUBJECT + 1)),
    "a bad status": lambda s: s.update("1", status="done", subject="changed"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refused_change_leaves_every_file_byte_for_byte(
    diamond: TaskStore, tmp_path: Path, case: str
) -> None:
    diamond.update("1", owner="ann", status="in_progress")
    diamond.update("2", owner="ann", status="completed")
    before = files(tmp_path)
    outcome = REFUSALS[case](diamond)
    assert not outcome.ok
    assert files(tmp_path) == before


def test_a_change_waits_for_the_lock_then_says_the_list_is_busy_and_changes_nothing(
    diamond: TaskStore, tmp_path: Path
) -> None:
    busy = TaskStore(tmp_path, lock_timeout=0.05)
    before = files(tmp_path)
    with FileLock(tmp_path / FOLDER / ".lock", timeout=1):  # another holder of the same lock
        outcomes = [
            busy.create("x"),
            busy.update("1", status="completed"),
            busy.update("1", status="deleted"),
        ]
        assert busy.list().tasks == diamond.list().tasks  # reads take no lock
    expected = (
        "error: the task list default is locked by another process (waited 0.05 s); try again"
    )
    assert [(o.keyword, o.text) for o in outcomes] == [("error", expected)] * 3
    assert files(tmp_path) == before
    assert busy.create("x").keyword == "created"  # released: the next change goes through


def test_the_lock_waits_10_seconds_by_default(tmp_path: Path) -> None:
    assert LOCK_TIMEOUT == 10.0
    assert TaskStore(tmp_path).lock_timeout == LOCK_TIMEOUT


# --- persistence and reading ------------------------------------------------------------------


def test_a_second_store_on_the_same_folder_sees_everything(
    diamond: TaskStore, tmp_path: Path
) -> None:
    diamond.update("1", owner="ann", status="completed", description="done well")
    diamond.update("2", status="deleted")
    again = TaskStore(tmp_path)
    assert again.list() == diamond.list()
    assert [(t.id, t.status, t.owner, t.blockedBy) for t in again.list().tasks] == [
        ("1", TaskStatus.COMPLETED, "ann", []),
        ("3", TaskStatus.PENDING, "", ["1"]),
    ]
    assert again.list().tasks[0].description == "done well"
    assert made(again, "next") == ["4"]
    assert diamond.get("4").keyword == "ok"


def test_list_sorts_by_number_not_by_name(store: TaskStore) -> None:
    made(store, *(f"t{n}" for n in range(1, 12)))
    assert [t.id for t in store.list().tasks] == [str(n) for n in range(1, 12)]


def test_no_list_yet_is_an_empty_snapshot_without_warnings(tmp_path: Path) -> None:
    assert TaskStore(tmp_path / "missing").list().tasks == ()
    assert TaskStore(tmp_path / "missing").list().warnings == ()


def test_get_shows_the_task_in_full(diamond: TaskStore) -> None:
    diamond.update("1", status="completed", owner="ann", description="Both parts.")
    assert diamond.get("1").text == (
        "ok: task 1 [completed] Write a\ndescription: Both parts.\nowner: ann\nblocks: 3"
    )
    assert diamond.get("3").text == (
        "ok: task 3 [pending] Summarise\nowner: (nobody)\nwaits for: 1 [completed], 2 [pending]"
        "\nready: no, it waits for 2"
    )


def test_the_snapshot_says_what_waits_and_what_is_ready(diamond: TaskStore) -> None:
    diamond.update("1", status="completed")
    snapshot = diamond.list()
    one, two, three = snapshot.tasks
    assert snapshot.waiting_for(three) == ("2",)
    assert [snapshot.is_ready(t) for t in (one, two, three)] == [False, True, False]
    assert snapshot.as_json()[2] == Task(
        id="3", subject="Summarise", blockedBy=["1", "2"]
    ).model_dump(mode="json")


def test_created_says_what_the_new_task_waits_for(diamond: TaskStore) -> None:
    assert diamond.create("Alone").text == "created task 4: Alone"
    assert diamond.create("Later", blocked_by=["3", 1]).text == (  # type: ignore[list-item]
        "created task 5: Later; waits for 1, 3 (it can start when 1, 3 are completed)"
    )
    diamond.update("4", status="completed")
    assert diamond.create("Now", blocked_by=["4"]).text == (
        "created task 6: Now; waits for 4 (all completed: it is ready)"
    )


# --- random sequences: the mirror, and ids never reused ---------------------------------------

IDS = st.integers(min_value=1, max_value=12).map(str)


class TaskGraphMachine(RuleBasedStateMachine):
    """Random changes to one list; after each, the files are checked, not the store's word."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="tasks-"))
        self.store = TaskStore(self.root)
        self.handed_out: list[int] = []  # every id create returned, in order
        self.deleted: set[str] = set()

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def changed(self, outcome: Outcome, before: dict[str, bytes | None]) -> None:
        if not outcome.ok:
            assert files(self.root) == before, outcome.text

    @rule(subject=st.text(max_size=5), blockers=st.lists(IDS, max_size=3))
    def create(self, subject: str, blockers: list[str]) -> None:
        before = files(self.root)
        outcome = self.store.create(f"task {subject}", blocked_by=blockers)
        self.changed(outcome, before)
        if outcome.ok:
            assert outcome.task is not None
            self.handed_out.append(int(outcome.task.id))

    @rule(task=IDS, blockers=st.lists(IDS, max_size=2), blocked=st.lists(IDS, max_size=2))
    def depend(self, task: str, blockers: list[str], blocked: list[str]) -> None:
        before = files(self.root)
        outcome = self.store.update(task, add_blocked_by=blockers, add_blocks=blocked)
        self.changed(outcome, before)

    @rule(
        task=IDS,
        status=st.sampled_from(["pending", "in_progress", "completed", None]),
        owner=st.sampled_from(["ann", "bob", "", None]),
    )
    def change(self, task: str, status: str | None, owner: str | None) -> None:
        before = files(self.root)
        outcome = self.store.update(task, status=status, owner=owner)
        self.changed(outcome, before)

    @precondition(lambda self: bool(self.handed_out))
    @rule(task=IDS)
    def delete(self, task: str) -> None:
        before = files(self.root)
        outcome = self.store.update(task, status="deleted")
        self.changed(outcome, before)
        if outcome.ok:
            self.deleted.add(task)

    @invariant()
    def blocks_and_blocked_by_mirror_each_other(self) -> None:
        if not (self.root / FOLDER).exists():
            return
        blocks, blocked_by = edges_on_disk(self.root)
        assert blocks == blocked_by
        there = {path.stem for path in (self.root / FOLDER).glob("*.json")}
        assert {x for edge in blocks for x in edge} <= there
        assert all(a != b for a, b in blocks)

    @invariant()
    def no_id_is_reused(self) -> None:
        assert self.handed_out == list(range(1, len(self.handed_out) + 1))
        there = {path.stem for path in (self.root / FOLDER).glob("*.json")}
        assert not there & self.deleted

    @invariant()
    def the_graph_has_no_cycle(self) -> None:
        snapshot = self.store.list()
        assert snapshot.warnings == ()
        done: set[str] = set()
        remaining = {t.id: set(t.blockedBy) for t in snapshot.tasks}
        while remaining:  # peel off tasks whose blockers are all peeled: a cycle never peels
            free = [task for task, blockers in remaining.items() if blockers <= done]
            assert free, f"a cycle among {sorted(remaining)}"
            done |= set(free)
            for task in free:
                del remaining[task]


TaskGraphMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=25, deadline=None
)
test_random_changes_keep_the_mirror_and_never_reuse_an_id = TaskGraphMachine.TestCase

"""The four task tools as the model meets them: through `ToolSnapshot.prepare`, then `invoke`.

Their names and argument names are Claude Code's; an id may be "3" or 3; an
argument a tool does not have is `invalid_arguments` before anything runs; and
each of the store's keywords reaches the model as the first word of the result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from chapters.ch12.task_tools import (
    TASK_CREATE,
    TASK_GET,
    TASK_LIST,
    TASK_UPDATE,
    make_task_tools,
)
from chapters.ch12.tasks import TaskStore
from shared.messages import FunctionCall, ToolCall
from shared.tools import SideEffect, Status, ToolRegistry, ToolResult

REJECTED = "invalid_arguments: {tool} rejected its arguments; the call did not run. Problems: "


def call(store: TaskStore, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
    """One call as the loop's step 4 runs it: prepare (look up, validate), then invoke."""
    registry = ToolRegistry(make_task_tools(store))
    text = json.dumps(arguments or {})
    prepared = registry.snapshot().prepare(
        ToolCall(id="c1", function=FunctionCall(name=tool, arguments=text))
    )
    return prepared if isinstance(prepared, ToolResult) else prepared.invoke()


@pytest.fixture
def store(tmp_path: Path) -> TaskStore:
    return TaskStore(tmp_path)


@pytest.fixture
def diamond(store: TaskStore) -> TaskStore:
    for arguments in (
        {"subject": "Write a"},
        {"subject": "Write b"},
        {"subject": "Summarise", "blockedBy": ["1", "2"]},
    ):
        assert call(store, TASK_CREATE, arguments).ok
    return store


# --- what the model sees --------------------------------------------------------------------


def test_the_four_tools_have_claude_codes_names_and_argument_names(store: TaskStore) -> None:
    tools = {tool.name: tool for tool in make_task_tools(store)}
    assert list(tools) == [TASK_CREATE, TASK_UPDATE, TASK_GET, TASK_LIST]
    properties = {name: list(tool.parameters["properties"]) for name, tool in tools.items()}
    assert properties == {
        "task_create": ["subject", "description", "activeForm", "blockedBy"],
        "task_update": [
            "taskId",
            "status",
            "owner",
            "subject",
            "description",
            "activeForm",
            "addBlockedBy",
            "addBlocks",
        ],
        "task_get": ["taskId"],
        "task_list": [],
    }
    required = {name: tool.parameters.get("required", []) for name, tool in tools.items()}
    assert required == {
        "task_create": ["subject"],
        "task_update": ["taskId"],
        "task_get": ["taskId"],
        "task_list": [],
    }
    assert all(tool.parameters["additionalProperties"] is False for tool in tools.values())


def test_they_change_only_state_and_only_the_reads_run_beside_other_calls(
    store: TaskStore,
) -> None:
    tools = make_task_tools(store)
    assert {tool.side_effect for tool in tools} == {SideEffect.STATE}
    assert not any(tool.side_effect.needs_approval for tool in tools)
    assert {tool.name for tool in tools if tool.concurrency_safe} == {TASK_GET, TASK_LIST}


def test_status_offers_the_four_words(store: TaskStore) -> None:
    update = make_task_tools(store)[1]
    (choices,) = [
        option["enum"]
        for option in update.parameters["properties"]["status"]["anyOf"]
        if "enum" in option
    ]
    assert choices == ["pending", "in_progress", "completed", "deleted"]


# --- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (TASK_CREATE, {"subject": "s", "title": "t"}),
        (TASK_UPDATE, {"taskId": "1", "task_id": "1"}),
        (TASK_GET, {"taskId": "1", "verbose": True}),
        (TASK_LIST, {"status": "pending"}),
    ],
)
def test_an_extra_key_is_invalid_arguments_and_nothing_runs(
    diamond: TaskStore, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    extra = next(key for key in arguments if key not in ("subject", "taskId"))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = call(diamond, tool, arguments)
    assert (result.status, result.keyword) == (Status.INVALID, "invalid_arguments")
    assert result.content == (
        REJECTED.format(tool=tool) + f"{extra}: Extra inputs are not permitted."
    )
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("task_id", ["3", 3])
def test_a_task_id_may_be_a_string_or_a_number(diamond: TaskStore, task_id: object) -> None:
    assert call(diamond, TASK_GET, {"taskId": task_id}).content.startswith("ok: task 3 [pending]")
    result = call(diamond, TASK_UPDATE, {"taskId": task_id, "subject": "Sum up"})
    assert result.content == "ok: task 3 updated: subject"


def test_ids_in_dependency_lists_may_be_strings_or_numbers(diamond: TaskStore) -> None:
    created = call(diamond, TASK_CREATE, {"subject": "Ship", "blockedBy": [3, "1"]})
    assert created.content.startswith("created task 4: Ship; waits for 1, 3")
    result = call(diamond, TASK_UPDATE, {"taskId": 4, "addBlockedBy": [2], "addBlocks": []})
    assert result.content == "ok: task 4 updated: now waits for 2"
    call(diamond, TASK_CREATE, {"subject": "Celebrate"})
    assert call(diamond, TASK_UPDATE, {"taskId": "4", "addBlocks": [5]}).ok
    assert diamond.list().tasks[3].blockedBy == ["1", "2", "3"]
    assert diamond.list().tasks[3].blocks == ["5"]


def test_a_status_the_tool_does_not_know_is_invalid_arguments(diamond: TaskStore) -> None:
    result = call(diamond, TASK_UPDATE, {"taskId": "1", "status": "done"})
    assert result.keyword == "invalid_arguments"
    assert result.content.startswith(REJECTED.format(tool=TASK_UPDATE) + "status: Input should be")


def test_a_missing_subject_or_task_id_is_invalid_arguments(store: TaskStore) -> None:
    assert call(store, TASK_CREATE, {}).content == (
        REJECTED.format(tool=TASK_CREATE) + "subject: Field required."
    )
    assert call(store, TASK_GET, {}).content == (
        REJECTED.format(tool=TASK_GET) + "taskId: Field required."
    )


# --- each keyword's text ----------------------------------------------------------------------


def test_created(store: TaskStore) -> None:
    result = call(store, TASK_CREATE, {"subject": "  Write a  ", "activeForm": "Writing a"})
    assert (result.status, result.keyword, result.content) == (
        Status.OK,
        "ok",
        "created task 1: Write a",
    )


def test_ok_with_what_completing_unblocked(diamond: TaskStore) -> None:
    call(diamond, TASK_UPDATE, {"taskId": "1", "status": "completed"})
    result = call(diamond, TASK_UPDATE, {"taskId": "2", "status": "completed"})
    assert (result.status, result.content) == (
        Status.OK,
        "ok: task 2 updated: status pending → completed; unblocked: 3",
    )


def test_not_found(diamond: TaskStore) -> None:
    for tool in (TASK_GET, TASK_UPDATE):
        result = call(diamond, tool, {"taskId": "7"})
        assert (result.status, result.keyword, result.content) == (
            Status.FAILED,
            "not_found",
            "not_found: there is no task 7. The tasks: 1, 2, 3.",
        )


def test_invalid_arguments_from_the_store(diamond: TaskStore) -> None:
    result = call(diamond, TASK_UPDATE, {"taskId": "1", "addBlockedBy": ["3"]})
    assert (result.status, result.keyword, result.content) == (
        Status.INVALID,
        "invalid_arguments",
        "invalid_arguments: task 3 cannot block task 1: that closes a cycle, 3 → 1 → 3 "
        "(→ means blocks). Nothing was changed.",
    )


def test_blocked(diamond: TaskStore) -> None:
    result = call(diamond, TASK_UPDATE, {"taskId": "3", "status": "in_progress"})
    assert (result.status, result.keyword, result.content) == (
        Status.FAILED,
        "blocked",
        "blocked: task 3 waits for 1, 2, not completed yet. Finish those first, or start a "
        "task that is ready. Nothing was changed.",
    )


def test_already_claimed(diamond: TaskStore) -> None:
    call(diamond, TASK_UPDATE, {"taskId": "1", "owner": "ann", "status": "in_progress"})
    result = call(diamond, TASK_UPDATE, {"taskId": "1", "owner": "bob", "status": "in_progress"})
    assert (result.status, result.keyword, result.content) == (
        Status.FAILED,
        "already_claimed",
        "already_claimed: task 1 is owned by ann; nothing was changed. Pick another task that "
        "nobody owns.",
    )


def test_already_resolved(diamond: TaskStore) -> None:
    call(diamond, TASK_UPDATE, {"taskId": "1", "owner": "ann", "status": "completed"})
    result = call(diamond, TASK_UPDATE, {"taskId": "1", "owner": "bob"})
    assert (result.status, result.keyword, result.content) == (
        Status.FAILED,
        "already_resolved",
        "already_resolved: task 1 is completed; its owner (ann) no longer changes. Nothing "
        "was changed.",
    )


def test_error_when_the_list_is_locked(diamond: TaskStore, tmp_path: Path) -> None:
    busy = TaskStore(tmp_path, lock_timeout=0.01)
    with FileLock(busy.folder / ".lock", timeout=1):
        result = call(busy, TASK_CREATE, {"subject": "x"})
        listed = call(busy, TASK_LIST)
    assert (result.status, result.keyword, result.content) == (
        Status.FAILED,
        "error",
        "error: the task list default is locked by another process (waited 0.01 s); try again",
    )
    assert listed.ok  # a read takes no lock


def test_deleted(diamond: TaskStore) -> None:
    result = call(diamond, TASK_UPDATE, {"taskId": "1", "status": "deleted"})
    assert result.content == "ok: task 1 deleted"
    assert [t.id for t in diamond.list().tasks] == ["2", "3"]


# --- task_get and task_list -------------------------------------------------------------------


def test_task_get_shows_one_task_in_full(diamond: TaskStore) -> None:
    call(diamond, TASK_UPDATE, {"taskId": "2", "description": "Part b.", "activeForm": "Writing"})
    assert call(diamond, TASK_GET, {"taskId": "2"}).content == (
        "ok: task 2 [pending] Write b\ndescription: Part b.\nactiveForm: Writing\n"
        "owner: (nobody)\nblocks: 3\nready: yes, nothing unfinished blocks it"
    )


def test_task_list_is_one_line_per_task_with_owner_and_what_it_waits_for(
    diamond: TaskStore,
) -> None:
    call(diamond, TASK_UPDATE, {"taskId": "1", "owner": "ann", "status": "completed"})
    call(diamond, TASK_UPDATE, {"taskId": "2", "owner": "bob", "status": "in_progress"})
    assert call(diamond, TASK_LIST).content == (
        "ok: 3 tasks, 0 ready to start\n"
        "1 [completed] Write a (owner: ann)\n"
        "2 [in_progress] Write b (owner: bob)\n"
        "3 [pending] Summarise waits for: 2"
    )


def test_task_list_ends_with_the_files_it_left_out(diamond: TaskStore) -> None:
    (diamond.folder / "4.json").write_text("oops", encoding="utf-8")
    lines = call(diamond, TASK_LIST).content.splitlines()
    assert lines[0] == "ok: 3 tasks, 2 ready to start"
    assert lines[-1].startswith("warning: .tutorial/tasks/default/4.json: not JSON (")
    assert len(lines) == 5


def test_task_list_of_an_empty_list(store: TaskStore) -> None:
    assert call(store, TASK_LIST).content == "ok: the task list is empty"
    call(store, TASK_CREATE, {"subject": "only"})
    assert call(store, TASK_LIST).content == "ok: 1 task, 1 ready to start\n1 [pending] only"

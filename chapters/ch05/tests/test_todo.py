"""The plan on its own: todo_write's rules, what it answers, its schema, and `TodoPlan`.

Every call goes through `ToolSnapshot.prepare` and then `invoke`, as the loop's
step 4 does, so a rule is tested as the model meets it: an `invalid_arguments`
result that names the problem, and a plan that did not change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from chapters.ch05.tests.support import FINISHED, FRESH, HALFWAY, REMINDER_PREFIX, item
from chapters.ch05.todo import MAX_ITEMS, TODO_TOOL, Status, TodoItem, TodoPlan, make_todo_tool
from shared.messages import FunctionCall, ToolCall
from shared.tools import ToolRegistry, ToolResult, ToolSnapshot, function_definition

REJECTED = "invalid_arguments: todo_write rejected its arguments; the call did not run. Problems: "


def snapshot_for(plan: TodoPlan) -> ToolSnapshot:
    return ToolRegistry([make_todo_tool(plan)]).snapshot()


def write(plan: TodoPlan, arguments: Mapping[str, Any] | str) -> ToolResult:
    """One todo_write call as step 4 runs it: prepare (validate), then invoke."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = ToolCall(id="c1", function=FunctionCall(name=TODO_TOOL, arguments=text))
    prepared = snapshot_for(plan).prepare(call)
    return prepared if isinstance(prepared, ToolResult) else prepared.invoke()


def items_of(plan: TodoPlan) -> list[dict[str, str]]:
    return plan.as_json()


def planned(*items: Mapping[str, Any]) -> TodoPlan:
    """A plan that already holds `items`, written through the tool."""
    plan = TodoPlan()
    assert write(plan, {"todos": list(items)}).ok
    return plan


# --- 1. the rules, as the model meets them -------------------------------------------------


def test_ids_must_be_unique() -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": [item("1", "a"), item("2", "b"), item("1", "c")]})
    assert result.keyword == "invalid_arguments"
    assert result.content == f'{REJECTED}todos: ids must be unique; used more than once: "1".'
    assert items_of(plan) == list(FRESH)


def test_a_number_and_a_string_of_the_same_id_are_not_unique() -> None:
    todos = [{"id": 7, "content": "a", "status": "pending"}, item("7", "b")]
    result = write(TodoPlan(), {"todos": todos})
    assert result.keyword == "invalid_arguments"
    assert 'used more than once: "7"' in result.content


def test_two_items_in_progress_are_accepted_with_the_first_kept_in_progress() -> None:
    plan = planned(*HALFWAY)
    todos = [item("1", "a", "in_progress"), item("2", "b", "in_progress"), item("3", "c")]
    result = write(plan, {"todos": todos})
    assert result.keyword == "ok"
    assert items_of(plan) == [item("1", "a", "in_progress"), item("2", "b"), item("3", "c")]
    assert result.content == (
        "plan: 0 of 3 completed\n[>] 1. a\n[ ] 2. b\n[ ] 3. c\n"
        'Note: 2 items were in_progress ("1", "2"); only one can be. '
        'The harness kept "1" in_progress and made the others pending.\n'
        "Work on the in_progress item; update the list when its status changes."
    )


def test_one_item_in_progress_is_kept_as_written_without_a_note() -> None:
    result = write(TodoPlan(), {"todos": list(FRESH)})
    assert "Note:" not in result.content


def test_repeated_ids_are_rejected_even_beside_two_in_progress() -> None:
    todos = [item("1", "a", "in_progress"), item("1", "b"), item("2", "c", "in_progress")]
    result = write(TodoPlan(), {"todos": todos})
    assert result.keyword == "invalid_arguments"
    assert result.content == f'{REJECTED}todos: ids must be unique; used more than once: "1".'


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_empty_or_blank_content_is_rejected(content: str) -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": [item("1", "Plan"), item("2", content)]})
    assert result.keyword == "invalid_arguments"
    assert result.content == f"{REJECTED}todos.1.content: String should have at least 1 character."
    assert items_of(plan) == list(FRESH)


@pytest.mark.parametrize("item_id", ["", "  "])
def test_an_empty_id_is_rejected(item_id: str) -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": [item(item_id, "Plan")]})
    assert result.keyword == "invalid_arguments"
    assert result.content == f"{REJECTED}todos.0.id: String should have at least 1 character."
    assert items_of(plan) == list(FRESH)


@pytest.mark.parametrize("status", ["done", "COMPLETED", "in progress", ""])
def test_an_unknown_status_is_rejected_and_the_three_are_named(status: str) -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": [item("1", "Plan", status)]})
    assert result.keyword == "invalid_arguments"
    assert result.content == (
        f"{REJECTED}todos.0.status: Input should be 'pending', 'in_progress' or 'completed'."
    )
    assert items_of(plan) == list(FRESH)


def test_thirty_items_are_accepted_and_thirty_one_are_not() -> None:
    thirty = [
        item(str(n), f"step {n}", "in_progress" if n == 1 else "pending")
        for n in range(1, MAX_ITEMS + 1)
    ]
    assert MAX_ITEMS == 30
    plan = TodoPlan()
    assert write(plan, {"todos": thirty}).ok
    assert len(plan.items) == 30
    result = write(plan, {"todos": [*thirty, item("31", "one too many")]})
    assert result.keyword == "invalid_arguments"
    assert result.content == (
        f"{REJECTED}todos: List should have at most 30 items after validation, not 31."
    )
    assert items_of(plan) == thirty


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        pytest.param({}, "todos: Field required.", id="missing-todos"),
        pytest.param({"todo": []}, "todos: Field required; todo: Extra inputs", id="misspelt"),
        pytest.param({"todos": None}, "todos: Input should be a valid list.", id="null"),
        pytest.param({"todos": "1. plan"}, "todos: Input should be a valid list.", id="text"),
        pytest.param({"todos": [], "note": "x"}, "note: Extra inputs are not permitted.", id="top"),
        pytest.param(
            {"todos": [{**item("1", "Plan"), "priority": "high"}]},
            "todos.0.priority: Extra inputs are not permitted.",
            id="item-extra",
        ),
        pytest.param(
            {"todos": [{"id": "1", "status": "pending"}]},
            "todos.0.content: Field required.",
            id="item-missing",
        ),
    ],
)
def test_a_malformed_call_is_rejected_and_names_the_problem(
    arguments: dict[str, Any], problem: str
) -> None:
    plan = planned(*FRESH)
    result = write(plan, arguments)
    assert result.keyword == "invalid_arguments"
    assert result.content.startswith(REJECTED)
    assert problem in result.content
    assert items_of(plan) == list(FRESH)


def test_arguments_that_are_not_json_leave_the_plan_as_it_was() -> None:
    plan = planned(*FRESH)
    result = write(plan, '{"todos": [')
    assert result.keyword == "invalid_arguments"
    assert "not valid JSON" in result.content
    assert items_of(plan) == list(FRESH)


def test_numeric_ids_are_accepted_as_strings() -> None:
    plan = TodoPlan()
    todos = [
        {"id": 1, "content": "Read", "status": "completed"},
        {"id": 2, "content": "Write", "status": "in_progress"},
    ]
    result = write(plan, {"todos": todos})
    assert result.ok
    assert [i.id for i in plan.items] == ["1", "2"]
    assert "[x] 1. Read\n[>] 2. Write" in result.content


def test_ids_and_content_are_stored_without_surrounding_whitespace() -> None:
    plan = TodoPlan()
    assert write(plan, {"todos": [item(" 2 ", "  Read the file  ", "in_progress")]}).ok
    assert items_of(plan) == [item("2", "Read the file", "in_progress")]


def test_an_empty_list_is_accepted_and_clears_the_plan() -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": []})
    assert result == ToolResult.success("plan: empty (no items)\nThe plan is now empty.")
    assert plan.items == ()
    assert plan.open_items == ()


# --- 2. what an accepted call answers ------------------------------------------------------


def test_an_accepted_list_replaces_the_whole_plan_and_comes_back_rendered() -> None:
    plan = planned(*FRESH)
    result = write(plan, {"todos": [item("2", "Read each file", "in_progress"), item("4", "Test")]})
    assert result == ToolResult.success(
        "plan: 0 of 2 completed\n"
        "[>] 2. Read each file\n"
        "[ ] 4. Test\n"
        "Work on the in_progress item; update the list when its status changes.",
    )
    assert [i.id for i in plan.items] == ["2", "4"]  # item 1 and 3 are gone: no merging


@pytest.mark.parametrize(
    ("todos", "last_line"),
    [
        (FRESH, "Work on the in_progress item; update the list when its status changes."),
        (FINISHED, "Every item is completed: answer the user."),
        ((), "The plan is now empty."),
    ],
)
def test_the_result_ends_with_what_the_list_implies(
    todos: tuple[dict[str, str], ...], last_line: str
) -> None:
    result = write(TodoPlan(), {"todos": list(todos)})
    assert result.ok
    assert result.content.splitlines()[-1] == last_line


def test_a_list_with_open_items_and_none_in_progress_starts_the_first_pending_one() -> None:
    """Told to mark one, a small model sent the same all-pending list until it was stopped."""
    plan = TodoPlan()
    todos = [item("1", "a", "completed"), item("2", "b"), item("3", "c")]
    result = write(plan, {"todos": todos})
    assert result.ok
    assert [i.status for i in plan.items] == [
        Status.COMPLETED,
        Status.IN_PROGRESS,
        Status.PENDING,
    ]
    assert result.content.splitlines()[-2:] == [
        'Note: no item was in_progress. The harness marked "2", the first pending one, '
        "in_progress: start with it.",
        "Work on the in_progress item; update the list when its status changes.",
    ]


def test_the_plan_renders_as_plain_lines_with_a_mark_per_status() -> None:
    plan = planned(*HALFWAY)
    assert plan.render() == (
        "plan: 1 of 3 completed\n"
        "[x] 1. List the files\n"
        "[>] 2. Read each file\n"
        "[ ] 3. Write the summary"
    )
    assert plan.summary() == "plan: 1 of 3 completed"


# --- 3. the schema the model is sent -------------------------------------------------------


def test_the_schema_is_inlined_and_keeps_every_constraint() -> None:
    schema = function_definition(make_todo_tool(TodoPlan()))
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    assert '"title"' not in text
    assert schema["function"]["name"] == TODO_TOOL
    parameters = schema["function"]["parameters"]
    assert parameters["required"] == ["todos"]
    assert parameters["additionalProperties"] is False
    todos = parameters["properties"]["todos"]
    assert todos["type"] == "array"
    assert todos["maxItems"] == 30
    assert todos["description"] == "The whole list, in order; it replaces the previous one."
    items = todos["items"]
    assert items["type"] == "object"
    assert items["additionalProperties"] is False
    assert items["required"] == ["id", "content", "status"]
    assert items["properties"]["status"] == {
        "enum": ["pending", "in_progress", "completed"],
        "type": "string",
    }
    assert items["properties"]["id"]["minLength"] == 1
    assert items["properties"]["content"]["minLength"] == 1


def test_the_schema_validates_what_the_tool_accepts() -> None:
    """The schema the model reads and the model that validates are the same pydantic model."""
    plan = TodoPlan()
    snapshot = snapshot_for(plan)
    assert snapshot.names == (TODO_TOOL,)
    assert snapshot.schemas() == (function_definition(make_todo_tool(plan)),)


# --- 4. TodoPlan: the counting behind the reminder, and the note at the end ----------------


def test_the_reminder_comes_after_remind_after_silent_replies_not_before() -> None:
    plan = planned(*HALFWAY)
    plan.remind_after = 3
    for _ in range(2):
        plan.count_reply()
        assert plan.reminder() is None
    plan.count_reply()
    reminder = plan.reminder()
    assert reminder is not None
    assert reminder.startswith(f"{REMINDER_PREFIX} ")
    assert " for 3 turns " in reminder
    assert reminder.endswith("Open items:\n[>] 2. Read each file\n[ ] 3. Write the summary")
    assert "[x] 1." not in reminder  # only the open items
    assert plan.reminder() is None  # the count started again


def test_an_accepted_write_sets_the_count_back_to_zero() -> None:
    plan = planned(*FRESH)
    plan.count_reply()
    plan.count_reply()
    assert write(plan, {"todos": list(HALFWAY)}).ok
    assert plan.silent_replies == 0
    plan.count_reply()
    plan.count_reply()
    assert plan.reminder() is None


def test_a_rejected_write_does_not_set_the_count_back() -> None:
    plan = planned(*FRESH)
    plan.count_reply()
    plan.count_reply()
    assert not write(plan, {"todos": [item("1", "x", "done")]}).ok
    assert plan.silent_replies == 2


@pytest.mark.parametrize("todos", [(), FINISHED], ids=["empty", "all-completed"])
def test_no_reminder_without_open_items(todos: tuple[dict[str, str], ...]) -> None:
    plan = planned(*todos)
    for _ in range(10):
        plan.count_reply()
        assert plan.reminder() is None


def test_left_open_lists_only_the_open_items() -> None:
    assert planned(*HALFWAY).left_open() == (
        "[harness] The model stopped with 2 of 3 plan items still open:\n"
        "[>] 2. Read each file\n"
        "[ ] 3. Write the summary"
    )
    assert planned(*FINISHED).left_open() is None
    assert TodoPlan().left_open() is None


def test_as_json_is_what_a_hook_reads() -> None:
    plan = planned(*HALFWAY)
    assert plan.as_json() == [dict(i) for i in HALFWAY]
    json.dumps(plan.as_json())  # plain JSON, statuses as strings
    assert all(isinstance(i, TodoItem) for i in plan.items)

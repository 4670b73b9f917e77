"""The plan: a todo list the model rewrites whole, kept in the agent's state.

`todo_write` takes the complete list every time, never a patch. A model that
forgot what the list holds can still send a correct one, a stale patch cannot
corrupt it, and the rules (ids unique, at most 30 items) are checked on one
whole list at once. A list with more than one item in progress is accepted with
the first one kept in progress, and one with open items but none in progress
with the first pending one started (see `one_in_progress`).

The list lives in a `TodoPlan` object that the loop also holds: the loop reads
it to remind a model that stopped updating it, and to say at the end which
items were left open. The history only carries what the model wrote and read.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from shared.tools import PydanticTool, SideEffect, ToolResult

TODO_TOOL = "todo_write"
MAX_ITEMS = 30
REMIND_AFTER = 3  # model replies without an accepted todo_write, while items are open


class Status(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


MARKS = {Status.PENDING: "[ ]", Status.IN_PROGRESS: "[>]", Status.COMPLETED: "[x]"}


class TodoItem(BaseModel):
    # Models send `"id": 1` as often as `"id": "1"`; both mean the same item.
    model_config = ConfigDict(
        frozen=True, extra="forbid", str_strip_whitespace=True, coerce_numbers_to_str=True
    )

    id: str = Field(min_length=1, description='Short and stable across calls, like "1" or "2".')
    content: str = Field(min_length=1, description="One step, in the imperative.")
    status: Status


class TodoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: Annotated[list[TodoItem], Field(max_length=MAX_ITEMS)] = Field(
        description="The whole list, in order; it replaces the previous one."
    )

    @field_validator("todos")
    @classmethod
    def one_consistent_list(cls, todos: list[TodoItem]) -> list[TodoItem]:
        """The rules that need the whole list; every broken one is named at once."""
        problems = []
        repeated = [item_id for item_id, n in Counter(t.id for t in todos).items() if n > 1]
        if repeated:
            problems.append(f"ids must be unique; used more than once: {_names(repeated)}")
        if problems:
            raise PydanticCustomError("todo_list", "; ".join(problems))
        return todos


def one_in_progress(items: Sequence[TodoItem]) -> tuple[list[TodoItem], str | None]:
    """One item in progress while any is open: the first one keeps it, the others become
    pending; with none in progress, the first pending one starts.

    The rule is the point (a plan says what is being done now), but rejecting a
    whole list for breaking it cost a small model its task: it sent the same
    list again and again and never got to the work. Being told to mark an item
    did not help either: it sent the same all-pending list until the run was
    stopped. So the list is accepted as far as it can be, and the result says
    what the harness changed.
    """
    busy = [item.id for item in items if item.status is Status.IN_PROGRESS]
    waiting = [item.id for item in items if item.status is Status.PENDING]
    if not busy and waiting:
        started = [
            item.model_copy(update={"status": Status.IN_PROGRESS})
            if item.id == waiting[0]
            else item
            for item in items
        ]
        note = (
            f"Note: no item was in_progress. The harness marked {_names(waiting[:1])}, the "
            "first pending one, in_progress: start with it."
        )
        return started, note
    if len(busy) <= 1:
        return list(items), None
    kept = [
        item.model_copy(update={"status": Status.PENDING})
        if item.status is Status.IN_PROGRESS and item.id != busy[0]
        else item
        for item in items
    ]
    note = (
        f"Note: {len(busy)} items were in_progress ({_names(busy)}); only one can be. "
        f"The harness kept {_names(busy[:1])} in_progress and made the others pending."
    )
    return kept, note


def _names(ids: Sequence[str]) -> str:
    return ", ".join(json.dumps(item_id, ensure_ascii=False) for item_id in ids)


@dataclass
class TodoPlan:
    """The current list, and how many model replies have passed since it was last updated."""

    items: tuple[TodoItem, ...] = ()
    remind_after: int = REMIND_AFTER
    silent_replies: int = 0

    @property
    def open_items(self) -> tuple[TodoItem, ...]:
        return tuple(item for item in self.items if item.status is not Status.COMPLETED)

    def replace(self, items: Sequence[TodoItem]) -> None:
        self.items = tuple(items)
        self.silent_replies = 0

    def count_reply(self) -> None:
        """The loop calls this once per model reply; an accepted todo_write then resets it."""
        self.silent_replies += 1

    def reminder(self) -> str | None:
        """The harness's note for the next request, when the open plan has gone stale.

        After a reminder the count starts again, so a model that keeps ignoring
        the plan is reminded every `remind_after` replies, not on every request.
        """
        if not self.open_items or self.silent_replies < self.remind_after:
            return None
        self.silent_replies = 0
        return (
            f"[harness reminder, not from the user] Your plan has not been updated for "
            f"{self.remind_after} turns and still has open items. If an item is done or you "
            f"moved on, call {TODO_TOOL} with the whole updated list; if the plan is still "
            f"right, carry on. Open items:\n{render_items(self.open_items)}"
        )

    def as_json(self) -> list[dict[str, str]]:
        """The list for a hook's stdin (a Stop hook can refuse while items are open)."""
        return [item.model_dump(mode="json") for item in self.items]

    def summary(self) -> str:
        done = len(self.items) - len(self.open_items)
        return f"plan: {done} of {len(self.items)} completed"

    def render(self) -> str:
        """The list as the model reads it back, and as plain lines for the human."""
        if not self.items:
            return "plan: empty (no items)"
        return f"{self.summary()}\n{render_items(self.items)}"

    def left_open(self) -> str | None:
        """What the final output says when the model stopped with items still open."""
        if not self.open_items:
            return None
        return (
            f"[harness] The model stopped with {len(self.open_items)} of {len(self.items)} "
            f"plan items still open:\n{render_items(self.open_items)}"
        )


def render_items(items: Sequence[TodoItem]) -> str:
    return "\n".join(f"{MARKS[item.status]} {item.id}. {item.content}" for item in items)


DESCRIPTION = (
    "Write your plan for a task of several steps, as the whole list each time: it replaces "
    "the previous list. Each item has an id, content and a status (pending, in_progress or "
    "completed). Keep exactly one item in_progress while you work; mark it completed as soon "
    "as it is done, and the next one in_progress, in the same call. At most 30 items."
)


def make_todo_tool(plan: TodoPlan) -> PydanticTool:
    """`todo_write`: replaces the plan and answers with it, rendered.

    Its side effect is on the agent's own state, not on the machine
    (`SideEffect.STATE`): nobody is asked, and the policy allows it in every
    mode, plan mode included.
    """

    def write(args: TodoArgs) -> ToolResult:
        items, changed = one_in_progress(args.todos)
        plan.replace(items)
        said = [plan.render(), *([changed] if changed else []), _next_step(plan)]
        return ToolResult.success("\n".join(said))

    return PydanticTool(
        name=TODO_TOOL,
        description=DESCRIPTION,
        args_model=TodoArgs,
        side_effect=SideEffect.STATE,
        run=write,
    )


def _next_step(plan: TodoPlan) -> str:
    """One line that tells the model what the list it just wrote implies."""
    if not plan.items:
        return "The plan is now empty."
    if not plan.open_items:
        return "Every item is completed: answer the user."
    return "Work on the in_progress item; update the list when its status changes."

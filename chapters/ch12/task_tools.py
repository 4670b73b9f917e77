"""task_create, task_update, task_get, task_list: the task graph as the model uses it.

    task_create {subject, description?, activeForm?, blockedBy?}      a new pending task
    task_update {taskId, status?, owner?, subject?, description?,     change one task; status
                 activeForm?, addBlockedBy?, addBlocks?}              "deleted" removes it
    task_get    {taskId}                                              one task in full
    task_list   {}                                                    every task, a line each

The argument names are Claude Code's, so a model trained on its tools calls
these without being taught. An id may come as "3" or as 3 (models send both);
an argument the tool does not have is `invalid_arguments`, as every tool's is.

Like chapter 5's todo_write, they change only the agent's own state, the task
list (`SideEffect.STATE`): nobody is asked, and the audit log records each call.
task_get and task_list only read, so they may run beside other calls; a change
may not (two changes in one reply run in the order the model wrote them).

Every rule is the store's (chapters/ch12/tasks.py): a tool passes the arguments
on and turns the store's `Outcome` into a result whose text starts with its
keyword.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch12.tasks import (
    MAX_ACTIVE_FORM,
    MAX_DESCRIPTION,
    MAX_SUBJECT,
    Outcome,
    Snapshot,
    TaskStore,
)
from shared.tools import PydanticTool, SideEffect, Status, ToolResult

TASK_CREATE = "task_create"
TASK_UPDATE = "task_update"
TASK_GET = "task_get"
TASK_LIST = "task_list"
TASK_TOOLS = (TASK_CREATE, TASK_UPDATE, TASK_GET, TASK_LIST)

# Models send `"taskId": 3` as often as `"taskId": "3"`; both name task "3".
_ARGS = ConfigDict(extra="forbid", str_strip_whitespace=True, coerce_numbers_to_str=True)
_ID = 'A task id, as task_list shows it ("3").'


class TaskCreateArgs(BaseModel):
    model_config = _ARGS

    subject: str = Field(
        description=f"What to do, as a short imperative title (at most {MAX_SUBJECT} characters)."
    )
    description: str = Field(
        default="",
        description=f"What done means, and anything needed to do it (at most {MAX_DESCRIPTION:,}).",
    )
    activeForm: str = Field(
        default="",
        description="The subject as an ongoing action, shown while it is in progress "
        f'("Writing the summary"; at most {MAX_ACTIVE_FORM}).',
    )
    blockedBy: list[str] = Field(
        default_factory=list,
        description="Ids of existing tasks that must be completed before this one can start.",
    )


class TaskUpdateArgs(BaseModel):
    model_config = _ARGS

    taskId: str = Field(description=_ID)
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = Field(
        default=None,
        description="in_progress when you start it, completed as soon as it is done; deleted "
        "removes the task.",
    )
    owner: str | None = Field(
        default=None, description="Who works on it: set it with status in_progress to claim it."
    )
    subject: str | None = Field(default=None, description="A new subject.")
    description: str | None = Field(default=None, description="A new description.")
    activeForm: str | None = Field(default=None, description="A new activeForm.")
    addBlockedBy: list[str] = Field(
        default_factory=list, description="Ids of tasks this one must now wait for."
    )
    addBlocks: list[str] = Field(
        default_factory=list, description="Ids of tasks that must now wait for this one."
    )


class TaskGetArgs(BaseModel):
    model_config = _ARGS

    taskId: str = Field(description=_ID)


class TaskListArgs(BaseModel):
    model_config = _ARGS


def result_of(outcome: Outcome) -> ToolResult:
    """The store's outcome as the model reads it: its text, and the keyword as the status."""
    if outcome.ok:
        return ToolResult.success(outcome.text)
    status = Status.INVALID if outcome.keyword == "invalid_arguments" else Status.FAILED
    return ToolResult(status, outcome.text, outcome.keyword)


def list_text(snapshot: Snapshot) -> str:
    """task_list's text: a count, one line per task (`3 [pending] Summary waits for: 1, 2`),
    then one line per file left out."""
    if not snapshot.tasks:
        lines = ["ok: the task list is empty"]
    else:
        ready = sum(snapshot.is_ready(task) for task in snapshot.tasks)
        count = len(snapshot.tasks)
        lines = [f"ok: {count} task{'s' * (count != 1)}, {ready} ready to start"]
    for task in snapshot.tasks:
        line = f"{task.id} [{task.status.value}] {task.subject}"
        if task.owner:
            line += f" (owner: {task.owner})"
        waiting = snapshot.waiting_for(task)
        if waiting:
            line += f" waits for: {', '.join(waiting)}"
        lines.append(line)
    lines += [f"warning: {warning}" for warning in snapshot.warnings]
    return "\n".join(lines)


def make_task_tools(store: TaskStore) -> list[PydanticTool]:
    """The four task tools over one task list (one store: every agent given them shares it)."""

    def create(args: TaskCreateArgs) -> ToolResult:
        return result_of(
            store.create(args.subject, args.description, args.activeForm, args.blockedBy)
        )

    def update(args: TaskUpdateArgs) -> ToolResult:
        return result_of(
            store.update(
                args.taskId,
                status=args.status,
                owner=args.owner,
                subject=args.subject,
                description=args.description,
                active_form=args.activeForm,
                add_blocked_by=args.addBlockedBy,
                add_blocks=args.addBlocks,
            )
        )

    def get(args: TaskGetArgs) -> ToolResult:
        return result_of(store.get(args.taskId))

    def listed(args: TaskListArgs) -> ToolResult:
        return ToolResult.success(list_text(store.list()))

    return [
        PydanticTool(
            name=TASK_CREATE,
            description=(
                "Add a task to the task list, which persists across sessions and is shared "
                "with subagents. Break work of three or more steps into tasks; blockedBy names "
                "the tasks that must be completed first. Answers with the new task's id."
            ),
            args_model=TaskCreateArgs,
            side_effect=SideEffect.STATE,
            run=create,
        ),
        PydanticTool(
            name=TASK_UPDATE,
            description=(
                "Change one task. Set status in_progress before you start it (with owner, to "
                "claim it) and completed as soon as it is done; a task cannot start while a "
                "task it waits for is unfinished. addBlockedBy / addBlocks add dependencies; "
                "status deleted removes the task."
            ),
            args_model=TaskUpdateArgs,
            side_effect=SideEffect.STATE,
            run=update,
        ),
        PydanticTool(
            name=TASK_GET,
            description=(
                "Read one task in full: its description, owner, the tasks it waits for and "
                "the tasks that wait for it."
            ),
            args_model=TaskGetArgs,
            side_effect=SideEffect.STATE,
            run=get,
            concurrency_safe=True,
        ),
        PydanticTool(
            name=TASK_LIST,
            description=(
                "List every task: id, status, subject, owner, and the unfinished tasks it "
                "waits for. A pending task that waits for nothing is ready to start."
            ),
            args_model=TaskListArgs,
            side_effect=SideEffect.STATE,
            run=listed,
            concurrency_safe=True,
        ),
    ]

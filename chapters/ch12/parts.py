"""Chapter 12's part: a task graph on disk, in place of chapter 5's plan in memory.

tasks  --task-list NAME; one `TaskStore` per command, on
       .tutorial/tasks/NAME/ (chapters/ch12/tasks.py), so every run of the
       command and every child it starts works on the same list, and so does
       the next run in that folder; task_create, task_update, task_get and
       task_list on it, for the agent and its children
       (chapters/ch12/task_tools.py); the list in the Stop event (`tasks`),
       its counts under the spinner (chapters/ch12/view.py) and in the
       banner; the built-in general sub-agent told no more of todo_write
       (chapters/ch12/prompt.py); `tasks` draws the graph
       (chapters/ch12/listing.py)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from chapters.ch02.parts import WORKSPACE
from chapters.ch04.parts import STOP_FIELDS
from chapters.ch06.parts import AGENTS
from shared.cli import params_of
from shared.parts import Build, Part, Setup, Subcommand
from shared.recipe import TOOLS, VIEWS
from shared.slots import Key

if TYPE_CHECKING:
    from chapters.ch12.tasks import TaskStore

TASKS: Key[TaskStore] = Key("the task list")
DEFAULT_LIST = "default"  # chapters/ch12/tasks.py's, here too so that --help imports no pydantic


def checked_list_name(context: click.Context, parameter: click.Parameter, value: str) -> str:
    """--task-list's value, or exit 2 saying what a list name may be and one that would do."""
    from chapters.ch12.tasks import list_name_problem

    problem = list_name_problem(value)
    if problem is None:
        return value
    suggestion = re.sub(r"[^A-Za-z0-9_-]+", "-", value).strip("-")[:64] or DEFAULT_LIST
    raise click.BadParameter(f"{problem}; try --task-list {suggestion}")


task_list_option = click.option(
    "--task-list",
    default=DEFAULT_LIST,
    show_default=True,
    metavar="NAME",
    callback=checked_list_name,
    help=(
        "The task list the task tools keep, in .tutorial/tasks/NAME/: runs (and processes) "
        "that name the same list share it."
    ),
)


class TaskGraph(Part):
    """Tasks with dependencies, kept on disk: four tools, a view, a Stop field, a listing."""

    name = "tasks"
    summary = (
        "task_create, task_update, task_get, task_list: a task graph on disk; `tasks` draws it"
    )
    options = params_of(task_list_option)

    def setup(self, setup: Setup) -> None:
        from chapters.ch12.prompt import without_todo_write
        from chapters.ch12.tasks import TaskStore

        setup.provide(
            TASKS, lambda: TaskStore(setup.get(WORKSPACE).root, setup.option("task_list"))
        )
        setup.add_banner("tasks", lambda: banner(setup.get(TASKS), setup.recipe.chapter))
        setup.decorate(AGENTS, without_todo_write)

    def contribute(self, build: Build) -> None:
        from chapters.ch12.task_tools import make_task_tools
        from chapters.ch12.view import tasks_view

        store = build.get(TASKS)  # the command's: a child's tools change the parent's list
        for tool in make_task_tools(store):
            build.add(TOOLS, tool, children=True)
        build.add(
            STOP_FIELDS, lambda: {"tasks": store.list().as_json()}, children=True, label="tasks"
        )
        build.add(VIEWS, lambda: tasks_view(store), label="tasks_view")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch12.listing import tasks_command

        return {
            "tasks": Subcommand(
                lambda recipe: tasks_command,
                help="Draw the task list a chapter's run keeps here, as a graph; nothing runs.",
                absent="Chapter {n} keeps no task list; tasks are kept from chapter 12 on",
            )
        }


def banner(store: TaskStore, chapter: int) -> str:
    """`tasks: .tutorial/tasks/default/ (3 tasks, 1 ready)`, read when the command starts;
    a file the list left out is counted, and where to see why said."""
    from chapters.ch12.view import counts

    snapshot = store.list()
    if snapshot.tasks:
        number = len(snapshot.tasks)
        said = f"{number} task{'s' if number != 1 else ''}, {counts(snapshot)['ready']} ready"
    else:
        said = "empty"
    if snapshot.warnings:
        count = len(snapshot.warnings)
        said += (
            f"; {count} warning{'s' if count != 1 else ''}: "
            f"python -m tutorial tasks --chapter {chapter}"
        )
    return f"tasks: {store.shown} ({said})"

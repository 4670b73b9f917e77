"""`python -m tutorial tasks --chapter N`: a task list drawn as the graph it is.

    3 tasks in .tutorial/tasks/default/ of /home/me/shop: 1 ready · 2 done
    ├── 1 [completed] Add SAVE5 to CODES in shop/cart.py
    │   └── 3 [pending] Add a SAVE5 line to CHANGES.md (also waits for 2) · ready
    └── 2 [completed] Test SAVE5 in tests/test_cart.py
        └── 3 [pending] Add a SAVE5 line to CHANGES.md (also waits for 1) · ready

The roots are the tasks that wait for nothing; each task is drawn under every
task it waits for, so one with two blockers is drawn twice, each time naming
the other. Its own dependents are drawn under its first drawing only (later
ones say so): a graph of many diamonds stays as long as its edges, not as
its paths. A task is marked `ready` when it is pending and nothing unfinished
blocks it. A file the list leaves out is one warning on stderr. A cycle,
which only a hand-edited file can hold (the tools refuse one), is cut where it
closes and said. Nothing runs and no model is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from chapters.ch12.parts import task_list_option
from shared.cli import FriendlyCommand, working_directory

if TYPE_CHECKING:
    from rich.text import Text
    from rich.tree import Tree

    from chapters.ch12.tasks import Snapshot, Task

STYLES = {"ready": "green", "in progress": "bold yellow", "blocked": "", "done": "dim"}


@click.command(name="tasks", cls=FriendlyCommand)
@task_list_option
@workspace_option
def tasks_command(task_list: str, workspace: Path | None) -> None:
    """Draw a task list: each task under the tasks it waits for, ready ones marked."""
    from rich.console import Console

    from chapters.ch12.tasks import TaskStore
    from chapters.ch12.view import counts_line

    root = Workspace(workspace or working_directory()).root
    store = TaskStore(root, task_list)
    snapshot = store.list()
    for warning in snapshot.warnings:
        click.echo(f"warning: {warning}", err=True)
    if not snapshot.tasks:
        click.echo(
            f"No tasks in {store.shown} of {root} yet: a run from this folder makes them "
            "with task_create."
        )
        return
    count = len(snapshot.tasks)
    title = f"{count} task{'s' if count != 1 else ''} in {store.shown} of {root}: "
    Console(highlight=False).print(graph(snapshot, title + counts_line(snapshot)), markup=False)


def graph(snapshot: Snapshot, title: str) -> Tree:
    """The tree under `title`: roots first (by id), each task under the tasks it waits for."""
    from rich.text import Text
    from rich.tree import Tree

    tree = Tree(Text(title), guide_style="dim")
    by_id = {task.id: task for task in snapshot.tasks}
    expanded: set[str] = set()

    def draw(branch: Tree, task: Task, under: str | None, path: tuple[str, ...]) -> None:
        others = [b for b in task.blockedBy if b != under and b in by_id]
        node = branch.add(label(snapshot, task, others))
        if task.id in path:  # only a hand-edited file: the tools refuse a cycle
            cycle = " → ".join([*path[path.index(task.id) :], task.id])
            node.add(Text(f"(a cycle: {cycle}; only a hand-edited file can hold one)"))
            return
        dependents = [by_id[d] for d in task.blocks if d in by_id]
        if task.id in expanded:
            if dependents:
                node.add(Text("(what waits for it: drawn above)", style="dim"))
            return
        expanded.add(task.id)
        for dependent in dependents:
            draw(node, dependent, task.id, (*path, task.id))

    roots = [task for task in snapshot.tasks if not any(b in by_id for b in task.blockedBy)]
    for root in roots:
        draw(tree, root, None, ())
    for task in snapshot.tasks:  # in a cycle no root reaches: drawn from its lowest id
        if task.id not in expanded:
            draw(tree, task, None, ())
    return tree


def label(snapshot: Snapshot, task: Task, others: list[str]) -> Text:
    """`3 [pending] Subject (owner: x) (also waits for 1, 2) · ready`, as plain text (a
    subject's brackets are not markup), coloured by what the task is on a terminal."""
    from rich.text import Text

    from chapters.ch12.view import kind_of

    text = f"{task.id} [{task.status.value}] {task.subject}"
    if task.owner:
        text += f" (owner: {task.owner})"
    if others:
        text += f" (also waits for {', '.join(others)})"
    if snapshot.is_ready(task):
        text += " · ready"
    return Text(text, style=STYLES[kind_of(snapshot, task)])

"""Chapter 12's agent: chapter 11's, which plans in a task graph that outlives the run.

    plan   removed: chapter 5's todo_write, its reminder, its Stop field and its view.
           One way to plan, and it persists: a small model given two planning tools
           uses both, and keeps neither up to date
    tasks  task_create, task_update, task_get, task_list on one task list on disk,
           .tutorial/tasks/NAME/ (--task-list, "default"), shared by every run of
           the command, every child and the next run in the folder; the list in the
           Stop event (`tasks`, so a Stop hook can refuse while tasks are open), its
           counts under the spinner and in the banner; `tasks` draws the graph

Children get the four task tools on the same list: a sub-agent can take a task,
and the parent sees it done. The built-in general sub-agent's prompt loses
chapter 5's todo_write line (chapters/ch12/prompt.py).

`--demo` is two runs in one new folder (chapters/ch12/demo.py): three tasks made
and two done, the third, refused while it waited, left for later; then a new
session that finds it on the list and finishes it.

Extends: chapters/ch11/agent.py
"""

from __future__ import annotations

from chapters.ch07.parts import streamed_demo
from chapters.ch11.agent import RECIPE as CHAPTER_11
from chapters.ch12.demo import DEMO_PROMPT, demo_model, make_demo_workspace, run_demo
from chapters.ch12.parts import TaskGraph

RECIPE = CHAPTER_11.extend(
    chapter=12,
    help=(
        "Chapter 12: chapter 11's agent, which plans in a task graph on disk: tasks that "
        "wait for others, shared with sub-agents, still there in the next session."
    ),
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace, script=run_demo),
    remove=["plan"],
    add=[TaskGraph()],
)

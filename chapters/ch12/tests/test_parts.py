"""Chapter 12's recipe (chapters/ch12/agent.py, parts.py): chapter 5's plan gone, the task graph
in its place; the tools on one list for the agent, its children and the next run; the list in
the Stop event; its counts under the spinner and in the banner.

The agent is built as the command line builds it (chapters/testing.py), on scripted streams,
in tmp_path/ws; only the model is scripted: the task list is the real one, on disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

import chapters.ch12.parts as parts
import chapters.ch12.tasks as tasks
from chapters.ch03.tests.support import tutorial
from chapters.ch04.hooks import Hook, HookEvent, HookReply, Hooks
from chapters.ch06.definitions import DEFAULT_AGENT
from chapters.ch06.parts import AGENTS
from chapters.ch06.prompt import SUB_AGENT_RULES
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch09.session_log import SessionLog
from chapters.ch11.tests.composed import STARTED, Agent11
from chapters.ch12.parts import TASKS, banner
from chapters.ch12.tasks import TaskStatus, TaskStore
from chapters.ch12.view import counts, tasks_view
from chapters.testing import setup_of
from shared.decisions import Decision

pytestmark = pytest.mark.usefixtures("isolated")

TASK_TOOLS = ["task_create", "task_update", "task_get", "task_list"]
PROMPT = "Plan the release."
CHILD_TASK = "Add a task for the changelog."


@dataclass
class Agent12(Agent11):
    """One run of chapter 12's agent in tmp_path/ws on scripted streams (chapter 11's rig)."""

    chapter = 12

    def given(self) -> dict[str, Any]:
        return {**super().given(), "log": SessionLog.new(self.root, 12, STARTED)}

    @property
    def store(self) -> TaskStore:
        """A store of its own on the rig's default list: what the files say now."""
        return TaskStore(self.root)


def call(call_id: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    return calls_stream((call_id, tool, json.dumps(arguments)))


def tool_names(request: Mapping[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


# --- the recipe ---------------------------------------------------------------------------------


def test_the_recipe_has_the_task_tools_and_no_plan() -> None:
    result = tutorial("recipe", "--chapter", "12")
    assert result.exit_code == 0, result.stderr
    listing = result.stdout
    assert "todo_write" not in listing and "PlanReminder" not in listing
    assert "--remind-after" not in listing and "plan_view" not in listing
    tools, children = listing.split("\ntools\n")[1].split("\nchildren\n")
    for name in TASK_TOOLS:
        assert f"  {name}  " in tools.split("\nauthorize\n")[0]
        assert f"    {name}  " in children.split("\noptions\n")[0]  # a child has them too
    assert "  tasks_view                  tasks (ch12)" in tools  # the views
    assert "  tasks                       tasks (ch12)" in tools  # a stop field
    assert "  --task-list                 tasks (ch12)" in listing


def test_the_agent_offers_the_task_tools_and_its_prompt_names_no_todo_write(
    tmp_path: Path,
) -> None:
    agent = Agent12(tmp_path, {PROMPT: [text_stream("Done.")]})
    assert agent.run(PROMPT) == "Done."
    (request,) = agent.requests
    names = tool_names(request)
    assert [n for n in names if n.startswith("task_")] == TASK_TOOLS
    assert "todo_write" not in names
    assert "todo_write" not in request["messages"][0]["content"]


def test_the_general_sub_agent_is_told_no_more_of_todo_write(tmp_path: Path) -> None:
    setup = setup_of(12, workspace=tmp_path, home=tmp_path / "home")
    general = setup.get(AGENTS).agents[DEFAULT_AGENT]
    assert "todo_write" not in general.system_prompt
    assert general.system_prompt.endswith(SUB_AGENT_RULES)
    assert (
        "todo_write"
        in setup_of(11, workspace=tmp_path).get(AGENTS).agents[DEFAULT_AGENT].system_prompt
    )  # chapter 11's keeps it: it has the tool


# --- one list for the agent, its children and the next run ---------------------------------------


def test_a_child_gets_the_tools_on_the_parents_list(tmp_path: Path) -> None:
    delegate = call("t1", "task", description="changelog", prompt=CHILD_TASK, agent=DEFAULT_AGENT)
    scripts = {
        PROMPT: [delegate, call("c2", "task_list"), text_stream("Done.")],
        CHILD_TASK: [call("k1", "task_create", subject="Write the changelog"), text_stream("1.")],
    }
    agent = Agent12(tmp_path, scripts)
    assert agent.run(PROMPT) == "Done."
    child = next(r for r in agent.requests if r["messages"][1]["content"] == CHILD_TASK)
    assert [n for n in tool_names(child) if n.startswith("task_")] == TASK_TOOLS
    assert "todo_write" not in child["messages"][0]["content"]
    listed = agent.result("c2")  # the parent reads what the child made
    assert listed.splitlines()[1:] == ["1 [pending] Write the changelog"]
    assert [t.subject for t in agent.store.list().tasks] == ["Write the changelog"]


def test_two_runs_in_one_folder_share_the_list(tmp_path: Path) -> None:
    first = Agent12(
        tmp_path,
        {PROMPT: [call("c1", "task_create", subject="Ship it"), text_stream("Planned.")]},
    )
    assert first.run(PROMPT) == "Planned."
    second = Agent12(
        tmp_path,
        {"Go on.": [call("c1", "task_update", taskId=1, status="completed"), text_stream("Ok.")]},
    )
    assert second.run("Go on.") == "Ok."
    assert [m.role for m in second.history[:2]] == ["system", "user"]
    assert second.result("c1").startswith("ok: task 1 updated: status pending → completed")
    (task,) = first.store.list().tasks
    assert task.status is TaskStatus.COMPLETED


def test_another_task_list_is_another_folder(tmp_path: Path) -> None:
    agent = Agent12(
        tmp_path,
        {PROMPT: [call("c1", "task_create", subject="Elsewhere"), text_stream("Ok.")]},
        options={"task_list": "release-2"},
    )
    agent.run(PROMPT)
    assert agent.store.list().tasks == ()
    (task,) = TaskStore(agent.root, "release-2").list().tasks
    assert task.subject == "Elsewhere"
    assert (agent.root / ".tutorial" / "tasks" / "release-2" / "1.json").is_file()


def test_the_options_default_is_the_stores() -> None:
    assert parts.DEFAULT_LIST == tasks.DEFAULT_LIST  # parts.py names it to import no pydantic


def test_a_run_gives_its_tools_the_commands_store(tmp_path: Path) -> None:
    setup = setup_of(12, workspace=tmp_path, home=tmp_path / "home")
    assert setup.get(TASKS) is setup.get(TASKS)  # one per command
    assert setup.get(TASKS).folder == tmp_path / ".tutorial" / "tasks" / "default"


# --- the Stop event --------------------------------------------------------------------------


def test_the_stop_event_carries_the_task_list(tmp_path: Path) -> None:
    seen: list[Mapping[str, Any]] = []

    def record(payload: Mapping[str, Any]) -> None:
        seen.append(json.loads(json.dumps(payload)))  # what a command hook would read

    script = [call("c1", "task_create", subject="Ship it"), text_stream("Planned.")]
    agent = Agent12(tmp_path, {PROMPT: script}, options={"hooks": Hooks([hook(record)])})
    agent.run(PROMPT)
    (event,) = seen
    assert "plan" not in event
    assert event["tasks"] == [
        {
            "id": "1",
            "subject": "Ship it",
            "description": "",
            "activeForm": "",
            "owner": "",
            "status": "pending",
            "blocks": [],
            "blockedBy": [],
            "metadata": {},
        }
    ]


def test_a_stop_hook_can_send_the_model_back_while_tasks_are_open(tmp_path: Path) -> None:
    def until_done(payload: Mapping[str, Any]) -> HookReply | None:
        left = [t["id"] for t in payload["tasks"] if t["status"] != "completed"]
        if left:
            return HookReply(Decision.DENY, f"tasks still open: {', '.join(left)}")
        return None

    script = [
        call("c1", "task_create", subject="Ship it"),
        text_stream("Planned."),
        call("c2", "task_update", taskId="1", status="completed"),
        text_stream("Shipped."),
    ]
    agent = Agent12(tmp_path, {PROMPT: script}, options={"hooks": Hooks([hook(until_done)])})
    assert agent.run(PROMPT) == "Shipped."
    sent_back = agent.requests[2]["messages"][-1]
    assert sent_back == {
        "role": "user",
        "content": "[Stop hook] Do not stop yet: until_done: tasks still open: 1",
    }


def hook(function: Any) -> Hook:
    return Hook(HookEvent.STOP, function.__name__, function)


# --- the view and the banner ---------------------------------------------------------------------


def five_tasks(root: Path) -> TaskStore:
    """1 and 2 done, 3 ready (it waited for 1), 4 in progress, 5 blocked (it waits for 4)."""
    store = TaskStore(root)
    for subject, waits in [("a", ()), ("b", ()), ("c", ("1",)), ("d", ()), ("e", ("4",))]:
        assert store.create(subject, blocked_by=waits).ok
    for task_id, status in [("1", "completed"), ("2", "completed"), ("4", "in_progress")]:
        assert store.update(task_id, status=status).ok
    return store


def shown(store: TaskStore) -> str:
    view = tasks_view(store)
    assert isinstance(view, Text)
    return view.plain


def test_the_view_counts_ready_in_progress_blocked_and_done(tmp_path: Path) -> None:
    store = five_tasks(tmp_path)
    assert shown(store) == "任务 tasks: 1 ready · 1 in progress · 1 blocked · 2 done"
    assert store.update("4", status="completed").ok  # 5 is ready now
    assert shown(store) == "任务 tasks: 2 ready · 3 done"


def test_the_view_shows_nothing_for_an_empty_list(tmp_path: Path) -> None:
    assert tasks_view(TaskStore(tmp_path)) is None
    assert not (tmp_path / ".tutorial").exists()  # reading made no folder


def test_the_banner_says_where_the_list_is_and_what_is_ready(tmp_path: Path) -> None:
    assert banner(TaskStore(tmp_path), 12) == "tasks: .tutorial/tasks/default/ (empty)"
    store = five_tasks(tmp_path)
    assert counts(store.list()) == {"ready": 1, "in progress": 1, "blocked": 1, "done": 2}
    assert banner(store, 12) == "tasks: .tutorial/tasks/default/ (5 tasks, 1 ready)"
    (store.folder / "7.json").write_text("{", encoding="utf-8")
    assert banner(store, 12) == (
        "tasks: .tutorial/tasks/default/ (5 tasks, 1 ready; 1 warning: "
        "python -m tutorial tasks --chapter 12)"
    )

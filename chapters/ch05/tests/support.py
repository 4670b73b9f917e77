"""Helpers for chapter 5's tests: a chapter-5 agent, todo_write calls, and reading requests.

The agent is the one chapter 5's recipe builds (chapters/ch05/agent.py, `agent_of`):
chapter 2's tools (with a fake shell runner) plus `todo_write` on the run's `TodoPlan`,
the policy from the settings files, chapter 4's hooks around chapter 3's gate, the
plan view under the console's spinner, and the plan's reminder. Only the model (a
`ScriptedModel` emitting real tool calls), the hooks and the human are given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.policy import Mode
from chapters.ch04.hooks import Hook, Hooks
from chapters.ch05.reminder import PlanReminder
from chapters.ch05.todo import REMIND_AFTER, TODO_TOOL, TodoPlan
from chapters.testing import AgentRun, quiet_console
from shared.agent import DEFAULT_MAX_TURNS
from shared.console import Console
from shared.scripted import ScriptedModel, Step, response, tool_call
from shared.tools import ToolRegistry

REMINDER_PREFIX = "[harness reminder, not from the user]"
REMINDER_NOTICE = "harness: reminding the model of its plan"
LEFT_OPEN = "[harness] The model stopped with"

Item = dict[str, str]


# --- what the scripted model sends ---------------------------------------------------------


def item(item_id: str, content: str, status: str = "pending") -> Item:
    return {"id": item_id, "content": content, "status": status}


def todo(call_id: str, *items: Mapping[str, Any]) -> dict[str, Any]:
    """A todo_write call carrying the whole list."""
    return tool_call(call_id, TODO_TOOL, json.dumps({"todos": list(items)}))


def glob(call_id: str) -> dict[str, Any]:
    """A harmless read: work that does not touch the plan."""
    return tool_call(call_id, "glob", json.dumps({"pattern": "*.txt"}))


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return response(None, list(calls))


def silent(count: int, start: int = 100) -> list[dict[str, Any]]:
    """`count` replies that do work (a glob each) without calling todo_write."""
    return [turn(glob(f"g{start + n}")) for n in range(count)]


# A plan of three steps, as the model writes it first and later.
STEPS = ("List the files", "Read each file", "Write the summary")
FRESH = (item("1", STEPS[0], "in_progress"), item("2", STEPS[1]), item("3", STEPS[2]))
HALFWAY = (
    item("1", STEPS[0], "completed"),
    item("2", STEPS[1], "in_progress"),
    item("3", STEPS[2]),
)
FINISHED = tuple(item(str(n), step, "completed") for n, step in enumerate(STEPS, start=1))


# --- reading the requests ------------------------------------------------------------------


def is_reminder(message: Mapping[str, Any]) -> bool:
    return message["role"] == "user" and str(message["content"]).startswith(REMINDER_PREFIX)


def reminded_at(requests: Sequence[Mapping[str, Any]]) -> list[int]:
    """The 1-based numbers of the requests a reminder was added to, checking the history
    holds no reminder anywhere else."""
    added = []
    for number, request in enumerate(requests, start=1):
        messages = request["messages"]
        if messages and is_reminder(messages[-1]):
            added.append(number)
        assert sum(is_reminder(m) for m in messages) == len(added), (
            f"request {number} holds a reminder that was not added just before it"
        )
    return added


# --- the agent -----------------------------------------------------------------------------


@dataclass
class Agent(AgentRun[ScriptedModel]):
    """Chapter 5's agent in tmp_path/ws, from its recipe; built at its first run."""

    chapter = 5
    hooks: Sequence[Hook] = ()
    remind_after: int = REMIND_AFTER
    mode: Mode | None = None
    runner: FakeRunner = field(default_factory=FakeRunner)

    @property
    def workspace(self) -> Workspace:
        return Workspace(self.root)

    def make_model(self) -> ScriptedModel:
        return self.model or ScriptedModel([])  # the one a test set, or the first run's

    def given(self) -> dict[str, Any]:
        return {
            "asker": ScriptedAsker([]),
            "audit": AuditLog(self.tmp_path / "audit.jsonl"),
            "hooks": Hooks(list(self.hooks)),
            "runner": self.runner,
            "remind_after": self.remind_after,
            "mode": self.mode,
        }

    def run(  # type: ignore[override]
        self, *steps: Step, prompt: str = "do the task", max_turns: int = DEFAULT_MAX_TURNS
    ) -> str:
        self.model = self.model or ScriptedModel(steps)
        self.options = {**self.options, "max_turns": max_turns}
        return super().run(prompt)

    @property
    def plan(self) -> TodoPlan:
        """The plan the recipe made for this run (the reminder watches it)."""
        assert self.spec is not None, "run the agent first"
        (reminder,) = [f for f in self.spec.features if isinstance(f, PlanReminder)]
        return reminder.plan

    @property
    def tools(self) -> ToolRegistry:
        assert self.spec is not None, "run the agent first"
        return self.spec.tools


def make_agent(
    tmp_path: Path,
    *hooks: Hook,
    remind_after: int = REMIND_AFTER,
    mode: Mode | None = None,
    console: Console | None = None,
) -> Agent:
    """A chapter-5 agent in tmp_path/ws, wired as chapter 5's command line wires one."""
    return Agent(tmp_path, hooks, remind_after, mode, console=console or quiet_console())

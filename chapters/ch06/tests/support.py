"""Helpers for chapter 6's tests: a chapter-6 agent whose model serves parent and children.

The agent is the one chapter 6's recipe builds (chapters/ch06/agent.py, `agent_of`):
chapter 5's tools with a fake shell runner, the task tool on the agents the command
loads, the policy from the settings files, chapter 4's hooks around chapter 3's gate,
and the request budget. The model is `AgentScripts` (chapters/ch06/demo.py): each agent has
its own script, chosen by the system prompt a request starts with, so a test
writes what the parent says and what each child says separately.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.policy import Mode
from chapters.ch04.hooks import Hook, Hooks
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.demo import AgentScripts
from chapters.ch06.prompt import EXPLORE_PROMPT, GENERAL_PROMPT, SYSTEM_PROMPT
from chapters.testing import AgentRun
from shared.scripted import Step, response, tool_call

PARENT, EXPLORE, GENERAL = SYSTEM_PROMPT, EXPLORE_PROMPT, GENERAL_PROMPT


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return tool_call(call_id, name, json.dumps(arguments))


def task(
    call_id: str, prompt: str = "find it", agent: str | None = "explore", **more: Any
) -> dict[str, Any]:
    arguments: dict[str, Any] = {"description": "a side task", "prompt": prompt, **more}
    if agent is not None:
        arguments["agent"] = agent
    return tool_call(call_id, "task", json.dumps(arguments))


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return response(None, list(calls))


def say(text: str) -> dict[str, Any]:
    return response(text)


@dataclass
class Family(AgentRun[AgentScripts]):
    """A chapter-6 agent in tmp_path/ws and what it did; `run` builds it once per test."""

    chapter = 6
    scripts: dict[str, Sequence[Step]]
    deny: Sequence[str] = ()
    allow: Sequence[str] = ()
    mode: Mode | None = None
    hooks: Sequence[Hook] = ()
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    max_requests: int = MAX_REQUESTS
    max_turns: int = 20
    runner: FakeRunner = field(default_factory=FakeRunner)

    def make_model(self) -> AgentScripts:
        return AgentScripts(self.scripts)

    def given(self) -> dict[str, Any]:
        return {
            "asker": self.asker,
            "audit": AuditLog(self.tmp_path / "audit.jsonl"),
            "hooks": Hooks(list(self.hooks)),
            "runner": self.runner,
            "mode": self.mode,
            "allow": tuple(self.allow),
            "deny": tuple(self.deny),
            "max_turns": self.max_turns,
            "max_requests": self.max_requests,
        }

    def requests_of(self, system_prompt: str) -> list[dict[str, Any]]:
        """The requests one agent sent, in order (each agent is known by its system prompt)."""
        return [r for r in self.requests if r["messages"][0]["content"] == system_prompt]


def tool_names(request: Mapping[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path

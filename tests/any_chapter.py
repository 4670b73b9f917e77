"""Any ready chapter's agent, built by that chapter's own `build_agent`, for promises that
hold from one chapter on.

Each chapter's `build_agent` names the parts it needs; this module has every part a
chapter may ask for and hands each one only those its signature names: a workspace in
tmp_path/ws with its home folder in tmp_path/home (no settings there, so the policy is
the default one: a shell command asks), a fake shell runner, a plain console, and the
human a chapter asks (chapters 1 and 2 an `Approver`, later ones an `Asker`).
"""

from __future__ import annotations

import inspect
import io
from dataclasses import dataclass, field
from datetime import date, datetime
from importlib import import_module
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.settings import load_policy
from chapters.ch04.hooks import Hooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.todo import TodoPlan
from chapters.ch06.definitions import load_agents
from chapters.ch09.session_log import SessionLog
from chapters.ch10.agent import chapter_tools
from chapters.ch10.environment import read_environment
from shared.agent import AgentSpec
from shared.completion import ModelClient
from shared.console import Console
from shared.messages import Message, ToolMessage

TODAY = date(2026, 5, 1)
STARTED = datetime(2026, 5, 1, 10, 0, 0)


@dataclass
class AnyChapter:
    """One run of chapter `number`'s agent; `human` is its approver or its asker."""

    number: int
    tmp_path: Path
    model: ModelClient
    human: Any
    max_turns: int = 20
    runner: FakeRunner = field(default_factory=FakeRunner)
    console: Console = field(
        default_factory=lambda: Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    )
    history: list[Message] = field(default_factory=list)

    @property
    def root(self) -> Path:
        folder = self.tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        return folder

    @property
    def audit_path(self) -> Path:
        return self.root / AUDIT_FILE

    def build(self) -> AgentSpec:
        build_agent = import_module(f"chapters.ch{self.number:02d}.agent").build_agent
        wanted = inspect.signature(build_agent).parameters
        parts = {name: make() for name, make in self._parts().items() if name in wanted}
        return build_agent(**parts)  # type: ignore[no-any-return]

    def run(self, prompt: str = "do the task") -> str:
        return run_agent(prompt, self.build(), history=self.history)

    def results(self) -> list[str]:
        return [m.content for m in self.history if isinstance(m, ToolMessage)]

    def _parts(self) -> dict[str, Any]:
        """Every part a chapter may name, each made only when the chapter names it."""
        home = self.tmp_path / "home"
        workspace = Workspace(self.root)

        def agents() -> Any:
            return load_agents(self.root, home, plan_tools(workspace).names)

        return {
            "model": lambda: self.model,
            "console": lambda: self.console,
            "approver": lambda: self.human,
            "asker": lambda: self.human,
            "cwd": lambda: self.root,
            "workspace": lambda: workspace,
            "policy": lambda: load_policy(
                workspace, home, known_tools=chapter_tools(workspace, agents())
            ),
            "audit": lambda: AuditLog(self.audit_path),
            "hooks": lambda: Hooks([]),
            "plan": TodoPlan,
            "agents": agents,
            "log": lambda: SessionLog.new(self.root, self.number, STARTED),
            "home": lambda: home,
            "environment": lambda: read_environment(self.root, TODAY, git_ceiling=self.root),
            "runner": lambda: self.runner,
            "max_turns": lambda: self.max_turns,
        }

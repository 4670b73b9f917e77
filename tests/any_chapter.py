"""Any ready chapter's agent, built from that chapter's recipe, for promises that hold from
one chapter on.

A thin run around `chapters.testing.agent_of`: a workspace in tmp_path/ws with its home
folder in tmp_path/home (no settings there, so the policy is the default one: a shell
command asks), a fake shell runner, a plain console, and the human a chapter asks
(chapters 1 and 2 an `Approver`, later ones an `Asker`: the recipe uses the one it has a
part for). Everything else is made by the recipe, as the command line makes it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch09.session_log import SessionLog
from chapters.testing import agent_of, recipe_of
from shared.agent import AgentSpec
from shared.completion import ModelClient
from shared.console import Console
from shared.messages import Message, ToolMessage

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
        return agent_of(
            self.number,
            model=self.model,
            console=self.console,
            cwd=self.root,
            workspace=Workspace(self.root),
            home=self.tmp_path / "home",
            approver=self.human,
            asker=self.human,
            runner=self.runner,
            max_turns=self.max_turns,
            **self._session(),
        )

    def _session(self) -> dict[str, Any]:
        """The session log a run is given when the chapter runs it in a session (as
        chapter 9's `in_sessions` gives it): the recipe makes none by itself."""
        if recipe_of(self.number).part("sessions") is None:
            return {}
        return {"log": SessionLog.new(self.root, self.number, STARTED)}

    def run(self, prompt: str = "do the task") -> str:
        return run_agent(prompt, self.build(), history=self.history)

    def results(self) -> list[str]:
        return [m.content for m in self.history if isinstance(m, ToolMessage)]

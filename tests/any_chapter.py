"""Any ready chapter's agent, built from that chapter's recipe, for promises that hold from
one chapter on.

A thin run around `chapters.testing.AgentRun`: a workspace in tmp_path/ws with its home
folder in tmp_path/home (no settings there, so the policy is the default one: a shell
command asks), a fake shell runner, a plain console, the model the test gives, and the
human a chapter asks (chapters 1 and 2 an `Approver`, later ones an `Asker`: the recipe
uses the one it has a part for). Everything else is made by the recipe, as the command
line makes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch09.session_log import SessionLog
from chapters.testing import AgentRun, recipe_of
from shared.completion import ModelClient

STARTED = datetime(2026, 5, 1, 10, 0, 0)


@dataclass
class AnyChapter(AgentRun[ModelClient]):
    """One run of chapter `number`'s agent on the `model` given; `human` is its approver or
    its asker."""

    number: int
    human: Any
    max_turns: int = 20
    runner: FakeRunner = field(default_factory=FakeRunner)

    @property
    def chapter(self) -> int:
        return self.number

    @property
    def audit_path(self) -> Path:
        return self.root / AUDIT_FILE

    def make_model(self) -> ModelClient:
        assert self.model is not None, "AnyChapter runs on the model a test gives"
        return self.model

    def given(self) -> dict[str, Any]:
        given = {"cwd": self.root, "approver": self.human, "asker": self.human}
        return {**given, "runner": self.runner, "max_turns": self.max_turns, **self._session()}

    def _session(self) -> dict[str, Any]:
        """The session log a run is given when the chapter runs it in a session (as
        chapter 9's `in_sessions` gives it): the recipe makes none by itself."""
        if recipe_of(self.number).part("sessions") is None:
            return {}
        return {"log": SessionLog.new(self.root, self.number, STARTED)}

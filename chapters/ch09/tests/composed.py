"""What the composition tests share: chapter 9's agent (chapters/ch09/agent.py) on scripted
streams, in tmp_path/ws with its home folder in tmp_path/home, as the command line builds it.

Each `Agent9` is one run: a new session, or (`resume`) one that goes on with a
session of the same workspace, read, repaired and appended to as `--resume` does.
Scripts are chosen by the first prompt of the run's history (chapter 7's
`AgentStreams`): a resumed run's requests start with the session's first prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.policy import Mode
from chapters.ch07.scripted_stream import AgentStep, AgentStreams
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch09.resume import resume_session
from chapters.ch09.session_log import SessionLog
from chapters.testing import AgentRun
from shared.agent import AgentSpec
from shared.process import CommandRunner

STARTED = datetime(2026, 5, 1, 10, 0, 0)


@dataclass
class Agent9(AgentRun[AgentStreams]):
    """One run of chapter 9's agent in tmp_path/ws on scripted streams, every option at hand."""

    chapter = 9
    scripts: Mapping[str, Sequence[AgentStep]]
    resume: str | None = None  # None: a new session; "": the most recent; else an id (or its start)
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    mode: Mode | None = None
    now: datetime = STARTED  # when the run starts: a new session's id is made from it
    log: SessionLog | None = None
    _: KW_ONLY
    console: StreamingConsole = field(default_factory=recording_console)

    def build(self) -> AgentSpec:
        """Chapter 9's agent, writing to this run's session log (as `in_sessions` gives it):
        a new one, or the resumed one with its history."""
        if self.resume is None:
            self.log = SessionLog.new(self.root, 9, self.now)
        else:
            wanted, console = self.resume or None, self.console
            resumed = resume_session(self.root, wanted, chapter=9, console=console, now=self.now)
            self.log, self.history = resumed.log, resumed.history
        return super().build()

    def make_model(self) -> AgentStreams:
        return AgentStreams(self.scripts)

    def given(self) -> dict[str, Any]:
        audit = AuditLog(self.root / AUDIT_FILE)
        return {
            "asker": self.asker,
            "audit": audit,
            "log": self.log,
            "runner": self.runner,
            "mode": self.mode,
        }

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The session log, one JSON object a line."""
        assert self.log is not None
        text = self.log.path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

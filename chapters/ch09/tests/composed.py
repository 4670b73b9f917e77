"""What the composition tests share: chapter 9's agent (chapters/ch09/agent.py) on scripted
streams, in tmp_path/ws with its home folder in tmp_path/home, as the command line builds it.

Each `Agent9` is one run: a new session, or (`resume`) one that goes on with a
session of the same workspace, read, repaired and appended to as `--resume` does.
Scripts are chosen by the first prompt of the run's history (chapter 7's
`AgentStreams`): a resumed run's requests start with the session's first prompt.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.policy import Mode
from chapters.ch07.scripted_stream import AgentStep, AgentStreams
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch09.resume import resume_session
from chapters.ch09.session_log import SessionLog
from chapters.testing import agent_of
from shared.agent import AgentSpec
from shared.messages import Message
from shared.process import CommandRunner

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
STARTED = datetime(2026, 5, 1, 10, 0, 0)


@dataclass
class Agent9:
    """One run of chapter 9's agent in tmp_path/ws on scripted streams, every option at hand."""

    tmp_path: Path
    scripts: Mapping[str, Sequence[AgentStep]]
    resume: str | None = None  # None: a new session; "": the most recent; else an id (or its start)
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    console: StreamingConsole = field(default_factory=recording_console)
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    mode: Mode | None = None
    now: datetime = STARTED  # when the run starts: a new session's id is made from it
    options: Mapping[str, Any] = field(default_factory=dict)  # agent_of's: options, services
    history: list[Message] = field(default_factory=list)
    model: AgentStreams | None = None
    spec: AgentSpec | None = None
    log: SessionLog | None = None

    @property
    def root(self) -> Path:
        folder = self.tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        return folder

    @property
    def home(self) -> Path:
        return self.tmp_path / "home"

    def build(self) -> AgentSpec:
        """Chapter 9's agent, from its recipe, writing to this run's session log (as
        `in_sessions` gives it); the policy, hooks and agents as the command reads them."""
        if self.resume is None:
            self.log = SessionLog.new(self.root, 9, self.now)
        else:
            wanted, console = self.resume or None, self.console
            resumed = resume_session(self.root, wanted, chapter=9, console=console, now=self.now)
            self.log, self.history = resumed.log, resumed.history
        self.model = AgentStreams(self.scripts)
        self.spec = agent_of(
            9,
            model=self.model,
            console=self.console,
            asker=self.asker,
            workspace=Workspace(self.root),
            home=self.home,
            audit=AuditLog(self.root / AUDIT_FILE),
            log=self.log,
            runner=self.runner,
            mode=self.mode,
            **self.options,
        )
        return self.spec

    def run(self, prompt: str) -> str:
        return run_agent(prompt, self.spec or self.build(), history=self.history)

    @property
    def requests(self) -> list[dict[str, Any]]:
        assert self.model is not None
        return self.model.requests

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The session log, one JSON object a line."""
        assert self.log is not None
        text = self.log.path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    def printed(self) -> str:
        assert isinstance(self.console.err, io.StringIO)
        return ANSI.sub("", self.console.err.getvalue())

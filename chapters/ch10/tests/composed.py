"""What the composition tests share: chapter 10's agent (chapters/ch10/agent.py) on scripted
streams, in tmp_path/ws with its home folder in tmp_path/home, on a date the test chooses,
as the command line builds it (chapters/testing.py).

Each `Agent10` is one run in a new session. Scripts are chosen by the run's prompt
(chapter 7's `AgentStreams`); a step may be a function of the request it answers,
which is how a test changes a file in the middle of a run.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch09.session_log import SessionLog
from chapters.ch10.parts import assembled
from chapters.ch10.sections import SystemPrompt
from chapters.testing import agent_of, setup_of
from shared.agent import AgentSpec
from shared.process import CommandRunner
from shared.recipe import listed_tools

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TODAY = date(2026, 5, 1)
STARTED = datetime(2026, 5, 1, 10, 0, 0)


def call(call_id: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    """One reply with one tool call."""
    return calls_stream((call_id, tool, json.dumps(arguments)))


@dataclass
class Agent10:
    """One run of chapter 10's agent in tmp_path/ws on scripted streams, every option at hand."""

    tmp_path: Path
    scripts: Mapping[str, Sequence[AgentStep]]
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    console: StreamingConsole = field(default_factory=recording_console)
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    today: date = TODAY
    now: datetime = STARTED  # when the run starts: its session's id is made from it
    options: Mapping[str, Any] = field(default_factory=dict)  # agent_of's options, by name
    model: AgentStreams | None = None
    spec: AgentSpec | None = None

    @property
    def root(self) -> Path:
        folder = self.tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        return folder

    @property
    def home(self) -> Path:
        folder = self.tmp_path / "home"
        folder.mkdir(exist_ok=True)
        return folder

    def build(self) -> AgentSpec:
        self.model = AgentStreams(self.scripts)
        self.spec = agent_of(
            10,
            model=self.model,
            console=self.console,
            asker=self.asker,
            workspace=Workspace(self.root),
            home=self.home,
            today=self.today,
            log=SessionLog.new(self.root, 10, self.now),
            runner=self.runner,
            **self.options,
        )
        return self.spec

    def run(self, prompt: str) -> str:
        return run_agent(prompt, self.spec or self.build())

    @property
    def requests(self) -> list[dict[str, Any]]:
        assert self.model is not None
        return self.model.requests

    def systems(self) -> list[str]:
        """The system message of each request, in order."""
        return [r["messages"][0]["content"] for r in self.requests]

    def result(self, call_id: str) -> str:
        """What the model was sent as the result of `call_id`."""
        messages = self.requests[-1]["messages"]
        return next(str(m["content"]) for m in messages if m.get("tool_call_id") == call_id)

    def prompt_command_prompt(self) -> SystemPrompt:
        """What `python -m tutorial prompt --chapter 10` would print for this folder now."""
        setup = setup_of(10, workspace=Workspace(self.root), home=self.home, today=self.today)
        return assembled(setup, listed_tools(setup, filtered=True).names)

    def printed(self) -> str:
        assert isinstance(self.console.err, io.StringIO)
        return ANSI.sub("", self.console.err.getvalue())

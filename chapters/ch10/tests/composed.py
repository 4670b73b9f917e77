"""What the composition tests share: chapter 10's agent (chapters/ch10/agent.py) on scripted
streams, in tmp_path/ws with its home folder in tmp_path/home, on a date the test chooses,
as the command line builds it (chapters/testing.py).

Each `Agent10` is one run in a new session. Scripts are chosen by the run's prompt
(chapter 7's `AgentStreams`); a step may be a function of the request it answers,
which is how a test changes a file in the middle of a run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import date, datetime
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch09.session_log import SessionLog
from chapters.ch10.parts import assembled
from chapters.ch10.sections import SystemPrompt
from chapters.testing import AgentRun, setup_of
from shared.process import CommandRunner
from shared.recipe import listed_tools

TODAY = date(2026, 5, 1)
STARTED = datetime(2026, 5, 1, 10, 0, 0)


def call(call_id: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    """One reply with one tool call."""
    return calls_stream((call_id, tool, json.dumps(arguments)))


@dataclass
class Agent10(AgentRun[AgentStreams]):
    """One run of chapter 10's agent in tmp_path/ws on scripted streams, every option at hand."""

    chapter = 10
    scripts: Mapping[str, Sequence[AgentStep]]
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    today: date = TODAY
    now: datetime = STARTED  # when the run starts: its session's id is made from it
    _: KW_ONLY
    console: StreamingConsole = field(default_factory=recording_console)

    def make_model(self) -> AgentStreams:
        return AgentStreams(self.scripts)

    def given(self) -> dict[str, Any]:
        log = SessionLog.new(self.root, 10, self.now)
        return {"asker": self.asker, "today": self.today, "log": log, "runner": self.runner}

    def systems(self) -> list[str]:
        """The system message of each request, in order."""
        return [r["messages"][0]["content"] for r in self.requests]

    def prompt_command_prompt(self) -> SystemPrompt:
        """What `python -m tutorial prompt --chapter 10` would print for this folder now."""
        setup = setup_of(10, workspace=Workspace(self.root), home=self.home, today=self.today)
        return assembled(setup, listed_tools(setup, filtered=True).names)

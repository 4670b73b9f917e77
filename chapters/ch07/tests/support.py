"""What chapter 7's tests share: consoles that record, the streaming model on a local server,
and a bare agent around chapter 1's shell tool."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from chapters.ch01.approve import AskHuman
from chapters.ch01.shell_tool import make_shell_tool
from chapters.ch01.tests.harness import BASH, FakeRunner
from chapters.ch07.scripted_stream import ScriptedStreamingModel, StreamStep
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.streaming import StreamingChatModel
from shared.agent import AgentSpec
from shared.approval import ScriptedApprover
from shared.calls import CallPipeline
from shared.config import Settings
from shared.console import Console
from shared.tools import ToolRegistry

API_KEY = "test-key"
MODEL = "test-model"


class Terminal(io.StringIO):
    """A StringIO that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def recording_console(*, trace: bool = False, fancy: bool = False) -> StreamingConsole:
    return StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=fancy, trace=trace)


def err_text(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


def out_text(console: Console) -> str:
    assert isinstance(console.out, io.StringIO)
    return console.out.getvalue()


def streaming_model(base_url: str, *, include_usage: bool = True) -> StreamingChatModel:
    settings = Settings.model_validate(
        {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": MODEL}
    )
    return StreamingChatModel(settings, timeout=10.0, include_usage=include_usage)


class ShellAgent:
    """Chapter 1's agent (the shell tool, a human who answers yes) on a streaming model."""

    def __init__(
        self,
        streams: Sequence[StreamStep] = (),
        *,
        answers: int = 10,
        trace: bool = False,
    ) -> None:
        self.model = ScriptedStreamingModel(streams)
        self.runner = FakeRunner()
        self.approver = ScriptedApprover([True] * answers)
        self.console = recording_console(trace=trace)
        self.spec = AgentSpec(
            model=self.model,
            tools=ToolRegistry([make_shell_tool(Path.cwd(), runner=self.runner, shell=BASH)]),
            calls=CallPipeline(authorize=[AskHuman(self.approver, self.console)]),
            console=self.console,
            system_prompt="You are a test agent.",
        )

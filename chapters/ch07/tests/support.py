"""What chapter 7's tests share: consoles that record, the streaming model on a local server,
chapter 1's agent (its recipe), and chapter 7's composed agent with its children."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import BASH, FakeRunner, ScriptedApprover
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch03.tests.support import write_json
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from chapters.ch07.scripted_stream import (
    AgentStep,
    AgentStreams,
    ScriptedStreamingModel,
    StreamStep,
)
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.streaming import StreamingChatModel
from chapters.testing import AgentRun, agent_of
from shared.config import Settings
from shared.console import Console

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


def streaming_model(
    base_url: str, *, include_usage: bool = True, **settings: str
) -> StreamingChatModel:
    """The streaming client for `base_url`; `settings` adds optional ones,
    OPENAI_MAX_REPLY_CHARS="500"."""
    required = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": MODEL}
    return StreamingChatModel(
        Settings.model_validate({**required, **settings}),
        timeout=10.0,
        include_usage=include_usage,
    )


class ShellAgent:
    """Chapter 1's agent, from its recipe (the shell tool, a human who answers yes), on a
    streaming model."""

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
        self.spec = agent_of(
            1,
            model=self.model,
            console=self.console,
            approver=self.approver,
            runner=self.runner,
            shell=BASH,
            cwd=Path.cwd(),
        )


# --- chapter 7's composed agent: a parent and its children, each with its own script ---------


def args(**arguments: Any) -> str:
    return json.dumps(arguments)


def task(call_id: str, prompt: str, agent: str = "explore") -> tuple[str, str, str]:
    """A task call for `calls_stream`; `prompt` is also the key of the child's script."""
    return call_id, "task", args(description=prompt[:40], prompt=prompt, agent=agent)


@dataclass
class Family(AgentRun[AgentStreams]):
    """Chapter 7's agent (chapters/ch07/agent.py) in tmp_path/ws, on scripted streams.

    Each run has its own script, keyed by the prompt it starts with (`AgentStreams`):
    the parent's by the prompt given to `run`, a child's by its task's prompt.
    """

    chapter = 7
    scripts: dict[str, Sequence[AgentStep]]
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    settings: Mapping[str, Any] | None = None
    max_requests: int = MAX_REQUESTS
    max_parallel: int = DEFAULT_MAX_PARALLEL
    runner: FakeRunner = field(default_factory=FakeRunner)
    _: KW_ONLY
    console: StreamingConsole = field(default_factory=recording_console)

    @property
    def audit_path(self) -> Path:
        return self.tmp_path / "audit.jsonl"

    def make_model(self) -> AgentStreams:
        if self.settings is not None:
            write_json(self.root / PROJECT_SETTINGS, self.settings)
        return AgentStreams(self.scripts)

    def given(self) -> dict[str, Any]:
        return {
            "asker": self.asker,
            "audit": AuditLog(self.audit_path),
            "max_requests": self.max_requests,
            "max_parallel": self.max_parallel,
            "runner": self.runner,
        }

    def requests_of(self, prompt: str) -> list[dict[str, Any]]:
        assert self.model is not None
        return self.model.requests_of(prompt)

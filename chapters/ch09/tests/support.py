"""What chapter 9's tests share: a run with a session log and a scripted model, the log's lines,
histories built by hand, and memory files on disk.

The pieces are put together the way a composition module would: the session
log where chapter 8's transcript went, a scripted model, chapter 8's `emit`
tool (a read whose output size the script chooses).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch08.tests.support import emit_tool
from chapters.ch09.memory import MEMORY_FOLDER
from chapters.ch09.resume import Resumed, resume_session
from chapters.ch09.session_log import SessionLog
from shared.agent import AgentSpec, Feature
from shared.calls import CallPipeline
from shared.console import Console
from shared.messages import Message
from shared.scripted import ScriptedModel, Step
from shared.tools import Tool, ToolRegistry

SYSTEM = "You are a test agent."
CHAPTER = 9
STARTED = datetime(2026, 5, 1, 10, 0, 0)
RESUMED = datetime(2026, 5, 2, 9, 30, 0)


def plain_console() -> Console:
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=False)


def printed(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


def spec(
    model: ScriptedModel,
    console: Console,
    features: Sequence[Feature],
    tools: Sequence[Tool] | None = None,
) -> AgentSpec:
    return AgentSpec(
        model=model,
        tools=ToolRegistry(tools if tools is not None else [emit_tool()]),
        calls=CallPipeline(),
        console=console,
        system_prompt=SYSTEM,
        features=features,
        max_turns=20,
    )


class Session:
    """Runs of one workspace's sessions: a first run, then resumed ones."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.console = plain_console()
        self.models: list[ScriptedModel] = []
        self.log: SessionLog | None = None
        self.resumed: Resumed | None = None

    def start(
        self,
        prompt: str,
        steps: Sequence[Step],
        *,
        log: SessionLog | None = None,
        now: datetime = STARTED,
        before: Sequence[Feature] = (),
        after: Sequence[Feature] = (),
        history: list[Message] | None = None,
    ) -> str:
        """A new session's first run: the features `before`, the log, the features `after`."""
        self.log = log or SessionLog.new(self.root, CHAPTER, now)
        model = ScriptedModel(steps)
        self.models.append(model)
        agent = spec(model, self.console, [*before, self.log, *after])
        return run_agent(prompt, agent, history=history)

    def resume(
        self,
        prompt: str,
        steps: Sequence[Step],
        wanted: str | None = None,
        *,
        now: datetime = RESUMED,
        before: Sequence[Feature] = (),
    ) -> str:
        """A later run that goes on with a session (the most recent, or `wanted`)."""
        self.resumed = resume_session(
            self.root, wanted, chapter=CHAPTER, console=self.console, now=now
        )
        self.log = self.resumed.log
        model = ScriptedModel(steps)
        self.models.append(model)
        agent = spec(model, self.console, [*before, self.resumed.log])
        return run_agent(prompt, agent, history=self.resumed.history)

    @property
    def first_request(self) -> list[dict[str, Any]]:
        """The messages of the newest run's first request."""
        messages: list[dict[str, Any]] = self.models[-1].requests[0]["messages"]
        return messages

    @property
    def path(self) -> Path:
        assert self.log is not None
        return self.log.path

    def lines(self) -> list[dict[str, Any]]:
        return log_lines(self.path)

    def printed(self) -> str:
        return printed(self.console)


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def wires(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.wire for message in messages]


def memory_file(root: Path, name: str, text: str) -> Path:
    """Write `text` as `<root>/.tutorial/memory/<name>.md`, exactly (for broken files too)."""
    path = root / MEMORY_FOLDER / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def memory_text(name: str, description: str = "A note.", kind: str = "feedback") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nThe body.\n"

"""What the composition tests share: chapter 8's agent (chapters/ch08/agent.py) on scripted
streams, in tmp_path/ws, as the command line builds it.

Each run has its own script, keyed by the prompt it starts with (chapter 7's
`AgentStreams`): the parent's by the prompt given to `run`, a child's by its
task's prompt. A compaction's summary request starts with the parent's prompt
too (the head of a history is kept verbatim), so it takes the parent's next step.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, chunk, text_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch08.compaction import COMPACT_MARK, Compactor
from chapters.ch08.transcript import Transcript
from chapters.testing import agent_of
from shared.agent import AgentSpec
from shared.messages import Message
from shared.process import CommandRunner

RUN_ID = "run-1"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def args(**arguments: Any) -> str:
    return json.dumps(arguments)


def counted(stream: list[dict[str, Any]], prompt_tokens: int) -> list[dict[str, Any]]:
    """A stream that ends with the usage chunk a provider sends: how big the request was."""
    return [*stream, chunk(None, usage={"prompt_tokens": prompt_tokens, "completion_tokens": 9})]


def reads(*paths: str, first: int = 1, tokens: int | None = None) -> list[dict[str, Any]]:
    """One reply reading `paths` side by side (call ids from `first` on)."""
    calls = [(f"call_{first + n}", "read_file", args(path=p)) for n, p in enumerate(paths)]
    stream = calls_stream(*calls)
    return stream if tokens is None else counted(stream, tokens)


def answer(text: str = "done") -> list[dict[str, Any]]:
    return text_stream(text)


def summary(text: str = "SUMMARY: what was read, and what is left.") -> list[dict[str, Any]]:
    return text_stream(text)


def is_compaction(request: Mapping[str, Any]) -> bool:
    last = request["messages"][-1]
    return last["role"] == "user" and str(last["content"]).startswith(COMPACT_MARK)


def write_files(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")


def lines_of(size: int, word: str = "line") -> str:
    """About `size` characters of numbered lines."""
    return "".join(f"{word} {n:05d} " + "x" * 50 + "\n" for n in range(size // 62 + 1))


@dataclass
class Agent8:
    """Chapter 8's agent in tmp_path/ws on scripted streams, every option at hand."""

    tmp_path: Path
    scripts: Mapping[str, Sequence[AgentStep]]
    files: Mapping[str, str] = field(default_factory=dict)
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    console: StreamingConsole = field(default_factory=recording_console)
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    options: Mapping[str, Any] = field(default_factory=dict)  # agent_of's: options, services
    history: list[Message] = field(default_factory=list)
    model: AgentStreams | None = None
    spec: AgentSpec | None = None

    @property
    def root(self) -> Path:
        folder = self.tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        return folder

    def build(self) -> AgentSpec:
        """Chapter 8's agent, from its recipe; the policy, hooks and agents as the command
        reads them (from tmp_path/ws and tmp_path/home)."""
        write_files(self.root, self.files)
        self.model = AgentStreams(self.scripts)
        self.spec = agent_of(
            8,
            model=self.model,
            console=self.console,
            asker=self.asker,
            workspace=Workspace(self.root),
            home=self.tmp_path / "home",
            audit=AuditLog(self.tmp_path / "audit.jsonl"),
            run_id=RUN_ID,
            runner=self.runner,
            **self.options,
        )
        return self.spec

    def run(self, prompt: str) -> str:
        return run_agent(prompt, self.spec or self.build(), history=self.history)

    def requests_of(self, prompt: str) -> list[dict[str, Any]]:
        assert self.model is not None
        return self.model.requests_of(prompt)

    def feature(self, kind: type[Any]) -> Any:
        assert self.spec is not None
        return next(f for f in self.spec.features if isinstance(f, kind))

    @property
    def compactor(self) -> Compactor:
        compactor: Compactor = self.feature(Compactor)
        return compactor

    @property
    def transcript(self) -> list[dict[str, Any]]:
        transcript: Transcript = self.feature(Transcript)
        text = transcript.path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]

    def saved(self, name: str) -> Path:
        return self.root / ".tutorial" / "tool-results" / name

    def printed(self) -> str:
        assert isinstance(self.console.err, io.StringIO)
        return ANSI.sub("", self.console.err.getvalue())

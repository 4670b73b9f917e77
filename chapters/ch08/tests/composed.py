"""What the composition tests share: chapter 8's agent (chapters/ch08/agent.py) on scripted
streams, in tmp_path/ws, as the command line builds it.

Each run has its own script, keyed by the prompt it starts with (chapter 7's
`AgentStreams`): the parent's by the prompt given to `run`, a child's by its
task's prompt. A compaction's summary request starts with the parent's prompt
too (the head of a history is kept verbatim), so it takes the parent's next step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, chunk, text_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import recording_console
from chapters.ch08.compaction import COMPACT_MARK, Compactor
from chapters.ch08.transcript import Transcript
from chapters.testing import AgentRun
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
class Agent8(AgentRun[AgentStreams]):
    """Chapter 8's agent in tmp_path/ws on scripted streams, every option at hand."""

    chapter = 8
    scripts: Mapping[str, Sequence[AgentStep]]
    files: Mapping[str, str] = field(default_factory=dict)
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    _: KW_ONLY
    console: StreamingConsole = field(default_factory=recording_console)

    def make_model(self) -> AgentStreams:
        write_files(self.root, self.files)
        return AgentStreams(self.scripts)

    def given(self) -> dict[str, Any]:
        audit = AuditLog(self.tmp_path / "audit.jsonl")
        return {"asker": self.asker, "audit": audit, "run_id": RUN_ID, "runner": self.runner}

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

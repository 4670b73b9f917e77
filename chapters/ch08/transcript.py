"""The run's transcript: every message, as it entered the history, one JSON line each.

Shortening the history must lose nothing. So before any message can be
replaced (by a stub, or by a summary), it is already on disk:

    .tutorial/transcripts/<run-id>.jsonl     in the workspace
    {"turn": 3, "message": {"role": "tool", "tool_call_id": "call_2", "content": "..."}}

A feature that listens to `on_message`, so each line is written the moment its
message enters the history (turn 0: before the first request), and a compacted
run can always be read back whole. A summary that replaces old messages is
written too, marked `"note": "summary"`.

The file is opened by chapter 3's harness_files.py: never through a link, and
only in a folder that stays inside the workspace. A `.tutorial/transcripts`
that links out, or a transcript file that is a link, is a line that cannot be
written.

If a line cannot be written, the run goes on, the console says so once, and
`intact` turns False for good: the features that shorten the history then
replace nothing whose only copy would have been here.

A subclass may keep its file in another folder (`folder`) and write lines of
its own beside the messages (`write_line`), with the same flush-at-once and
the same say-it-once failure.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from chapters.ch03.harness_files import APPEND, open_harness_file, reason
from shared.agent import Feature, Run
from shared.console import Console
from shared.messages import Message

TRANSCRIPTS_FOLDER = Path(".tutorial") / "transcripts"  # below the workspace


def new_run_id(now: datetime | None = None) -> str:
    """A run's name for its files: sorts by start time, never repeats, safe on every system."""
    started = now or datetime.now()
    return f"{started:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@dataclass
class Transcript(Feature):
    folder: ClassVar[Path] = TRANSCRIPTS_FOLDER  # below the workspace
    root: Path  # the workspace
    run_id: str
    failure: str | None = None  # why a line could not be written, once one could not
    lines: int = 0  # lines written
    heard: int = 0  # messages handed to `record`, written or not

    @property
    def path(self) -> Path:
        return self.root / self.folder / f"{self.run_id}.jsonl"

    @property
    def shown(self) -> str:
        """The path as the model and the console see it: relative to the workspace."""
        return (self.folder / f"{self.run_id}.jsonl").as_posix()

    @property
    def intact(self) -> bool:
        """Whether every message so far is in the file."""
        return self.failure is None

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        if self.heard == 0:  # a history passed in: its messages never entered through `add`
            for message in run.history:
                self.record(run, message)
        return ()

    def on_message(self, run: Run, message: Message) -> None:
        self.record(run, message)

    def record(self, run: Run, message: Message, note: str | None = None) -> bool:
        """Append one message's line; False (said once, never raised) if it was not written."""
        self.heard += 1
        line: dict[str, object] = {"turn": run.turn, "message": message.wire}
        if note:
            line["note"] = note
        return self.write_line(run.agent.console, line)

    def write_line(self, console: Console, line: Mapping[str, object]) -> bool:
        """Append one JSON line, flushed at once; a failure is said once and remembered."""
        try:
            descriptor = open_harness_file(self.root, self.folder / self.path.name, APPEND)
            # A lone surrogate becomes its \u escape: the line stays JSON that reads back the same.
            with open(
                descriptor, "a", encoding="utf-8", errors="backslashreplace", newline="\n"
            ) as file:
                file.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError as error:
            if self.failure is None:
                console.notice(
                    f"harness: cannot write the transcript {self.shown} "
                    f"({reason(error, self.shown)}); nothing "
                    "in this run's history will be replaced unless it is saved elsewhere"
                )
            self.failure = str(error)
            return False
        self.lines += 1
        return True

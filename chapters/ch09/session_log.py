"""The session log: every run is a session, written down line by line, so that it can go on later.

Chapter 8's transcript becomes this log. The same feature writes the same
message lines, flushed the moment each message enters the history, and adds
what resuming needs: what the session is, how each run of it ended, and the
history as the agent last saw it after something replaced it.

    .tutorial/sessions/<session-id>.jsonl     in the workspace, one JSON object a line

    {"session": {"id": "20260501-100000-a1b2c3", "chapter": 9, "model": "qwen2.5-coder",
                 "started": "2026-05-01T10:00:00+08:00", "prompt": "..."}}
                                        the first line: what the session is
    {"turn": 0, "message": {...}}       a message as it entered the history
    {"turn": 3, "message": {...}, "note": "summary"}
                                        a message kept beside the history (chapter 8's
                                        summary is written here before it is used): read
                                        by people, never replayed
    {"turn": 4, "history": [0, 1, {...}, 5, 6]}
                                        the history was replaced (compaction, an old result
                                        stubbed, a repair): the new history in full, each
                                        message either as its position in the history before
                                        this line, or written out when it is new
    {"turn": 5, "end": "answered"}      how a run ended: answered, failed (with "error"),
                                        or interrupted (Ctrl-C)
    {"resumed": {"started": "...", "chapter": 9, "model": "...", "prompt": "..."}}
                                        a later run goes on with this session; its own
                                        system prompt takes the place of the log's (a
                                        history line, noted, when the two differ)

Replaying the lines in order (chapters/ch09/sessions.py) gives the history the
agent last saw: message lines append, a history line puts its list in place.
So a compacted session resumes compacted, not as the raw messages it started
from, and the log stays append-only: no whole line is ever rewritten (only a
last line cut half-way is dropped, when a resumed run appends, see resume.py).

The history cannot say it was replaced (`Run.replace_history` tells no
feature), so the log compares, by identity, the history with what it wrote
each time it hears from the loop: before a message's line, before each request
and at the end. Listed after the features that shorten the history before a
request, it writes their result before the request goes out; listed anywhere,
it writes it before the next message. What the log holds is `logged`: exactly
what a reader rebuilds from the file, so a line that could not be written is
never counted as there.

A log belongs to one agent's runs: the person's. A sub-agent's history is its
own and short-lived, so its features never include the log (it would write the
child's history over the parent's).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from chapters.ch08.transcript import Transcript, new_run_id
from shared.agent import Run
from shared.errors import one_line
from shared.messages import Message, SystemMessage

SESSIONS_FOLDER = Path(".tutorial") / "sessions"  # below the workspace
ANSWERED, FAILED, INTERRUPTED = "answered", "failed", "interrupted"
ERROR_CHARS = 300  # of a failed run's error, on its end line
PROMPT_REPLACED = "system prompt: this run's, not the log's"  # the note on its history line


@dataclass
class SessionLog(Transcript):
    """The log of one session: the first run starts it, a resumed run appends to it."""

    folder: ClassVar[Path] = SESSIONS_FOLDER
    chapter: int = 0  # which chapter's agent wrote the run
    started: datetime = field(default_factory=datetime.now)  # when this run started
    continuing: bool = False  # a resumed run: the file exists and `logged` is what it holds
    logged: list[Message] = field(default_factory=list)  # the history the file rebuilds to
    repair_note: str | None = None  # a resumed run: why its first history line was written
    _begun: bool = field(default=False, init=False)  # its first line is written (or was tried)

    @classmethod
    def new(cls, root: Path, chapter: int, now: datetime | None = None) -> SessionLog:
        """The log of a new session, named after its start time."""
        started = now or datetime.now()
        return cls(root, new_run_id(started), chapter=chapter, started=started)

    @property
    def session_id(self) -> str:
        return self.run_id

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        self._begin(run)
        note = self.repair_note
        if self.continuing:
            own = with_system_prompt(run.history, run.agent.system_prompt)
            if own is not None:
                run.replace_history(own)
                note = "; ".join(filter(None, [note, PROMPT_REPLACED]))
        # A history passed in (a resumed one, repaired) never entered through `add`.
        self._sync(run, len(run.history), note)
        return ()

    def on_message(self, run: Run, message: Message) -> None:
        self._begin(run)
        newest = bool(run.history) and run.history[-1] is message
        self._sync(run, len(run.history) - 1 if newest else len(run.history))
        if self.record(run, message):
            self.logged.append(message)

    def before_request(self, run: Run) -> None:
        self._begin(run)
        self._sync(run, len(run.history))

    def on_end(self, run: Run, error: BaseException | None) -> None:
        self._begin(run)
        self._sync(run, len(run.history))
        line: dict[str, object] = {"turn": run.turn, "end": ended(error)}
        if error is not None and not isinstance(error, KeyboardInterrupt):
            line["error"] = one_line(f"{type(error).__name__}: {error}", ERROR_CHARS)
        self.write_line(run.agent.console, line)

    def _begin(self, run: Run) -> None:
        """The first line of this run: the session's own, or the note that it goes on."""
        if self._begun:
            return
        self._begun = True
        about: Mapping[str, object] = {
            "started": self.started.astimezone().isoformat(timespec="seconds"),
            "chapter": self.chapter,
            "model": run.agent.model.name,
            "prompt": run.prompt,
        }
        if self.continuing:
            self.write_line(run.agent.console, {"resumed": about})
        else:
            self.write_line(run.agent.console, {"session": {"id": self.session_id, **about}})

    def _sync(self, run: Run, upto: int, note: str | None = None) -> None:
        """Unless the first `upto` messages are what the file holds, write them as one line."""
        now = run.history[:upto]
        if len(now) == len(self.logged) and all(map(operator.is_, now, self.logged)):
            return
        position = {id(message): index for index, message in enumerate(self.logged)}
        entries = [position.get(id(message), message.wire) for message in now]
        line: dict[str, object] = {"turn": run.turn, "history": entries}
        if note:
            line["note"] = note
        if self.write_line(run.agent.console, line):
            self.logged = list(now)


def with_system_prompt(history: Sequence[Message], prompt: str) -> list[Message] | None:
    """`history` with `prompt` as its one system message, first; None if it has that already.

    A resumed run goes on with the log's conversation, never with the log's system
    prompt: the log is a file anyone who can write in the workspace can change, and
    the prompt is the chapter's, built for this run (a log without one would go out
    with none). Any system message the log holds is left out.
    """
    rest = [message for message in history if message.role != "system"]
    first = history[0] if history else None
    if not (isinstance(first, SystemMessage) and first.content == prompt):
        first = SystemMessage(content=prompt)
    elif len(rest) == len(history) - 1:
        return None  # the prompt, first, and no other: nothing to change
    return [first, *rest]


def ended(error: BaseException | None) -> str:
    """How a run ended, in the listing's words."""
    if error is None:
        return ANSWERED
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    return FAILED

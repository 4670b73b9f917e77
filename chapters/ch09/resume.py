"""Resuming a session: `--resume [ID]` goes on with an earlier session, with a new prompt.

    1. find it (chapters/ch09/sessions.py): the most recent session of the workspace,
       or the one whose id is ID or starts with it; an unknown or ambiguous id is
       exit 2, with the sessions listed
    2. replay its log into the history the agent last saw; a line that cannot be read
       (a last line cut half-way by SIGKILL) is skipped with a warning
    3. repair that history (chapters/ch09/repair.py): every call answered, every
       result matched to its call
    4. append to the same log: a cut last line is dropped first, so the next line
       starts on a line of its own; then the `resumed` line, the repair as a
       history line (noted "repair: ..."), and the run's messages
    5. the first request carries the old history and the new prompt; one longer than
       the context window is compacted first (`CompactFirst`), never sent whole

A composition module puts the pieces together like this (the log takes the
place of chapter 8's transcript, so the compactor writes its summaries there):

    resumed = resume_session(root, wanted, chapter=N, console=console)
    compactor = Compactor(resumed.log, window=window)
    features = [..., CompactFirst(window, compactor.compact), compactor, resumed.log]
    run_agent(prompt, spec_with(features), history=resumed.history)

A command line does 1 to 4, or starts a new session, with `open_session`, which also
says on the console which session the run writes to.

One run at a time per session: two runs appending to one log interleave their
lines, and neither history can be replayed from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from chapters.ch03.harness_files import open_harness_file, reason
from chapters.ch08.measure import messages_tokens, tools_tokens
from chapters.ch09.repair import Repair, repair_history
from chapters.ch09.session_log import SESSIONS_FOLDER, SessionLog
from chapters.ch09.sessions import StoredSession, find_session
from shared.agent import Feature, Run
from shared.console import Console
from shared.errors import AgentError
from shared.messages import Message

# Shortens the run's history in place; True if it did. `size` is the estimate that
# made it necessary. Chapter 8's `Compactor.compact` is one.
Compact = Callable[[Run, int], bool]


@dataclass(frozen=True)
class Resumed:
    """A session ready to go on: the log to append to and the history to start from."""

    session: StoredSession  # as it was read
    log: SessionLog  # a feature: list it where a transcript would go
    history: list[Message]  # repaired: pass it to `run_agent(..., history=...)`
    repair: Repair


def resume_session(
    root: Path,
    wanted: str | None,
    *,
    chapter: int,
    console: Console,
    now: datetime | None = None,
) -> Resumed:
    """Find the session (`SessionNotFound`: exit 2), read it, repair it, and open its log."""
    session = find_session(root, wanted)
    for warning in session.warnings:
        console.notice(f"harness: {session.shown}: {warning}")
    repair = repair_history(session.history)
    log = SessionLog(
        root,
        session.id,
        chapter=chapter,
        started=now or datetime.now(),
        continuing=True,
        logged=list(session.history),
        repair_note=repair.note or None,
    )
    mend_tail(root, session, console)
    repaired = f"; {repair.note}" if repair.changed else ""
    console.notice(
        f"harness: resuming session {session.id} ({len(session.history)} messages, "
        f"{session.turns} turn{'' if session.turns == 1 else 's'}; its last run {session.ended})"
        f"{repaired}"
    )
    return Resumed(session, log, repair.history, repair)


def open_session(
    root: Path,
    wanted: str | None,
    *,
    chapter: int,
    console: Console,
    new_log: Callable[[], SessionLog] | None = None,
) -> tuple[SessionLog, list[Message]]:
    """The log a run writes to and the history it starts from, said on the console.

    `wanted` None: a new session (`new_log()`, by default one named after the
    time); "": the most recent session; else the session whose id is or starts
    with `wanted`, resumed as `resume_session` does.
    """
    if wanted is None:
        log = new_log() if new_log else SessionLog.new(root, chapter)
        history: list[Message] = []
    else:
        resumed = resume_session(root, wanted or None, chapter=chapter, console=console)
        log, history = resumed.log, resumed.history
    kind = "resumed" if log.continuing else "new"
    console.info(f"session: {log.session_id} ({kind}) · log: {log.shown}")
    return log, history


def mend_tail(root: Path, session: StoredSession, console: Console) -> None:
    """Make the log end with a whole line, so the next line appended stands on its own.

    Opened as every harness file is (chapters/ch03/harness_files.py): a log that has
    become a link since it was read is refused, never cut.
    """
    relative = SESSIONS_FOLDER / session.path.name
    try:
        if session.unterminated:
            descriptor = open_harness_file(root, relative, os.O_WRONLY | os.O_APPEND)
            with open(descriptor, "ab") as file:
                file.write(b"\n")
        elif session.whole < os.path.getsize(session.path):
            descriptor = open_harness_file(root, relative, os.O_RDWR)
            with open(descriptor, "r+b") as file:
                file.truncate(session.whole)
    except OSError as error:
        console.notice(
            f"harness: cannot mend the end of {session.shown} ({reason(error, session.shown)})"
        )


class ResumedTooLong(AgentError):
    """The resumed history does not fit the context window, even after compacting."""

    def __init__(self, size: int, window: int) -> None:
        super().__init__(
            f"the resumed session is about {size:,} tokens, more than the {window:,}-token "
            "context window, and could not be compacted to fit, so it was not sent. Start a "
            "new session, or resume with a larger context window if the model has one."
        )
        self.size, self.window = size, window


@dataclass
class CompactFirst(Feature):
    """Before the first request: a history longer than the window is compacted, or not sent.

    Any history could be checked this way; only a resumed one can be this long
    before its first request. List it before the features that measure or
    compact the context at every request.
    """

    window: int  # tokens
    compact: Compact
    checked: bool = field(default=False, init=False)

    def before_request(self, run: Run) -> None:
        if self.checked:
            return
        self.checked = True
        size = estimate(run)
        if size <= self.window:
            return
        run.agent.console.notice(
            f"harness: the resumed history is about {size:,} tokens, over the "
            f"{self.window:,}-token window: compacting it before the first request"
        )
        if not self.compact(run, size) or estimate(run) > self.window:
            raise ResumedTooLong(size, self.window)


def estimate(run: Run) -> int:
    """The next request's size as chapter 8 estimates it: its messages and its tool schemas.

    Before a run's first request no provider has counted anything, so this is all
    there is to go by.
    """
    return messages_tokens(run.history) + tools_tokens(run.agent.tools.snapshot().schemas())

"""Reading the session logs back: one session, the sessions of a folder, and the one you asked for.

A log (chapters/ch09/session_log.py says what each line is) is replayed line by
line into the history the agent last saw. What a killed run leaves is read as
far as it goes:

    a last line cut half-way      (SIGKILL or a power cut while it was written) skipped
                                  with a warning; everything before it is kept
    any other line that is not    skipped with a warning naming the line; the repair
    one this log writes           (chapters/ch09/repair.py) mends what that leaves open
    no end line after a run's     the run was killed (or is still running): it counts
    start                         as interrupted

Nothing here raises for what is inside a file: a broken log is a session with
warnings, and only a file that cannot be read at all is left out of a listing.

Which session `--resume` means (`find_session`): without an id, the most
recent, the one whose latest run started last; with one, the session whose
id it is or starts with. An unknown or ambiguous id is a `SessionNotFound`:
exit 2, with the most recent sessions (or the ones it could mean) listed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from chapters.ch02.text_files import READ_FLAGS, read_open_file, read_regular_file
from chapters.ch03.harness_files import harness_folder, open_harness_file, reason
from chapters.ch09.session_log import ANSWERED, FAILED, INTERRUPTED, SESSIONS_FOLDER
from shared.errors import ConfigError, one_line
from shared.messages import Message
from shared.text import clean_json

LOG_SUFFIX = ".jsonl"
SHOWN_IN_ERRORS = 5  # sessions listed when an id matches none, or too many
PROMPT_CHARS = 60  # of the first prompt, in a listing row
ENDS = (ANSWERED, FAILED, INTERRUPTED)


class SessionNotFound(ConfigError):
    """`--resume` named no session, or several: the message lists the ones there are."""

    def cli_line(self) -> str:
        return f"会话 session: {self}"


@dataclass(frozen=True)
class StoredSession:
    """A session as its log tells it."""

    id: str
    path: Path
    history: tuple[Message, ...]  # what the agent last saw, replayed from the log
    started: str = ""  # the session's first run, as written: ISO 8601 with its offset
    chapter: int | None = None
    model: str = ""
    prompt: str = ""  # the first run's prompt
    latest_start: str = ""  # when its latest run started: what "most recent" goes by
    runs: int = 0  # runs that wrote a session or resumed line
    turns: int = 0  # model replies over all its runs (what --max-turns counts)
    ended: str = INTERRUPTED  # how its latest run ended: answered, failed, interrupted
    error: str = ""  # why it failed, when it did
    warnings: tuple[str, ...] = ()  # lines skipped, and why
    whole: int = 0  # bytes of whole lines; after them, a last line cut half-way
    unterminated: bool = False  # the last line is whole but has no newline after it

    @property
    def shown(self) -> str:
        """The log's path as people see it: relative to the workspace."""
        return (SESSIONS_FOLDER / self.path.name).as_posix()

    def row(self) -> str:
        """One line of a listing: id, start, turns, how it ended, the first prompt."""
        started = self.started[:16].replace("T", " ") or "?"
        prompt = one_line(self.prompt, PROMPT_CHARS) if self.prompt else "?"
        return f"{self.id}  {started:<16}  {self.turns:>5}  {self.ended:<11}  {prompt}"


HEADER = f"{'ID':<22}  {'STARTED':<16}  {'TURNS':>5}  {'ENDED':<11}  FIRST PROMPT"


@cache
def _messages() -> TypeAdapter[Message]:
    return TypeAdapter(Message)


def read_session(path: Path) -> StoredSession:
    """Replay the log at `path`; raise OSError only if it cannot be read at all."""
    return replay(path, read_regular_file(path))


def replay(path: Path, data: bytes) -> StoredSession:
    """The session the log `data`, read from `path`, tells."""
    return _Replay().read(path, data)


class _Replay:
    """The state of one replay, line by line."""

    def __init__(self) -> None:
        self.history: list[Message] = []
        self.meta: dict[str, Any] = {}
        self.latest, self.runs, self.turns = "", 0, 0
        self.ended, self.error = INTERRUPTED, ""
        self.warnings: list[str] = []

    def read(self, path: Path, data: bytes) -> StoredSession:
        *ended_lines, tail = data.split(b"\n")  # `tail`: after the last newline, b"" if none
        for number, raw in enumerate(ended_lines, 1):
            if raw.strip():
                line = _json_object(raw)
                if line is None:
                    self.warnings.append(f"line {number} is not a JSON object: skipped")
                else:
                    self.take(number, line)
        whole, unterminated = len(data) - len(tail), False
        if tail.strip():
            line = _json_object(tail)
            if line is None:
                self.warnings.append(
                    f"line {len(ended_lines) + 1} was cut half-way (the run was stopped while "
                    "writing it): skipped, everything before it is kept"
                )
            else:  # whole, but stopped before its newline
                self.take(len(ended_lines) + 1, line)
                whole, unterminated = len(data), True
        return StoredSession(
            id=path.stem,
            path=path,
            history=tuple(self.history),
            started=str(self.meta.get("started", "")),
            chapter=_int(self.meta.get("chapter")),
            model=str(self.meta.get("model", "")),
            prompt=str(self.meta.get("prompt", "")),
            latest_start=self.latest,
            runs=self.runs,
            turns=self.turns,
            ended=self.ended,
            error=self.error,
            warnings=tuple(self.warnings),
            whole=whole,
            unterminated=unterminated,
        )

    def take(self, number: int, line: dict[str, Any]) -> None:
        """One line's effect on the session; a line it cannot use is skipped with a warning."""
        if isinstance(line.get("session"), dict) or isinstance(line.get("resumed"), dict):
            about = line["session"] if isinstance(line.get("session"), dict) else line["resumed"]
            if not self.meta:
                self.meta = about
            self.latest = str(about.get("started", self.latest))
            self.runs += 1
            self.ended, self.error = INTERRUPTED, ""  # until this run's end line
        elif "message" in line:
            if "note" in line:
                return  # beside the history, not in it
            message = self.message(number, line["message"])
            if message is not None:
                self.history.append(message)
                self.turns += message.role == "assistant"
        elif isinstance(line.get("history"), list):
            self.replace(number, line["history"])
        elif line.get("end") in ENDS:
            self.ended, self.error = str(line["end"]), str(line.get("error", ""))
        else:
            self.warnings.append(f"line {number} is not a line a session log has: skipped")

    def message(self, number: int, wire: object) -> Message | None:
        try:
            return _messages().validate_python(wire)
        except ValidationError as error:
            problem = one_line(str(error), 200)
            self.warnings.append(f"line {number} holds no message this log writes ({problem})")
            return None

    def replace(self, number: int, entries: list[Any]) -> None:
        new: list[Message] = []
        for entry in entries:
            if isinstance(entry, int) and not isinstance(entry, bool):
                if not 0 <= entry < len(self.history):
                    self.warnings.append(
                        f"line {number} names message {entry} of a history of "
                        f"{len(self.history)}: skipped"
                    )
                    return
                new.append(self.history[entry])
            else:
                message = self.message(number, entry)
                if message is None:
                    return
                new.append(message)
        self.history = new


def _json_object(raw: bytes) -> dict[str, Any] | None:
    """One line as JSON; a lone surrogate it holds as an escape becomes U+FFFD (shared/text.py)."""
    try:
        value = clean_json(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def list_sessions(root: Path) -> tuple[list[StoredSession], list[str]]:
    """The sessions of the workspace `root`, most recent first, and the logs that cannot be read.

    The logs are the harness's own files: read without following a link, from a
    folder that stays inside the workspace (chapters/ch03/harness_files.py), so
    that resuming never cuts or appends to a file elsewhere.
    """
    shown_folder = SESSIONS_FOLDER.as_posix()
    try:
        folder = harness_folder(root, SESSIONS_FOLDER)
        names = sorted(
            entry.name
            for entry in os.scandir(folder)
            if Path(entry.name).suffix == LOG_SUFFIX and not entry.is_dir(follow_symlinks=False)
        )
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"{shown_folder} cannot be read ({reason(error, shown_folder)})"]
    sessions: list[StoredSession] = []
    problems: list[str] = []
    for name in names:
        relative = SESSIONS_FOLDER / name
        try:
            data = read_open_file(open_harness_file(root, relative, READ_FLAGS))
        except OSError as error:
            shown = relative.as_posix()
            problems.append(f"{shown} cannot be read ({reason(error, shown)})")
            continue
        sessions.append(replay(root / relative, data))
    sessions.sort(key=_recency, reverse=True)
    return sessions, problems


def _recency(session: StoredSession) -> tuple[float, str]:
    """When its latest run started; a log that does not say, by its file's last change."""
    try:
        moment = datetime.fromisoformat(session.latest_start).timestamp()
    except ValueError:
        try:
            moment = session.path.stat().st_mtime
        except OSError:
            moment = 0.0
    return moment, session.id


def find_session(root: Path, wanted: str | None) -> StoredSession:
    """The session `--resume` means: the most recent, or the one `wanted` is (the start of).

    A log that could not be read is named in the error, so that a session that
    seems to be missing is explained.
    """
    sessions, problems = list_sessions(root)
    left_out = "".join(f"\nleft out: {problem}" for problem in problems)
    if not sessions:
        raise SessionNotFound(
            f"there is no session to resume in {root}: a session is started by a run of "
            f"chapter 9 or later in this folder{left_out}"
        )
    if wanted is None:
        return sessions[0]
    exact = [s for s in sessions if s.id == wanted]
    matches = exact or [s for s in sessions if s.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise SessionNotFound(
            f"{wanted!r} is the start of {len(matches)} session ids; give more of the one you "
            f"mean:\n{table(matches)}"
        )
    raise SessionNotFound(
        f"no session id in {root} is or starts with {wanted!r}; the most recent:\n"
        f"{table(sessions)}{left_out}"
    )


def table(sessions: Sequence[StoredSession], limit: int = SHOWN_IN_ERRORS) -> str:
    """The header and the first `limit` rows, and how many more there are."""
    rows = [HEADER, *(session.row() for session in sessions[:limit])]
    if len(sessions) > limit:
        rows.append(f"... and {len(sessions) - limit} more: python -m tutorial sessions")
    return "\n".join(rows)

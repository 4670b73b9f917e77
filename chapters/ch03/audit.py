"""The audit trail: every decision, allows included, one JSON line each, as it happens.

Each line is flushed before the call goes on, so the record exists even if
the process dies a moment later. If the line cannot be written, the call is
denied: no record, no action. A call that ran gets a second line with its
outcome (`"outcome": "ok"`, or the failure's keyword), so an allow the tool
itself then refused, such as a path outside the workspace, is visible too.

"Written" means written to the file the path names now. An open file outlives
its name: after `rm .tutorial/audit.jsonl`, or when the file is replaced, lines
written to the old handle go to a file nobody can read. So before each line the
handle is compared with the path (device and inode, `os.fstat` against
`os.stat`) and reopened if they differ, and after the line it is compared again:
if the file was swapped while the line was written, the call is denied.

Nor is a line written through a link. The file is opened by harness_files.py:
its folder must stay inside `inside` (the workspace, for the command line's
log), and the file itself must be a regular file, not a link. A `.tutorial`
that links out of the workspace, or an `audit.jsonl` that links anywhere, is a
line that cannot be written safely, so the call is denied like any other.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from chapters.ch03.harness_files import APPEND, open_harness_file

AUDIT_FILE = Path(".tutorial") / "audit.jsonl"


class AuditError(OSError):
    """The audit line could not be written; the call it describes must not run."""


class AuditLog:
    def __init__(self, path: Path, *, inside: Path | None = None) -> None:
        """The log at `path`, which must stay inside the folder `inside` (by default its own
        folder): a link on the way that leads out of it is refused."""
        self.path = path
        self.inside = inside if inside is not None else path.parent
        self._relative = path.relative_to(self.inside)  # ValueError if it is not inside
        self._file: IO[str] | None = None

    def record(
        self, *, call_id: str, tool: str, key: str | None, decision: str, source: str
    ) -> None:
        """A decision, before the call goes on."""
        self._write(
            {
                "tool_call_id": call_id,
                "tool": tool,
                "key": key,
                "decision": decision,
                "source": source,
            }
        )

    def record_outcome(self, *, call_id: str, tool: str, key: str | None, outcome: str) -> None:
        """What came of a call that ran: "ok", or the keyword of its failure."""
        self._write({"tool_call_id": call_id, "tool": tool, "key": key, "outcome": outcome})

    def _write(self, record: dict[str, str | None]) -> None:
        line = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), **record}
        try:
            file = self._current_file()
            file.write(json.dumps(line, ensure_ascii=False) + "\n")
            file.flush()
            if not self._names(file):
                raise OSError("the file was removed or replaced while the line was written")
        except OSError as error:
            raise AuditError(f"cannot write the audit log {self.path}: {error}") from error

    def _current_file(self) -> IO[str]:
        """The open file if the path still names it; else the file the path names now."""
        if self._file is not None and self._names(self._file):
            return self._file
        self.close()
        descriptor = open_harness_file(self.inside, self._relative, APPEND)
        self._file = os.fdopen(descriptor, "a", encoding="utf-8")  # kept open: closed by close()
        return self._file

    def _names(self, file: IO[str]) -> bool:
        """Whether `self.path` names the open `file`. A check that fails raises (and denies)."""
        held = os.fstat(file.fileno())
        try:
            named = os.lstat(self.path)  # a link in the file's place names nothing of ours
        except FileNotFoundError:
            return False
        return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            with contextlib.suppress(OSError):  # closing a handle whose file is gone
                file.close()

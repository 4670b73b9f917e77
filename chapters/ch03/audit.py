"""The audit trail: every decision, allows included, one JSON line each, as it happens.

Each line is flushed before the call goes on, so the record exists even if
the process dies a moment later. If the line cannot be written, the call is
denied: no record, no action. A call that ran gets a second line with its
outcome (`"outcome": "ok"`, or the failure's keyword), so an allow the tool
itself then refused, such as a path outside the workspace, is visible too.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

AUDIT_FILE = Path(".tutorial") / "audit.jsonl"


class AuditError(OSError):
    """The audit line could not be written; the call it describes must not run."""


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
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
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._file.flush()
        except OSError as error:
            raise AuditError(f"cannot write the audit log {self.path}: {error}") from error

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

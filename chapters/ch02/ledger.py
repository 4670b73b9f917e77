"""What the agent has read in this run: the read-before-write rule.

An agent that overwrites a file it never read, or that it read before
someone (the human, a formatter, another command) changed it, destroys work
it never saw. So a write or an edit of an existing file needs a read of that
file in this run, and the file's bytes must still hash to what was read.
After a write the ledger holds the new hash, so a second edit needs no re-read.
"""

from __future__ import annotations

from pathlib import Path

from shared.tools import ToolResult


class ReadLedger:
    def __init__(self) -> None:
        self._digests: dict[Path, str] = {}

    def record(self, path: Path, digest: str) -> None:
        self._digests[path] = digest

    def problem(self, path: Path, shown_as: str, current_digest: str) -> ToolResult | None:
        """None if `path` may be overwritten; else a result that tells the model what to do."""
        seen = self._digests.get(path)
        if seen is None:
            return ToolResult.failed(
                "not_read",
                f"{shown_as} exists and you have not read it in this run; read it with "
                "read_file first (existing files are never overwritten unseen). Nothing changed.",
            )
        if seen != current_digest:
            return ToolResult.failed(
                "stale",
                f"{shown_as} changed since you read it; read it again with read_file, "
                "then redo the change. Nothing changed.",
            )
        return None

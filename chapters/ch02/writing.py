"""write_file and edit_file: planned without side effects, shown as a diff, then applied.

Each call is planned twice: once while it is prepared, to show the human the
diff (and to refuse, without asking anyone, a call that is bound to fail), and
again when it runs, so the checks hold at the moment of writing. The
read-before-write check makes the second plan identical to the first: if the
file changed in between, its hash no longer matches and the write is refused.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch02.guard import file_errors_as_results
from chapters.ch02.ledger import ReadLedger
from chapters.ch02.path_text import PathText
from chapters.ch02.text_files import (
    NEW_FILE,
    TextFile,
    atomic_write,
    digest_of,
    is_temp_name,
    load_text,
)
from chapters.ch02.workspace import Workspace
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

# A temp file untouched this long belongs to a write that will never finish.
STALE_TEMP_SECONDS = 15 * 60


class WriteFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: PathText = Field(min_length=1, description="File path, relative to the workspace root.")
    content: str = Field(description="The whole new content of the file.")


class EditFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: PathText = Field(min_length=1, description="File path, relative to the workspace root.")
    old_string: str = Field(min_length=1, description="Exact text to replace.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


@dataclass(frozen=True)
class PlannedWrite:
    path: Path
    shown: str  # the workspace-relative path, as the model and the human see it
    before: TextFile  # NEW_FILE when the file does not exist yet
    after: str  # the new text, newlines as "\n"
    summary: str

    def diff(self) -> str:
        old = self.before.text.splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        source = "/dev/null" if self.before is NEW_FILE else f"a/{self.shown}"
        return "".join(difflib.unified_diff(old, new, source, f"b/{self.shown}"))

    def apply(self, ledger: ReadLedger) -> ToolResult:
        data = self.before.encode(self.after)
        atomic_write(self.path, data)
        ledger.record(self.path, digest_of(data))  # the agent knows what it just wrote
        return ToolResult.success(f"ok: {self.summary}; {self.shown} now has {_count(self.after)}.")


def make_write_tools(workspace: Workspace, ledger: ReadLedger) -> list[PydanticTool]:
    swept: list[Path] = []  # the root, once its stale temp files are gone

    @file_errors_as_results
    def plan_write(args: WriteFileArgs) -> PlannedWrite | ToolResult:
        path, shown = _target(workspace, args.path)
        content = args.content.replace("\r\n", "\n")
        if not path.exists():
            return PlannedWrite(path, shown, NEW_FILE, content, f"created {shown}")
        before = _existing(path, shown, ledger)
        if isinstance(before, ToolResult):
            return before
        return _changed(PlannedWrite(path, shown, before, content, f"replaced {shown}"))

    @file_errors_as_results
    def plan_edit(args: EditFileArgs) -> PlannedWrite | ToolResult:
        path, shown = _target(workspace, args.path)
        if not path.exists():
            return ToolResult.failed(
                "not_found", f"{shown} does not exist; create it with write_file."
            )
        before = _existing(path, shown, ledger)
        if isinstance(before, ToolResult):
            return before
        old, new = args.old_string.replace("\r\n", "\n"), args.new_string.replace("\r\n", "\n")
        found = before.text.count(old)
        if found == 0:
            return ToolResult.failed(
                "no_match",
                f"old_string was not found in {shown} (0 matches); read the file and copy the "
                "text exactly, without the line numbers. Nothing changed.",
            )
        if found > 1 and not args.replace_all:
            return ToolResult.failed(
                "ambiguous",
                f"old_string occurs {found} times in {shown}; include more surrounding lines so "
                "it is unique, or set replace_all. Nothing changed.",
            )
        after = (
            before.text.replace(old, new) if args.replace_all else before.text.replace(old, new, 1)
        )
        replaced = found if args.replace_all else 1
        plan = PlannedWrite(path, shown, before, after, f"edited {shown} ({replaced} replaced)")
        return _changed(plan)

    def previewed(plan: PlannedWrite | ToolResult) -> str | ToolResult:
        return plan.diff() if isinstance(plan, PlannedWrite) else plan

    @file_errors_as_results
    def applied(plan: PlannedWrite | ToolResult) -> ToolResult:
        if not isinstance(plan, PlannedWrite):
            return plan
        if not swept:  # the run's first write: clean up after earlier runs that were killed
            swept.append(workspace.root)
            remove_stale_temp_files(workspace)
        return plan.apply(ledger)

    def planned_tool(
        name: str,
        description: str,
        args_model: type[BaseModel],
        plan: Callable[[Any], PlannedWrite | ToolResult],
    ) -> PydanticTool:
        """A write tool: the plan's diff is the preview; running plans again, then applies."""
        return PydanticTool(
            name=name,
            description=description,
            args_model=args_model,
            side_effect=SideEffect.WRITE,
            run=lambda args: applied(plan(args)),
            preview=lambda args: previewed(plan(args)),
            key=KeyArgument("path", KeyKind.PATH),
        )

    return [
        planned_tool(
            "write_file",
            "Create a file, or replace a whole file, in the workspace. Parent folders are "
            "created. To replace an existing file you must have read it first. Prefer "
            "edit_file for changing part of a file.",
            WriteFileArgs,
            plan_write,
        ),
        planned_tool(
            "edit_file",
            "Replace exact text in a file you have read: old_string must occur exactly once "
            "(or set replace_all). Copy old_string from read_file's output without the line "
            "numbers. Line endings and encoding of the file are kept.",
            EditFileArgs,
            plan_edit,
        ),
    ]


def remove_stale_temp_files(workspace: Workspace, now: float | None = None) -> list[str]:
    """Delete temp files that killed writes left in the workspace; return what went.

    Only regular files whose name is exactly `atomic_write`'s pattern are touched,
    and only when untouched for `STALE_TEMP_SECONDS`: a live write refreshes its temp
    file's mtime with every block it writes and renames it a moment later, so one
    that old is abandoned. (Were a paused writer's temp file removed anyway, its
    rename would fail and the write report io_error: the target is never torn.)
    It runs at the first write of a run, not when the tools are made: reads, plans
    and `permissions check` change nothing on disk.
    """
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    removed = []
    for path, relative in workspace.walk(workspace.root, everything=True):
        if not is_temp_name(relative.rpartition("/")[2]):
            continue
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                os.unlink(path)
                removed.append(relative)
    return removed


def _target(workspace: Workspace, raw: str) -> tuple[Path, str]:
    path = workspace.resolve(raw)
    return path, workspace.relative(path)


def _existing(path: Path, shown: str, ledger: ReadLedger) -> TextFile | ToolResult:
    if path.is_dir():
        return ToolResult.failed("is_directory", f"{shown} is a folder, not a file.")
    before = load_text(path)
    return ledger.problem(path, shown, before.digest) or before


def _changed(plan: PlannedWrite) -> PlannedWrite | ToolResult:
    if plan.after == plan.before.text:
        return ToolResult.failed("no_change", f"{plan.shown} already has this content.")
    return plan


def _count(text: str) -> str:
    lines = len(text.splitlines())
    return "1 line" if lines == 1 else f"{lines} lines"

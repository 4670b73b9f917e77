"""read_file: numbered lines, in pages, recorded for the read-before-write rule."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch02.guard import file_errors_as_results
from chapters.ch02.ledger import ReadLedger
from chapters.ch02.path_text import PathText
from chapters.ch02.text_files import load_text
from chapters.ch02.workspace import Workspace
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

PAGE_LINES = 2000
MAX_LINE_CHARS = 2000


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: PathText = Field(min_length=1, description="File path, relative to the workspace root.")
    offset: int = Field(default=1, ge=1, description="First line to show (1-based).")
    limit: int = Field(
        default=PAGE_LINES, ge=1, le=PAGE_LINES, description="How many lines to show."
    )


def make_read_file_tool(workspace: Workspace, ledger: ReadLedger) -> PydanticTool:
    @file_errors_as_results
    def read_file(args: ReadFileArgs) -> ToolResult:
        path = workspace.resolve(args.path)
        shown = workspace.relative(path)
        if path.is_dir():
            return ToolResult.failed("is_directory", f"{shown} is a folder; use glob to list it.")
        if not path.exists():
            return ToolResult.failed("not_found", f"{shown} does not exist; glob can find files.")
        text_file = load_text(path)
        ledger.record(path, text_file.digest)
        return ToolResult.success(numbered_page(shown, text_file.text, args.offset, args.limit))

    return PydanticTool(
        name="read_file",
        description=(
            "Read a text file in the workspace. Returns numbered lines (line number, tab, text), "
            f"at most {PAGE_LINES} lines per call; use offset and limit to page through longer "
            "files. Read a file before you write or edit it."
        ),
        args_model=ReadFileArgs,
        side_effect=SideEffect.READ,
        run=read_file,
        key=KeyArgument("path", KeyKind.PATH),
        concurrency_safe=True,
    )


def numbered_page(shown: str, text: str, offset: int, limit: int) -> str:
    """`cat -n` style lines with a header, long lines cut, and a note on how to read on."""
    lines = text.splitlines()
    if not lines:
        return f"ok: {shown} is empty (0 lines)."
    if offset > len(lines):
        return f"ok: {shown} has {len(lines)} lines; offset {offset} is past the end."
    last = min(offset + limit - 1, len(lines))
    body = "\n".join(
        f"{number:>6}\t{_cut(lines[number - 1])}" for number in range(offset, last + 1)
    )
    shown_lines = f"line {offset}" if offset == last else f"lines {offset}-{last}"
    whole = " (the whole file)" if offset == 1 and last == len(lines) else ""
    header = f"ok: {shown}, {shown_lines} of {len(lines)}{whole}"
    more = (
        f"\n[{len(lines) - last} more lines: call read_file with offset={last + 1} to read on]"
        if last < len(lines)
        else ""
    )
    return f"{header}\n{body}{more}"


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line)} characters]"

"""glob and grep: find files and lines without leaving the workspace.

Both walk with `Workspace.walk`, which skips VCS folders, the agent's own folder
(`.tutorial/`, whose logs quote every search, so a search would find itself) and
what `.gitignore` ignores, and never follows a link out of the root; a folder
named as `path` (or, for glob, at the start of the pattern) is searched all the
same. Both pass over the temporary files of interrupted writes (`is_temp_name`):
half a file is nothing the model should read or list. Both cap their output and
say so, because a result the model cannot read to the end is worse than a shorter
one with a note on how to narrow the search. A file name is listed through
`printable`: a name with a newline in it is one line, not two.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch02.guard import file_errors_as_results
from chapters.ch02.path_text import GlobText, PathText, printable
from chapters.ch02.text_files import READ_FLAGS, is_binary, is_temp_name
from chapters.ch02.workspace import HARNESS_FOLDER, PathOutsideWorkspace, Workspace
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

MAX_GLOB_RESULTS = 100
MAX_GREP_MATCHES = 200
MAX_GREP_LINE_CHARS = 300
MAX_GREP_FILE_BYTES = 10 * 1024 * 1024
SKIPPED = (
    f"Skipped unless given as path: VCS folders, the agent's own {HARNESS_FOLDER} folder "
    "and what .gitignore ignores."
)
_GLOB_SPECIAL = re.compile(r"[*?\[]")


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: GlobText = Field(min_length=1, description="Glob such as *.py, **/*.ts or **/test_*.")
    path: PathText = Field(default=".", description="Folder to search from, relative to the root.")


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="A Python regular expression.")
    path: PathText = Field(
        default=".", description="File or folder to search, relative to the root."
    )
    glob: GlobText | None = Field(
        default=None, description="Only files matching this glob, e.g. *.py"
    )
    ignore_case: bool = Field(default=False, description="Match without regard to case.")


def make_search_tools(
    workspace: Workspace, hidden: Callable[[str], bool] | None = None
) -> list[PydanticTool]:
    """`hidden(relative_path)`: files the walking tools must neither list nor read.

    A permission policy passes the files its read deny rules cover: a rule that keeps
    read_file out of secrets/ must keep grep out of it too.
    """

    def visible(files: Iterable[tuple[str, str]], skipped: list[str]) -> Iterator[tuple[str, str]]:
        for path, relative in files:
            if is_temp_name(relative.rpartition("/")[2]):
                continue  # half a file from a write that was killed: not the model's business
            if hidden and hidden(relative):
                skipped.append(relative)
            else:
                yield path, relative

    @file_errors_as_results
    def glob(args: GlobArgs) -> ToolResult:
        start = _folder(workspace, args.path)
        if isinstance(start, ToolResult):
            return start
        matcher = glob_regex(args.pattern)
        skip = 0 if start == workspace.root else len(workspace.relative(start)) + 1
        walk_from = _named_folder(workspace, start, args.pattern)
        skipped: list[str] = []
        found = [
            (path, relative)
            for path, relative in visible(workspace.walk(walk_from), skipped)
            if matcher.match(relative[skip:])  # the pattern is relative to `path`
        ]
        found.sort(key=lambda item: _mtime(item[0]), reverse=True)
        if not found:
            return ToolResult.success(f"ok: no files under {args.path!r} match {args.pattern!r}.")
        lines = [printable(relative) for _, relative in found[:MAX_GLOB_RESULTS]]
        header = f"ok: {len(found)} files match {args.pattern!r} (newest first){_hidden(skipped)}"
        if len(found) > MAX_GLOB_RESULTS:
            lines.append(f"[{len(found) - MAX_GLOB_RESULTS} more not shown: narrow the pattern]")
        return ToolResult.success("\n".join([header, *lines]))

    @file_errors_as_results
    def grep(args: GrepArgs) -> ToolResult:
        try:
            flags = re.MULTILINE | (re.IGNORECASE if args.ignore_case else 0)
            regex = re.compile(args.pattern, flags)
        except re.error as error:
            return ToolResult.failed(
                "invalid_regex",
                f"{args.pattern!r} is not a valid Python regular expression: {error}.",
            )
        root = workspace.resolve(args.path)
        if not root.exists():
            return ToolResult.failed("not_found", f"{workspace.relative(root)} does not exist.")
        everything = (
            [(str(root), workspace.relative(root))] if root.is_file() else workspace.walk(root)
        )
        skipped: list[str] = []
        files = visible(everything, skipped)
        name_filter = glob_regex(args.glob, anywhere=True) if args.glob else None
        matches: list[str] = []
        total = 0
        for path, relative in files:
            if name_filter and not name_filter.match(relative):
                continue
            for number, line in matching_lines(path, regex):
                total += 1
                if len(matches) < MAX_GREP_MATCHES:
                    matches.append(f"{printable(relative)}:{number}: {line[:MAX_GREP_LINE_CHARS]}")
        if not matches:
            return ToolResult.success(f"ok: no lines match {args.pattern!r}{_hidden(skipped)}.")
        header = f"ok: {total} matching lines{_hidden(skipped)}"
        if total > len(matches):
            header += f" (first {len(matches)} shown: narrow with path or glob)"
        return ToolResult.success("\n".join([header, *matches]))

    return [
        PydanticTool(
            name="glob",
            description=(
                "Find files in the workspace by name. * matches within one folder name, ** "
                "matches any number of folders (**/*.py finds Python files at any depth). "
                f"Returns workspace-relative paths, newest first, at most {MAX_GLOB_RESULTS}. "
                f"{SKIPPED}"
            ),
            args_model=GlobArgs,
            side_effect=SideEffect.READ,
            run=glob,
            key=KeyArgument("path", KeyKind.PATH),
            concurrency_safe=True,
        ),
        PydanticTool(
            name="grep",
            description=(
                "Search file contents with a Python regular expression. Returns "
                f"path:line: text lines, at most {MAX_GREP_MATCHES}. Binary files are skipped. "
                f"Use glob (e.g. *.py) to limit which files are searched. {SKIPPED}"
            ),
            args_model=GrepArgs,
            side_effect=SideEffect.READ,
            run=grep,
            key=KeyArgument("path", KeyKind.PATH),
            concurrency_safe=True,
        ),
    ]


def matching_lines(path: str, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line with a match; the file is searched as one string."""
    data = _read_small_file(path)
    if data is None:
        return
    if is_binary(data):
        return
    text = data.decode("utf-8", errors="replace")
    line_number, position, last_reported = 1, 0, 0
    for match in regex.finditer(text):
        line_number += text.count("\n", position, match.start())
        position = match.start()
        if line_number == last_reported:
            continue
        last_reported = line_number
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        yield line_number, text[start : end if end != -1 else len(text)].rstrip("\r")


def _read_small_file(path: str) -> bytes | None:
    """The file's bytes in one open/fstat/read, or None if unreadable or over the limit.

    Opened without blocking and skipped unless fstat says it is a regular file: the
    walk lists only regular files, but one may have become a named pipe since.
    """
    try:
        descriptor = os.open(path, READ_FLAGS)
    except OSError:
        return None  # unreadable files are skipped, like grep -s
    try:
        info = os.fstat(descriptor)
        size = info.st_size
        if size > MAX_GREP_FILE_BYTES or not stat.S_ISREG(info.st_mode):
            return None
        return os.read(descriptor, size + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def glob_regex(pattern: str, *, anywhere: bool = False) -> re.Pattern[str]:
    """Translate a glob to a regex over `/`-separated relative paths.

    `*` and `?` stay within one folder name, `**/` spans folders, `[...]` is a
    class. With `anywhere`, a pattern without `/` matches the file name at any
    depth (grep's glob filter, as in ripgrep).
    """
    pattern = pattern.replace("\\", "/").removeprefix("./")
    if anywhere and "/" not in pattern:
        pattern = "**/" + pattern
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = close + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)  # a name may hold a newline


def _hidden(skipped: list[str]) -> str:
    return f" ({len(skipped)} files not searched: a deny rule covers them)" if skipped else ""


def _folder(workspace: Workspace, raw: str) -> Path | ToolResult:
    start = workspace.resolve(raw)
    if not start.is_dir():
        return ToolResult.failed("not_a_folder", f"{raw} is not a folder in the workspace.")
    return start


def _named_folder(workspace: Workspace, start: Path, pattern: str) -> Path:
    """Where glob walks from: `start`, or the folder the pattern's first names spell out.

    `build/*.log`, with `build/` in `.gitignore`, names a folder a walk from the root
    would skip, as much as `path` would; walking from there also saves looking
    everywhere else.
    """
    names = pattern.replace("\\", "/").removeprefix("./").split("/")[:-1]
    literal = list(itertools.takewhile(lambda name: not _GLOB_SPECIAL.search(name), names))
    if not literal or any(name in ("", ".", "..") for name in literal):
        return start
    named = start.joinpath(*literal)
    try:
        folder = workspace.resolve(str(named))
    except PathOutsideWorkspace:
        return start
    return folder if folder == named and folder.is_dir() else start  # not through a link


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0

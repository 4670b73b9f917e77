"""Offloading: a tool result too long to send whole is kept whole on disk; the model gets a view.

A finisher in the call pipeline (shared/calls.py), so it runs before the tool
message enters the history:

    result ≤ `over` characters   passes unchanged
    result > `over` characters   written whole to .tutorial/tool-results/<tool_call_id>.txt
                                 in the workspace; the model reads the first and the last
                                 part (together about `shown` characters), the total size,
                                 which lines it saw, the file's path, and how to read on
                                 (read_file with offset and limit, or grep)
    the file cannot be written   the same view, saying the rest is lost; never a crash
    (or would be written through a link: a `.tutorial` or `tool-results` folder that
    leads out of the workspace is refused, chapters/ch03/harness_files.py)

A tool_call id comes from the model, so it is never trusted as a file name: it
is cut to letters, digits, `-` and `_` (`safe_file_name`), and a name already
taken (an earlier run, or two ids that clean up alike) gets a number, so no
file is ever overwritten. A result that is itself a page of an offloaded file
is not saved again: the view asks for a smaller page instead.

Since big output is kept whole here, a tool's own cap can rise well above
`over` (`TOOL_OUTPUT_LIMIT`, for chapter 1's shell tool `output_limit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from chapters.ch03.harness_files import CREATE_NEW, open_harness_file
from shared.agent import MAIN_AGENT
from shared.calls import PendingCall
from shared.console import Console
from shared.tools import KeyKind, ToolResult

RESULTS_FOLDER = Path(".tutorial") / "tool-results"  # below the workspace
DEFAULT_OFFLOAD_OVER = 20_000  # characters: `--offload-over`
DEFAULT_SHOWN = 2_000  # characters of the first and last part together
TOOL_OUTPUT_LIMIT = 1_000_000  # bytes per stream a tool may keep, now that big output is saved
MAX_NAME_CHARS = 100  # of a file name's stem: far under every file system's limit
# Names Windows reserves in every folder, whatever the extension (CON.txt is the console).
WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{d}{n}" for d in ("COM", "LPT") for n in range(1, 10)]
)
UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Saved:
    """Where a result was kept whole, and how long it was."""

    path: str  # relative to the workspace, with `/`: what the model passes to read_file
    characters: int


def safe_file_name(call_id: str) -> str:
    """A file name stem made from a tool_call id: no separators, no dots, nothing reserved."""
    stem = UNSAFE.sub("_", call_id).strip("_")[:MAX_NAME_CHARS] or "call"
    return f"_{stem}" if stem.upper() in WINDOWS_RESERVED else stem


@dataclass
class Offloader:
    """A finisher; it also saves an old result on request (chapters/ch08/old_results.py)."""

    root: Path  # the workspace
    console: Console
    over: int = DEFAULT_OFFLOAD_OVER
    shown: int = DEFAULT_SHOWN
    # By tool_call id. A list: a sub-agent's calls share this finisher, and ids are unique
    # only within one history, so two results may come with the same id.
    saved: dict[str, list[Saved]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.shown < 2 or self.over < self.shown:
            raise ValueError(f"need 2 <= shown <= over, got shown={self.shown}, over={self.over}")

    def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        text = result.content
        if len(text) <= self.over:
            return result
        call_id, whose = pending.call.id, _whose(pending)
        if self._reads_a_saved_result(pending):
            note = (
                f"[harness: this page is {len(text):,} characters, too long to send whole. "
                "Read the saved result in smaller pages: a smaller limit, or grep.]"
            )
            self.console.notice(f"harness: {whose} page of a saved result was cut for the model")
            return replace(result, content=self.view(text, note))
        try:
            saved = self.save(call_id, text)
        except OSError as error:
            note = (
                f"[harness: this result was {len(text):,} characters; only the parts above "
                f"are kept. The rest is lost: it could not be saved ({error}).]"
            )
            self.console.notice(f"harness: {whose} result could not be saved ({error}); cut")
            return replace(result, content=self.view(text, note))
        self.console.notice(
            f"harness: {whose} result ({len(text):,} characters) saved to {saved.path}; "
            f"the model reads about {self.shown:,} characters of it"
        )
        return replace(result, content=self.view(text, self._saved_note(text, saved)))

    def save(self, call_id: str, text: str) -> Saved:
        """Write `text` to a new file named after `call_id`; raise OSError if that fails."""
        folder = self.root / RESULTS_FOLDER
        stem = safe_file_name(call_id)
        for number in range(1, 1000):
            name = f"{stem}.txt" if number == 1 else f"{stem}-{number}.txt"
            try:
                # Never overwrite, never through a link (chapters/ch03/harness_files.py).
                descriptor = open_harness_file(self.root, RESULTS_FOLDER / name, CREATE_NEW)
            except FileExistsError:
                continue
            try:
                # newline="": the bytes are the text on every system, so read_file numbers the
                # lines as the view does. A character UTF-8 cannot hold (a lone surrogate) is
                # written as its \u escape rather than failing the save.
                with open(
                    descriptor, "w", encoding="utf-8", errors="backslashreplace", newline=""
                ) as file:
                    file.write(text)
            except OSError:
                (folder / name).unlink(missing_ok=True)  # no half-written file that looks whole
                raise
            saved = Saved((RESULTS_FOLDER / name).as_posix(), len(text))
            self.saved.setdefault(call_id, []).append(saved)
            return saved
        raise OSError(f"no free file name for {stem!r} in {folder}")

    def saved_for(self, call_id: str, content: str) -> Saved | None:
        """Where the result `content` (the view the model read) was saved, if it was:
        the file of this id whose path the view names."""
        return next((s for s in self.saved.get(call_id, ()) if s.path in content), None)

    def view(self, text: str, note: str) -> str:
        """The first and the last part of `text`, what lies between them counted, then `note`."""
        head, tail = self._parts(text)
        hidden = len(text) - len(head) - len(tail)
        return f"{_line(head)}[… {hidden:,} characters not shown …]\n{_line(tail)}{note}"

    def _parts(self, text: str) -> tuple[str, str]:
        return _head(text, self.shown // 2), _tail(text, self.shown - self.shown // 2)

    def _saved_note(self, text: str, saved: Saved) -> str:
        """Which lines the view shows, numbered as read_file numbers them (`splitlines`)."""
        head, tail = self._parts(text)
        lines = len(text.splitlines())
        head_lines = len(head.splitlines())
        before = text[: len(text) - len(tail)].splitlines(keepends=True)
        tail_from = len(before) + (1 if not before or _ends_a_line(before[-1]) else 0)
        return (
            f"[harness: this result is {len(text):,} characters ({lines:,} lines), too long to "
            f"send whole. Shown above: lines 1-{head_lines} and {tail_from}-{lines}. The whole "
            f"text is saved in {saved.path}: read any part with read_file (path, offset, limit), "
            "or search it with grep.]"
        )

    def _reads_a_saved_result(self, pending: PendingCall) -> bool:
        key = pending.prepared.tool.key
        if key is None or key.kind is not KeyKind.PATH:
            return False
        value = pending.prepared.arguments.plain.get(key.name)
        if not isinstance(value, str):
            return False
        folder = (self.root / RESULTS_FOLDER).resolve()
        return (self.root / value).resolve().is_relative_to(folder)


def _whose(pending: PendingCall) -> str:
    """`read_file's`; a child's call names its agent (`explore's read_file`): one finisher
    serves the whole family, and the console line is the parent's."""
    name = pending.call.function.name
    return f"{name}'s" if pending.agent == MAIN_AGENT else f"{pending.agent}'s {name}"


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _ends_a_line(piece: str) -> bool:
    return piece.splitlines()[0] != piece if piece else True


def _head(text: str, size: int) -> str:
    """About the first `size` characters, ending at a line's end when one is near."""
    piece = text[:size]
    end = piece.rfind("\n")
    return piece[: end + 1] if end >= size // 2 else piece


def _tail(text: str, size: int) -> str:
    """About the last `size` characters, starting at a line's start when one is near."""
    piece = text[-size:]
    start = piece.find("\n")
    return piece[start + 1 :] if 0 <= start < size // 2 else piece

"""Project instructions: what the people who work here wrote down for agents.

    AGENTS.md               in the workspace root: the project's (the cross-tool convention
                            that Codex and Cursor, among others, read by default)
    CLAUDE.md               read instead when there is no AGENTS.md (Claude Code's name)
    ~/.tutorial/AGENTS.md   in your home folder: yours, for every project

Yours comes first and the project's second, nearer the conversation, since it
is the more specific of the two. Each file is cut to `FILE_CAP` characters with
a note saying so, and no more of it is read than that can take (4 bytes a
character at most: a huge file costs its cap, not its size). A file that cannot
be read is left out with a warning for the person running the agent; the run
goes on. That includes a file that is not a regular file (a named pipe would
block the start, a link to /dev/zero never ends) and one that links out of the
workspace (yours: out of the home folder), as read_file would refuse it
(chapters/ch06/written_files.py). Only these files are read: nothing in a
subfolder, no `@file` imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chapters.ch06.written_files import (
    BYTES_PER_CHARACTER,
    WORKSPACE,
    YOUR_HOME,
    UnreadableFile,
    as_text,
    read_written_file,
)
from chapters.ch10.sections import cut

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md")  # the first one that exists is read
USER_FILE = Path(".tutorial") / "AGENTS.md"  # below your home folder
FILE_CAP = 6_000  # characters per file
NONE = f"none: no {', '.join(PROJECT_FILES)} or ~/{USER_FILE.as_posix()}"
HEADING = "# Project instructions"
INTRO = (
    "The user and the project wrote these instructions for agents that work here. Follow "
    "them; when they conflict with what the user asks in this conversation, the user wins."
)


@dataclass(frozen=True)
class InstructionFile:
    shown: str  # how it is named in the prompt: "AGENTS.md", "~/.tutorial/AGENTS.md"
    whose: str  # "yours, for every project" or "this project's"
    text: str  # as the model reads it: cut to the cap, with a note when it was


@dataclass(frozen=True)
class Instructions:
    files: tuple[InstructionFile, ...]
    warnings: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return " + ".join(f.shown for f in self.files) or NONE

    def text(self) -> str:
        """The section's text; "" when there are no instructions."""
        if not self.files:
            return ""
        parts = [f"{HEADING}\n{INTRO}"]
        parts += [f"## {f.shown} ({f.whose})\n{f.text}" for f in self.files]
        return "\n\n".join(parts)


def read_instructions(workspace: Path, home: Path, file_cap: int = FILE_CAP) -> Instructions:
    """Your file, then the project's, each cut to `file_cap` characters."""
    files: list[InstructionFile] = []
    warnings: list[str] = []
    candidates = [
        (home, USER_FILE, f"~/{USER_FILE.as_posix()}", "yours, for every project", YOUR_HOME)
    ]
    project = next((name for name in PROJECT_FILES if (workspace / name).exists()), None)
    if project is not None:
        candidates.append((workspace, Path(project), project, "this project's", WORKSPACE))
    for base, relative, shown, whose, where in candidates:
        if not (base / relative).exists():
            continue
        limit = BYTES_PER_CHARACTER * file_cap
        try:
            data = read_written_file(base, relative, limit=limit, where=where)
            more = len(data) > limit
            text = as_text(data[:limit], whole=not more).strip()
        except (UnreadableFile, UnicodeDecodeError) as error:
            warnings.append(f"{shown} cannot be read ({error}); it is left out of the prompt")
            continue
        size = f"more than {limit:,} bytes" if more else None
        if text:
            files.append(InstructionFile(shown, whose, cut(text, file_cap, shown, size=size)))
    return Instructions(tuple(files), tuple(warnings))

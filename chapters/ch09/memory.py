"""Long-term memory: notes that outlive every session, as Markdown files with front matter.

    .tutorial/memory/        the project's memories, in the workspace
    ~/.tutorial/memory/      the user's, for every project (the home folder is passed in)
        tabs.md              one memory:
                                 ---
                                 name: tabs
                                 description: Python files here are indented with tabs
                                 type: feedback
                                 ---
                                 The user asked for tabs, not spaces ... (the body)
        MEMORY.md            the folder's index, one line per memory, rebuilt on every write

This is the format Claude Code (and learn-claude-code) use. The four types:

    user        who the user is: their role, what they know, how they like to work
    feedback    what the user corrected or confirmed about how the work is done
    project     facts about the work that the code does not show: a decision and why, a date
    reference   where to look outside the project: a tracker, a dashboard, a document

What costs what: every request carries the index, names and descriptions only,
capped at `INDEX_CAP` characters (`MemoryIndex`, a prompt section source: it
has a `source` and a `text()`); a memory's body is read only when the model
asks for it (memory_read, chapters/ch09/memory_tools.py). The index is built
once per run, so the prompt stays the same bytes from the first request to
the last; a memory written during a run is in the next run's index.

The rules (`memory_problem`), each broken one named:

    name          1 to 64 characters: lowercase letters, digits, - and _, starting with
                  a letter or a digit; the file is <name>.md, so the name cannot hold a
                  path separator or `..`, and it is not a Windows device name (con, nul,
                  com1, ...) nor "memory" (memory.md is MEMORY.md where case is ignored);
                  in a file, it equals the file's name
    description   one line of 1 to 200 characters
    type          user, feedback, project or reference
    body          1 to 10,000 characters

The files are the harness's own (chapters/ch03/harness_files.py): a memory
folder that links out of the workspace (or the home folder) is neither read
nor written, a memory file that is a link is never read, and a file is read
only if it is a regular file of at most `MAX_FILE_BYTES`.

The front matter is read by chapter 6's parser (chapters/ch06/frontmatter.py).
Bad files never break a run: a memory file that does not parse, or breaks a
rule, is left out of the index with one warning naming the file and the
problem. The project's memory wins a name both folders use.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from chapters.ch02.text_files import READ_FLAGS, atomic_write, read_open_file
from chapters.ch03.harness_files import harness_folder, open_harness_file, reason
from chapters.ch06.frontmatter import FrontMatterError, Value, parse_front_matter
from chapters.ch06.written_files import as_text

MEMORY_FOLDER = Path(".tutorial") / "memory"  # below the workspace, and below the home folder
INDEX_FILE = "MEMORY.md"
SUFFIX = ".md"
INDEX_CAP = 3_000  # characters of the index in the system prompt; whole lines only
MAX_NAME = 64
MAX_DESCRIPTION = 200
MAX_BODY = 10_000
# Of a memory file read: a memory at every limit (front matter and a 10,000-character body,
# even in 4-byte characters) is under 45 KB, so a file over this is no memory.
MAX_FILE_BYTES = 64 * 1024
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
# Names Windows gives to devices, in every folder and with any extension.
RESERVED = frozenset(
    ["con", "prn", "aux", "nul", "memory"] + [f"{d}{n}" for d in ("com", "lpt") for n in range(10)]
)
INTRO = (
    "Notes kept from earlier sessions, one per line as name [type]: description. When one "
    "bears on the task, read it with memory_read before you act. When the user tells you "
    "something to remember for later sessions (a preference, a correction, a fact about the "
    "project), save it with memory_write."
)


class MemoryType(StrEnum):
    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"


class Scope(StrEnum):
    """Whose memory: the project's (the workspace) or the user's (the home folder)."""

    PROJECT = "project"
    USER = "user"


TYPES = ", ".join(t.value for t in MemoryType)


@dataclass(frozen=True)
class Memory:
    name: str
    description: str
    type: MemoryType
    body: str
    scope: Scope = Scope.PROJECT

    def file_text(self) -> str:
        """The file, exactly as written: front matter, a blank line, the body."""
        return (
            f"---\nname: {self.name}\ndescription: {_scalar(self.description)}\n"
            f"type: {self.type.value}\n---\n\n{self.body}\n"
        )


def _scalar(text: str) -> str:
    """A front matter value that reads back as `text`: plain when it can be, else quoted."""
    plain = (
        text == text.strip()
        and text[:1] not in "\"'[]{}|>&*!#-%@`"
        and " #" not in text
        and text.isprintable()
    )
    return text if plain else json.dumps(text, ensure_ascii=False)


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a memory file; None if it can."""
    if not 1 <= len(name) <= MAX_NAME:
        return f"name is {len(name)} characters; it must be 1 to {MAX_NAME}"
    if not _NAME.fullmatch(name):
        return (
            f"name {name!r} may hold only lowercase letters, digits, - and _, and starts with "
            "a letter or a digit (it is the file's name: no path separators, no dots)"
        )
    if name in RESERVED:
        return f"name {name!r} is reserved (a Windows device name, or the index's); pick another"
    return None


def memory_problem(name: str, description: str, body: str) -> str | None:
    """The first rule a memory breaks, in words for the model; None if it breaks none."""
    problem = name_problem(name)
    if problem:
        return problem
    if "\n" in description or "\r" in description:
        return "description must be one line"
    if not 1 <= len(description) <= MAX_DESCRIPTION:
        return f"description is {len(description)} characters; it must be 1 to {MAX_DESCRIPTION}"
    if not 1 <= len(body) <= MAX_BODY:
        return f"body is {len(body):,} characters; it must be 1 to {MAX_BODY:,}"
    return None


class MemoryFileError(ValueError):
    """A memory file that cannot be used; the message says why."""


def parse_memory(text: str, stem: str, scope: Scope) -> Memory:
    """The memory in a file named `<stem>.md`; `MemoryFileError` if it breaks a rule."""
    try:
        parsed = parse_front_matter(text)
    except FrontMatterError as error:
        raise MemoryFileError(str(error)) from None
    name = _field(parsed.fields, "name")
    if name != stem:
        raise MemoryFileError(f"name {name!r} must equal the file's name, {stem!r}")
    description = _field(parsed.fields, "description")
    kind = _field(parsed.fields, "type")
    if kind not in {t.value for t in MemoryType}:
        raise MemoryFileError(f"type {kind!r} is not one of {TYPES}")
    problem = memory_problem(name, description, parsed.body)
    if problem:
        raise MemoryFileError(problem)
    return Memory(name, description, MemoryType(kind), parsed.body, scope)


def _field(fields: Mapping[str, Value], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise MemoryFileError(f"{key} is missing; a memory needs a name, a description and a type")
    if not isinstance(value, str):
        raise MemoryFileError(f"{key} must be one line of text, not a list")
    return value.strip()


@dataclass(frozen=True)
class Memories:
    """The memories of both folders, read at one moment, and what was wrong with the others."""

    project: Mapping[str, Memory]  # by name, in name order
    user: Mapping[str, Memory]
    broken: Mapping[str, str] = field(default_factory=dict)  # file stem -> the warning
    warnings: tuple[str, ...] = ()  # one per file left out, naming it

    def get(self, name: str) -> Memory | None:
        """The project's memory of that name, else the user's."""
        return self.project.get(name) or self.user.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted({*self.project, *self.user}))

    def index(self, cap: int = INDEX_CAP) -> str:
        """The prompt's text: how to use memory, then a line per memory, in whole lines up to
        `cap` characters (the rest counted); "" when there are none."""
        user = [m for name, m in self.user.items() if name not in self.project]  # hidden ones
        groups = [
            (f"Project memories ({MEMORY_FOLDER.as_posix()}/):", list(self.project.values())),
            (f"The user's memories, for every project (~/{MEMORY_FOLDER.as_posix()}/):", user),
        ]
        if not any(memories for _, memories in groups):
            return ""
        rows = [  # each memory's line, after its group's heading when it is the first
            ([heading, prompt_line(m)] if number == 0 else [prompt_line(m)])
            for heading, memories in groups
            for number, m in enumerate(memories)
        ]
        lines, size, listed = [INTRO], len(INTRO), 0
        for row in rows:
            cost = sum(len(text) + 1 for text in row)
            if size + cost > cap - _NOTE_ROOM:
                break  # and so is every later one: the order is kept, the rest counted
            lines += row
            size += cost
            listed += 1
        total = len(rows)
        if listed < total:
            lines.append(
                f"[{total - listed} more not listed: the index is capped at {cap:,} characters; "
                "memory_read with an unknown name lists every name]"
            )
        return "\n".join(lines)


_NOTE_ROOM = 120  # kept free for the note that says how many were left out


def prompt_line(memory: Memory) -> str:
    return f"- {memory.name} [{memory.type.value}]: {memory.description}"


def index_file_text(memories: Mapping[str, Memory]) -> str:
    """MEMORY.md: a heading, what it is, and a line per memory with a link to its file."""
    lines = [
        "# Memory index",
        "",
        "One line per memory in this folder, rebuilt on every memory_write. Edit the memory "
        "files, not this one.",
        "",
    ]
    lines += [
        f"- [{m.name}]({m.name}{SUFFIX}) [{m.type.value}]: {m.description}"
        for m in memories.values()
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class MemoryStore:
    """Where the memories of one workspace and one user are, read and written."""

    workspace: Path
    home: Path

    def base(self, scope: Scope) -> Path:
        """The folder the memory folder of `scope` must stay inside: the workspace, or home."""
        return self.workspace if scope is Scope.PROJECT else self.home

    def folder(self, scope: Scope) -> Path:
        return self.base(scope) / MEMORY_FOLDER

    def shown(self, scope: Scope, name: str | None = None) -> str:
        """A folder or a file as people write it: `.tutorial/memory/x.md`, `~/.tutorial/...`."""
        folder = MEMORY_FOLDER.as_posix()
        folder = folder if scope is Scope.PROJECT else f"~/{folder}"
        return f"{folder}/{name}{SUFFIX}" if name else f"{folder}/"

    def path(self, memory: Memory) -> Path:
        return self.folder(memory.scope) / f"{memory.name}{SUFFIX}"

    @property
    def one_folder(self) -> bool:
        """Run in the home folder itself: the two folders are one, the project's."""
        try:
            return self.folder(Scope.PROJECT).resolve() == self.folder(Scope.USER).resolve()
        except OSError:
            return False

    def load(self) -> Memories:
        """Both folders as they are now; a file that cannot be used is a warning, never an error."""
        project, broken, warnings = self._read(Scope.PROJECT)
        user: dict[str, Memory] = {}
        if not self.one_folder:
            user, broken_user, more = self._read(Scope.USER)
            broken = {**broken_user, **broken}
            warnings += more
        return Memories(project, user, broken, tuple(warnings))

    def _read(self, scope: Scope) -> tuple[dict[str, Memory], dict[str, str], list[str]]:
        try:
            folder = harness_folder(self.base(scope), MEMORY_FOLDER)
            names = sorted(
                entry.name
                for entry in os.scandir(folder)
                if Path(entry.name).suffix == SUFFIX
                and entry.name.lower() != INDEX_FILE.lower()
                and not entry.name.startswith(".")
                and not entry.is_dir(follow_symlinks=False)
            )
        except FileNotFoundError:
            return {}, {}, []
        except OSError as error:
            problem = f"{self.shown(scope)} cannot be read ({error}); its memories are left out"
            return {}, {}, [problem]
        memories: dict[str, Memory] = {}
        broken: dict[str, str] = {}
        for name in names:
            stem = Path(name).stem
            try:
                memory = parse_memory(self.read_text(scope, stem), stem, scope)
            except OSError as error:
                why = reason(error, (MEMORY_FOLDER / name).as_posix())
                broken[stem] = f"{self.shown(scope, stem)}: {why}; left out of the memory index"
                continue
            except (UnicodeDecodeError, MemoryFileError) as error:
                broken[stem] = f"{self.shown(scope, stem)}: {error}; left out of the memory index"
                continue
            memories[memory.name] = memory
        return memories, broken, list(broken.values())

    def read_text(self, scope: Scope, name: str) -> str:
        """The text of the file `<name>.md` in the memory folder of `scope`.

        Read as every harness file is (chapters/ch03/harness_files.py): never through a
        link, never from a folder that leads out of the workspace (or home), only a
        regular file, and no more than `MAX_FILE_BYTES`. Raises OSError (FileNotFoundError
        when there is no such file), UnicodeDecodeError or `MemoryFileError`.
        """
        relative = MEMORY_FOLDER / f"{name}{SUFFIX}"
        descriptor = open_harness_file(self.base(scope), relative, READ_FLAGS)
        data = read_open_file(descriptor, MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise MemoryFileError(
                f"it is more than {MAX_FILE_BYTES:,} bytes, more than any memory holds"
            )
        return as_text(data)  # as `Path.read_text` reads it: CRLF as LF

    def save(self, memory: Memory) -> str | None:
        """Write the memory's file (atomically), then its folder's MEMORY.md again.

        Raises OSError if the memory could not be written; returns why the index
        could not be, if it could not (the memory is saved either way).
        """
        # The folder, checked to stay inside the workspace (or home): never written through
        # a link that leads out. A file is replaced by a rename, never written through.
        folder = harness_folder(self.base(memory.scope), MEMORY_FOLDER, create=True)
        atomic_write(folder / f"{memory.name}{SUFFIX}", memory.file_text().encode("utf-8"))
        memories, _, _ = self._read(memory.scope)
        try:
            data = index_file_text(memories).encode("utf-8")
            atomic_write(folder / INDEX_FILE, data)
        except OSError as error:
            return str(error)
        return None


@dataclass
class MemoryIndex:
    """The memory section of the system prompt: a `source`, and a `text()` read when asked.

    `warnings` holds the files the last `text()` left out, one line each, for
    the person running the agent (never for the model).
    """

    store: MemoryStore
    cap: int = INDEX_CAP
    warnings: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return f"~/{MEMORY_FOLDER.as_posix()}/ and {MEMORY_FOLDER.as_posix()}/"

    def text(self) -> str:
        memories = self.store.load()
        self.warnings = memories.warnings
        return memories.index(self.cap)

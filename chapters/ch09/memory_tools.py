"""memory_read and memory_write: a memory's body on demand, and one memory saved.

    memory_read {name}           a read, like read_file: nobody is asked, and it may run
                                 beside other reads. The project's memory of that name,
                                 else the user's; an unknown name is a failed result that
                                 lists the names there are.
    memory_write {name, description, type, body, scope?}
                                 creates or replaces one memory, in the project's folder
                                 (scope "project", the default) or the user's ("user").
                                 It changes files, so it is a write: the permission policy
                                 judges it like write_file (asked in the default mode,
                                 allowed in accept-edits, denied in plan mode), the audit
                                 log records it, and the human approves the memory as it
                                 will be written, shown as a diff of its file.

memory_write is planned twice, like chapter 2's write tools (chapters/ch02/writing.py):
once to show the diff, and again when it runs. A call bound to fail (a name that
is not a safe file name, a body that looks like a secret: chapters/ch09/secret_shapes.py)
fails while it is prepared, with a result saying why, and nobody is asked.
The file is replaced atomically, then the folder's MEMORY.md is written again.

A rule matches memory_write by the memory's name: `memory_write(tabs)`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch09.memory import (
    Memory,
    MemoryFileError,
    MemoryStore,
    MemoryType,
    Scope,
    memory_problem,
)
from chapters.ch09.secret_shapes import secret_shape
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

MEMORY_READ = "memory_read"
MEMORY_WRITE = "memory_write"


class MemoryReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, description="The memory's name, as the memory index lists it.")


class MemoryWriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(
        description="A short file-safe name: lowercase letters, digits, - and _ (tabs-not-spaces)."
    )
    description: str = Field(
        description="One line saying what the memory holds; it goes into the memory index."
    )
    type: MemoryType = Field(
        description=(
            "user: who the user is; feedback: how the user wants the work done; project: "
            "facts about this work the code does not show; reference: where to look elsewhere."
        )
    )
    body: str = Field(description="The memory itself, in Markdown. Never a password or a key.")
    scope: Scope = Field(
        default=Scope.PROJECT,
        description="project (the default): this workspace's memory; user: the user's, for "
        "every project.",
    )


@dataclass(frozen=True)
class PlannedMemory:
    memory: Memory
    path: Path
    shown: str  # `.tutorial/memory/tabs.md`, `~/.tutorial/memory/tabs.md`
    before: str | None  # the file as it is; None: there is none yet

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = self.memory.file_text().splitlines(keepends=True)
        source = "/dev/null" if self.before is None else f"a/{self.shown}"
        return "".join(difflib.unified_diff(old, new, source, f"b/{self.shown}"))


def make_memory_tools(store: MemoryStore) -> list[PydanticTool]:
    """memory_read and memory_write over the memory folders of `store`."""

    def read(args: MemoryReadArgs) -> ToolResult:
        memories = store.load()  # now, not at the start: a memory written in this run is there
        memory = memories.get(args.name)
        if memory is None:
            if args.name in memories.broken:
                return ToolResult.failed("broken_memory", memories.broken[args.name])
            there = ", ".join(memories.names) or "none (no memory has been saved)"
            return ToolResult.failed(
                "unknown_memory", f"there is no memory named {args.name!r}. The memories: {there}."
            )
        return ToolResult.success(
            f"ok: memory {memory.name} [{memory.type.value}] "
            f"({store.shown(memory.scope, memory.name)}): {memory.description}\n\n{memory.body}"
        )

    def plan(args: MemoryWriteArgs) -> PlannedMemory | ToolResult:
        problem = memory_problem(args.name, args.description, args.body)
        if problem:
            return ToolResult.failed("bad_memory", f"{problem}. Nothing was written.")
        shape = secret_shape(f"{args.description}\n{args.body}")
        if shape:
            return ToolResult.failed(
                "looks_like_secret",
                f"the memory was not written: it looks like it holds {shape}. Memories are "
                "plain files read back in later sessions, and the index goes into every "
                "prompt. Write it again without the secret: say where it is kept, not what "
                "it is.",
            )
        memory = Memory(args.name, args.description, args.type, args.body, args.scope)
        path = store.path(memory)
        try:
            before: str | None = store.read_text(memory.scope, memory.name)
        except FileNotFoundError:
            before = None
        except (OSError, UnicodeDecodeError, MemoryFileError):
            before = ""  # there, but unreadable: it is replaced, and the diff shows all of it new
        if before == memory.file_text():
            return ToolResult.failed(
                "no_change", f"{store.shown(memory.scope, memory.name)} already says exactly this."
            )
        return PlannedMemory(memory, path, store.shown(memory.scope, memory.name), before)

    def preview(args: MemoryWriteArgs) -> str | ToolResult:
        planned = plan(args)
        return planned.diff() if isinstance(planned, PlannedMemory) else planned

    def write(args: MemoryWriteArgs) -> ToolResult:
        planned = plan(args)  # again: the checks hold at the moment of writing
        if isinstance(planned, ToolResult):
            return planned
        memory = planned.memory
        try:
            index_problem = store.save(memory)
        except OSError as error:
            return ToolResult.failed("io_error", f"{planned.shown} could not be written: {error}")
        done = "created" if planned.before is None else "replaced"
        index = (
            f"{store.shown(memory.scope)}MEMORY.md could not be rebuilt ({index_problem})"
            if index_problem
            else f"it is listed in {store.shown(memory.scope)}MEMORY.md"
        )
        return ToolResult.success(
            f"ok: memory {memory.name} [{memory.type.value}] {done} in {planned.shown}; {index}. "
            "memory_read returns it now; the system prompt lists it from the next session on."
        )

    return [
        PydanticTool(
            name=MEMORY_READ,
            description=(
                "Read one memory kept from earlier sessions: its whole text. The memory index "
                "in the system prompt lists the names."
            ),
            args_model=MemoryReadArgs,
            side_effect=SideEffect.READ,
            run=read,
            key=KeyArgument("name", KeyKind.TEXT),
            concurrency_safe=True,
        ),
        PydanticTool(
            name=MEMORY_WRITE,
            description=(
                "Save one memory for later sessions, or replace the memory of that name: a "
                "preference or correction the user gave, a fact about the project, where to "
                "find something. One memory per topic; never a password or a key."
            ),
            args_model=MemoryWriteArgs,
            side_effect=SideEffect.WRITE,
            run=write,
            preview=preview,
            key=KeyArgument("name", KeyKind.TEXT),
        ),
    ]

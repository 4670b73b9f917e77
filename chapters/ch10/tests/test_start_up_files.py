"""The files read when a run starts are regular files, read up to a bound: AGENTS.md, CLAUDE.md,
~/.tutorial/AGENTS.md, each SKILL.md and .git/HEAD. A named pipe under one of those names does
not block the start, a link to /dev/zero does not take all the memory, a huge file costs its
cap and no more: each is a warning (or, for git, an "unknown" line), and the run goes on."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from chapters.ch02.tests.blocking import (
    bounded,
    link_to_dev_zero,
    needs_dev_zero,
    needs_fifo,
    printed_in_bounds,
)
from chapters.ch10.environment import git_state
from chapters.ch10.instructions import FILE_CAP, USER_FILE, read_instructions
from chapters.ch10.skills import MAX_SKILL_BYTES, SKILLS_FOLDER, load_skills
from chapters.ch10.tests.support import build, folders, project_skill, skill_text, write

# Where each start-up file lives: (the file, the folder the reader is given, how it is read).
INSTRUCTION_FILES = {
    "AGENTS.md": "ws/AGENTS.md",
    "CLAUDE.md": "ws/CLAUDE.md",
    "~/.tutorial/AGENTS.md": f"home/{USER_FILE.as_posix()}",
}


def _instruction_file(tmp_path: Path, shown: str) -> Path:
    """Where the start-up file `shown` is read from, its folder and the workspace made."""
    path = tmp_path / INSTRUCTION_FILES[shown]
    path.parent.mkdir(parents=True, exist_ok=True)
    folders(tmp_path)
    return path


def _instruction_warnings(tmp_path: Path) -> tuple[str, ...]:
    where = folders(tmp_path)
    return build(where.workspace, where.home).warnings


@needs_fifo
@pytest.mark.parametrize("shown", INSTRUCTION_FILES)
def test_a_named_pipe_as_an_instruction_file_is_a_warning_not_a_hang(
    tmp_path: Path, shown: str
) -> None:
    fifo = _instruction_file(tmp_path, shown)
    os.mkfifo(fifo)
    warnings, hung = bounded(fifo, lambda: _instruction_warnings(tmp_path))
    assert not hung, f"reading {shown} blocked on a named pipe"
    assert warnings == (
        f"{shown} cannot be read (it is a named pipe (FIFO), not a regular file); "
        "it is left out of the prompt",
    )


@needs_dev_zero
@pytest.mark.parametrize("shown", INSTRUCTION_FILES)
def test_an_instruction_file_linked_to_dev_zero_is_a_warning_in_bounded_memory(
    tmp_path: Path, shown: str
) -> None:
    link_to_dev_zero(_instruction_file(tmp_path, shown))
    printed = printed_in_bounds(
        "from chapters.ch10.instructions import read_instructions",
        f"found = read_instructions(Path({str(tmp_path / 'ws')!r}), "
        f"Path({str(tmp_path / 'home')!r}))",
        "print(found.files, found.warnings)",
    )
    assert printed.startswith(f"() ('{shown} cannot be read ("), printed
    assert "it is left out of the prompt" in printed


def _peak_bytes(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_huge_agents_md_is_read_only_up_to_its_cap(tmp_path: Path) -> None:
    where = folders(tmp_path)
    line = "- a rule that goes on and on\n"
    write(where.workspace / "AGENTS.md", line * (8 * 1024 * 1024 // len(line)))  # 8 MB
    found: list[object] = []
    peak = _peak_bytes(lambda: found.append(read_instructions(where.workspace, where.home)))
    assert peak < 40 * FILE_CAP, f"{peak:,} bytes to read a file whose cap is {FILE_CAP:,}"
    (kept,) = read_instructions(where.workspace, where.home).files
    assert len(kept.text) <= FILE_CAP
    assert kept.text.startswith(line)
    assert kept.text.endswith(
        f"[cut: AGENTS.md is more than {4 * FILE_CAP:,} bytes, over its cap of {FILE_CAP:,}; "
        "the rest is left out]"
    )


def test_a_cut_never_splits_a_character(tmp_path: Path) -> None:
    """The bound is in bytes and may end inside a character: that character is left out."""
    where = folders(tmp_path)
    write(where.workspace / "AGENTS.md", "a" + "规" * (2 * FILE_CAP))  # 3 bytes each, shifted
    (kept,) = read_instructions(where.workspace, where.home).files
    assert kept.text.startswith("a" + "规" * 100)
    assert "\ufffd" not in kept.text


# --- SKILL.md --------------------------------------------------------------------------------


@needs_fifo
def test_a_named_pipe_as_skill_md_is_a_warning_not_a_hang(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "good")
    fifo = where.workspace / SKILLS_FOLDER / "piped" / "SKILL.md"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    catalog, hung = bounded(fifo, lambda: load_skills(where.workspace, where.home))
    assert not hung, "reading SKILL.md blocked on a named pipe"
    assert catalog is not None
    assert catalog.names == ("good",)  # type: ignore[attr-defined]
    assert catalog.warnings == (  # type: ignore[attr-defined]
        ".tutorial/skills/piped/SKILL.md: cannot be read (it is a named pipe (FIFO), not a "
        "regular file); the skill is left out",
    )


@needs_dev_zero
def test_a_skill_md_linked_to_dev_zero_is_a_warning_in_bounded_memory(tmp_path: Path) -> None:
    where = folders(tmp_path)
    link_to_dev_zero(where.workspace / SKILLS_FOLDER / "zero" / "SKILL.md")
    printed = printed_in_bounds(
        "from chapters.ch10.skills import load_skills",
        f"catalog = load_skills(Path({str(where.workspace)!r}), Path({str(where.home)!r}))",
        "print(catalog.names, catalog.warnings)",
    )
    assert printed.startswith("() ('.tutorial/skills/zero/SKILL.md: cannot be read ("), printed


def test_a_skill_md_over_its_bound_is_left_out_having_read_no_more_than_the_bound(
    tmp_path: Path,
) -> None:
    where = folders(tmp_path)
    body = "step\n" * (8 * 1024 * 1024 // 5)  # 8 MB of instructions
    project_skill(where.workspace, "huge", skill_text("huge", body=body))
    project_skill(where.workspace, "small")
    peak = _peak_bytes(lambda: load_skills(where.workspace, where.home))
    assert peak < 4 * MAX_SKILL_BYTES, (
        f"{peak:,} bytes to read skills of at most {MAX_SKILL_BYTES:,}"
    )
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ("small",)
    assert catalog.warnings == (
        f".tutorial/skills/huge/SKILL.md: cannot be read (it is more than {MAX_SKILL_BYTES:,} "
        "bytes, the most a SKILL.md may hold); the skill is left out",
    )


# --- .git/HEAD ---------------------------------------------------------------------------------


@needs_fifo
@pytest.mark.parametrize("name", [".git/HEAD", ".git"])
def test_a_named_pipe_in_place_of_git_files_is_unknown_not_a_hang(
    tmp_path: Path, name: str
) -> None:
    fifo = tmp_path / name
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    state, hung = bounded(fifo, lambda: git_state(tmp_path, ceiling=tmp_path))
    assert not hung, f"reading {name} blocked on a named pipe"
    assert state == (
        "unknown (a .git was found but could not be read: "
        f"{fifo} is a named pipe (FIFO), not a regular file)"
    )


@needs_dev_zero
def test_a_head_linked_to_dev_zero_is_unknown_in_bounded_memory(tmp_path: Path) -> None:
    link_to_dev_zero(tmp_path / ".git" / "HEAD")
    printed = printed_in_bounds(
        "from chapters.ch10.environment import git_state",
        f"print(git_state(Path({str(tmp_path)!r}), ceiling=Path({str(tmp_path)!r})))",
    )
    assert printed.startswith("unknown (a .git was found but could not be read: "), printed
    assert "character device" in printed


def test_a_head_longer_than_any_head_is_unknown(tmp_path: Path) -> None:
    write(tmp_path / ".git" / "HEAD", "ref: refs/heads/" + "x" * 100_000 + "\n")
    assert git_state(tmp_path, ceiling=tmp_path).startswith(
        "unknown (a .git was found but could not be read: "
    )

"""Long-term memory on disk: the file format, every rule a memory keeps, bad files left out with
one warning each, MEMORY.md rebuilt on every write, and the index as a prompt section."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from chapters.ch02.tests.blocking import (
    bounded,
    link_to_dev_zero,
    needs_dev_zero,
    needs_fifo,
    printed_in_bounds,
)
from chapters.ch09.memory import (
    INDEX_CAP,
    INDEX_FILE,
    MAX_FILE_BYTES,
    MEMORY_FOLDER,
    Memory,
    MemoryIndex,
    MemoryStore,
    MemoryType,
    Scope,
    memory_problem,
    name_problem,
    parse_memory,
)
from chapters.ch09.tests.support import memory_file, memory_text


def store(tmp_path: Path) -> MemoryStore:
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    return MemoryStore(tmp_path / "ws", tmp_path / "home")


def memory(
    name: str = "tabs",
    description: str = "Python files here are indented with tabs",
    kind: MemoryType = MemoryType.FEEDBACK,
    body: str = "The user asked for tabs, not spaces.",
    scope: Scope = Scope.PROJECT,
) -> Memory:
    return Memory(name, description, kind, body, scope)


# --- the format ---------------------------------------------------------------------------------


def test_a_memory_file_is_front_matter_then_the_body() -> None:
    assert memory().file_text() == (
        "---\nname: tabs\ndescription: Python files here are indented with tabs\n"
        "type: feedback\n---\n\nThe user asked for tabs, not spaces.\n"
    )


@pytest.mark.parametrize(
    "description",
    [
        "Plain words: with a colon",
        '[x] "quoted" and # not a comment',
        "'single' start",
        "- looks like a list item",
        "用户偏好：用中文回答",
        "ends with a hash #",
        "has a tab\there",
        "{braces}",
    ],
)
def test_any_one_line_description_reads_back_as_written(description: str) -> None:
    written = memory(description=description)
    assert parse_memory(written.file_text(), "tabs", Scope.PROJECT) == written


@pytest.mark.parametrize("name", ["tabs", "tabs-not-spaces", "user_role", "2fa", "a" * 64])
def test_a_good_name_is_a_safe_file_name(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "1 to 64"),
        ("a" * 65, "1 to 64"),
        ("../secrets", "no path separators"),
        ("..", "no path separators"),
        ("notes/tabs", "no path separators"),
        ("notes\\tabs", "no path separators"),
        ("C:tabs", "no path separators"),
        (".hidden", "no dots"),
        ("tabs.md", "no dots"),
        ("Tabs", "lowercase"),
        ("-tabs", "starts with a letter or a digit"),
        ("tabs ", "lowercase"),
        ("制表符", "lowercase"),
        ("con", "reserved"),
        ("nul", "reserved"),
        ("com1", "reserved"),
        ("lpt9", "reserved"),
        ("memory", "reserved"),
    ],
)
def test_a_name_that_is_not_a_safe_file_name_is_refused_and_says_why(name: str, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    ("description", "body", "why"),
    [
        ("two\nlines", "b", "description must be one line"),
        ("", "b", "description is 0 characters; it must be 1 to 200"),
        ("d" * 201, "b", "description is 201 characters; it must be 1 to 200"),
        ("d", "", "body is 0 characters; it must be 1 to 10,000"),
        ("d", "b" * 10_001, "body is 10,001 characters; it must be 1 to 10,000"),
    ],
)
def test_a_description_and_a_body_have_their_sizes(description: str, body: str, why: str) -> None:
    assert memory_problem("tabs", description, body) == why


# --- reading both folders ----------------------------------------------------------------------


def test_the_projects_and_the_users_memories_are_read_from_the_folders_passed_in(
    tmp_path: Path,
) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "tabs", memory_text("tabs", "Tabs, not spaces"))
    memory_file(memories.home, "role", memory_text("role", "A backend engineer", "user"))
    loaded = memories.load()
    assert list(loaded.project) == ["tabs"] and list(loaded.user) == ["role"]
    assert loaded.get("role") == Memory(
        "role", "A backend engineer", MemoryType.USER, "The body.", Scope.USER
    )
    assert loaded.warnings == ()


def test_the_projects_memory_wins_a_name_both_use(tmp_path: Path) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "tabs", memory_text("tabs", "The project's"))
    memory_file(memories.home, "tabs", memory_text("tabs", "The user's"))
    loaded = memories.load()
    found = loaded.get("tabs")
    assert found is not None and found.description == "The project's"
    assert "The user's" not in loaded.index()


def test_run_in_the_home_folder_the_two_folders_are_one(tmp_path: Path) -> None:
    memories = MemoryStore(tmp_path, tmp_path)
    memory_file(tmp_path, "tabs", memory_text("tabs"))
    loaded = memories.load()
    assert list(loaded.project) == ["tabs"] and dict(loaded.user) == {}


BROKEN = {
    "no front matter": ("Just text.\n", "line 1: the file must start with a --- line"),
    "not closed": ("---\nname: x\n", "the front matter is not closed"),
    "a nested map": ("---\nname: {a: b}\n---\nbody\n", "line 2: nested maps"),
    "no description": ("---\nname: x\ntype: user\n---\nbody\n", "description is missing"),
    "a list for a name": ("---\nname: [x]\n---\nbody\n", "name must be one line of text"),
    "another type": (
        "---\nname: x\ndescription: d\ntype: secret\n---\nbody\n",
        "type 'secret' is not one of user, feedback, project, reference",
    ),
    "another name": (memory_text("y"), "name 'y' must equal the file's name, 'x'"),
    "no body": ("---\nname: x\ndescription: d\ntype: user\n---\n", "body is 0 characters"),
}


@pytest.mark.parametrize(("text", "why"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_file_is_left_out_with_one_warning_naming_it(
    tmp_path: Path, text: str, why: str
) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "x", text)
    memory_file(memories.workspace, "tabs", memory_text("tabs"))
    index = MemoryIndex(memories)
    shown = index.text()
    assert "- tabs [feedback]" in shown and "- x " not in shown
    (warning,) = index.warnings
    assert warning.startswith(".tutorial/memory/x.md: ")
    assert why in warning
    assert warning.endswith("; left out of the memory index")


def test_a_file_that_is_not_utf8_is_a_warning_too(tmp_path: Path) -> None:
    memories = store(tmp_path)
    path = memories.home / MEMORY_FOLDER / "x.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\nname: x\xff\n---\n")
    (warning,) = memories.load().warnings
    assert warning.startswith("~/.tutorial/memory/x.md: ") and "utf-8" in warning


def test_the_index_file_and_other_files_are_not_memories(tmp_path: Path) -> None:
    memories = store(tmp_path)
    folder = memories.workspace / MEMORY_FOLDER
    memory_file(memories.workspace, "tabs", memory_text("tabs"))
    (folder / INDEX_FILE).write_text("# Memory index\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not a memory", encoding="utf-8")
    (folder / ".tabs.md.0123abcd.tutorial-tmp").write_text("a write in progress", encoding="utf-8")
    (folder / "sub.md").mkdir()
    loaded = memories.load()
    assert list(loaded.project) == ["tabs"] and loaded.warnings == ()


# --- writing ------------------------------------------------------------------------------------


def test_memory_md_is_rebuilt_from_the_folder_on_every_write(tmp_path: Path) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "added-by-hand", memory_text("added-by-hand", "By hand"))
    memory_file(memories.workspace, "broken", "no front matter\n")
    assert memories.save(memory()) is None
    index = memories.workspace / MEMORY_FOLDER / INDEX_FILE
    lines = index.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# Memory index"
    assert [line for line in lines if line.startswith("- ")] == [
        "- [added-by-hand](added-by-hand.md) [feedback]: By hand",
        "- [tabs](tabs.md) [feedback]: Python files here are indented with tabs",
    ]
    memories.save(memory(name="role", kind=MemoryType.USER, description="A backend engineer"))
    assert "- [role](role.md) [user]: A backend engineer" in index.read_text(encoding="utf-8")


def test_a_users_memory_is_written_in_the_home_folder_with_its_own_index(tmp_path: Path) -> None:
    memories = store(tmp_path)
    memories.save(memory(scope=Scope.USER))
    folder = memories.home / MEMORY_FOLDER
    assert sorted(p.name for p in folder.iterdir()) == [INDEX_FILE, "tabs.md"]
    assert not (memories.workspace / MEMORY_FOLDER).exists()


def test_a_write_that_fails_leaves_the_old_memory_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is replaced atomically (chapters/ch02/text_files.py): old or new, never half."""
    memories = store(tmp_path)
    memories.save(memory(body="The old body."))
    path = memories.workspace / MEMORY_FOLDER / "tabs.md"
    before = path.read_bytes()

    def broken_replace(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        memories.save(memory(body="The new body."))
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [INDEX_FILE, "tabs.md"]


# --- the index in the system prompt --------------------------------------------------------------


def test_the_index_is_a_prompt_section_with_a_source_and_a_text(tmp_path: Path) -> None:
    memories = store(tmp_path)
    memories.save(memory())
    memories.save(memory(name="role", kind=MemoryType.USER, description="A backend engineer"))
    memories.save(
        memory(name="wiki", kind=MemoryType.REFERENCE, scope=Scope.USER, description="Docs: wiki/x")
    )
    section = MemoryIndex(memories)
    assert section.source == "~/.tutorial/memory/ and .tutorial/memory/"
    lines = section.text().splitlines()
    assert lines[0].startswith("Notes kept from earlier sessions") and "memory_read" in lines[0]
    assert lines[1:] == [
        "Project memories (.tutorial/memory/):",
        "- role [user]: A backend engineer",
        "- tabs [feedback]: Python files here are indented with tabs",
        "The user's memories, for every project (~/.tutorial/memory/):",
        "- wiki [reference]: Docs: wiki/x",
    ]
    assert "The user asked for tabs" not in section.text()  # bodies are read on demand


def test_no_memories_is_an_empty_section(tmp_path: Path) -> None:
    assert MemoryIndex(store(tmp_path)).text() == ""


def test_the_index_is_capped_in_whole_lines_and_says_how_many_are_left_out(
    tmp_path: Path,
) -> None:
    memories = store(tmp_path)
    for number in range(60):
        memory_file(memories.workspace, f"m{number:02d}", memory_text(f"m{number:02d}", "d" * 80))
    text = MemoryIndex(memories).text()
    assert len(text) <= INDEX_CAP
    listed = [line for line in text.splitlines() if line.startswith("- m")]
    assert listed == [f"- m{n:02d} [feedback]: {'d' * 80}" for n in range(len(listed))]
    assert text.splitlines()[-1] == (
        f"[{60 - len(listed)} more not listed: the index is capped at 3,000 characters; "
        "memory_read with an unknown name lists every name]"
    )


def test_the_index_is_read_when_asked_so_every_run_sees_the_folder_as_it_is(
    tmp_path: Path,
) -> None:
    memories = store(tmp_path)
    section = MemoryIndex(memories)
    assert section.text() == ""
    memories.save(memory())
    assert "- tabs [feedback]" in section.text()


# --- files that are not plain, small files ------------------------------------------------------


@needs_fifo
def test_a_named_pipe_in_the_memory_folder_is_a_warning_not_a_hang(tmp_path: Path) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "tabs", memory_text("tabs"))
    fifo = memories.workspace / MEMORY_FOLDER / "piped.md"
    os.mkfifo(fifo)
    index = MemoryIndex(memories)
    shown, hung = bounded(fifo, index.text)
    assert not hung, "reading the memory folder blocked on a named pipe"
    assert isinstance(shown, str) and "- tabs [feedback]" in shown and "piped" not in shown
    assert index.warnings == (
        ".tutorial/memory/piped.md: it is a named pipe (FIFO), not a regular file; "
        "left out of the memory index",
    )


@needs_dev_zero
def test_a_memory_file_linked_to_dev_zero_is_a_warning_in_bounded_memory(tmp_path: Path) -> None:
    memories = store(tmp_path)
    link_to_dev_zero(memories.workspace / MEMORY_FOLDER / "zero.md")
    printed = printed_in_bounds(
        "from chapters.ch09.memory import MemoryStore",
        f"loaded = MemoryStore(Path({str(memories.workspace)!r}), Path({str(memories.home)!r}))"
        ".load()",
        "print(dict(loaded.project), loaded.warnings)",
    )
    assert printed.startswith("{} ('.tutorial/memory/zero.md: "), printed
    assert "left out of the memory index" in printed


def test_a_huge_memory_file_is_left_out_having_read_no_more_than_its_bound(
    tmp_path: Path,
) -> None:
    memories = store(tmp_path)
    memory_file(memories.workspace, "huge", memory_text("huge") + "more\n" * 2_000_000)  # 10 MB
    tracemalloc.start()
    try:
        loaded = memories.load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_FILE_BYTES, (
        f"{peak:,} bytes to read a memory of at most {MAX_FILE_BYTES:,}"
    )
    assert dict(loaded.project) == {}
    assert loaded.warnings == (
        f".tutorial/memory/huge.md: it is more than {MAX_FILE_BYTES:,} bytes, more than any "
        "memory holds; left out of the memory index",
    )

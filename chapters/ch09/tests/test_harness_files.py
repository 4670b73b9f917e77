"""Session logs and memories are never written, read or mended through a planted link: a
sessions or memory folder that leads out of the workspace (or home), and a log or memory file
that is a link, are refused with a message that says so; the run goes on where it can."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chapters.ch03.policy import Mode
from chapters.ch03.tests.support import link
from chapters.ch08.tests.support import answering
from chapters.ch09.memory import MEMORY_FOLDER, MemoryIndex, MemoryStore, Scope
from chapters.ch09.memory_tools import MEMORY_READ, MEMORY_WRITE
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch09.sessions import SessionNotFound, list_sessions
from chapters.ch09.tests.support import Session, memory_file, memory_text
from chapters.ch09.tests.test_memory_tools import TABS, rig

# --- session logs -------------------------------------------------------------------------------


def test_a_sessions_folder_linked_outside_gets_no_line(workspace: Path, outside: Path) -> None:
    link(workspace / SESSIONS_FOLDER, outside)
    session = Session(workspace)
    assert session.start("go", [answering()]) == "done"
    assert list(outside.iterdir()) == []
    assert "harness: cannot write the transcript .tutorial/sessions/" in session.printed()
    assert ".tutorial/sessions leads outside" in session.printed()


def _linked_log(workspace: Path, outside: Path) -> tuple[Path, bytes]:
    """A session whose log was moved outside, a link left in its place, its last line cut."""
    session = Session(workspace)
    session.start("go", [answering()])
    target = outside / session.path.name
    shutil.move(session.path, target)
    data = target.read_bytes() + json.dumps({"turn": 3, "message": {}}).encode()[:9]
    target.write_bytes(data)
    link(session.path, target)
    return session.path, data


def test_resume_of_a_log_that_is_a_link_leaves_its_target_alone(
    workspace: Path, outside: Path
) -> None:
    path, data = _linked_log(workspace, outside)
    with pytest.raises(SessionNotFound) as caught:
        Session(workspace).resume("go on", [answering()])
    assert (outside / path.name).read_bytes() == data  # not cut, not appended to
    assert f".tutorial/sessions/{path.name} cannot be read (it is a link" in str(caught.value)


def test_the_listing_names_a_log_that_is_a_link_and_leaves_it_out(
    workspace: Path, outside: Path
) -> None:
    path, _ = _linked_log(workspace, outside)
    sessions, problems = list_sessions(workspace)
    assert sessions == []
    assert problems == [
        f".tutorial/sessions/{path.name} cannot be read (it is a link: the harness does not "
        "open its own files through links)"
    ]


def test_a_sessions_folder_linked_outside_is_not_listed(workspace: Path, outside: Path) -> None:
    other = Session(outside / "ws")
    (outside / "ws").mkdir()
    other.start("someone else's", [answering()])
    link(workspace / SESSIONS_FOLDER, outside / "ws" / SESSIONS_FOLDER)
    sessions, problems = list_sessions(workspace)
    assert sessions == []
    (problem,) = problems
    assert problem.startswith(".tutorial/sessions cannot be read (it leads outside ")


# --- memory ---------------------------------------------------------------------------------------


def test_memory_write_into_a_folder_linked_outside_fails_and_writes_nothing_there(
    tmp_path: Path, outside: Path
) -> None:
    r = rig(tmp_path, Mode.ACCEPT_EDITS)
    link(r.root / MEMORY_FOLDER, outside)
    history = r.run((MEMORY_WRITE, TABS))
    assert list(outside.iterdir()) == []
    assert r.result(history).startswith(
        "io_error: .tutorial/memory/tabs.md could not be written: .tutorial/memory leads outside "
    )


def test_a_memory_folder_linked_outside_is_not_read(workspace: Path, outside: Path) -> None:
    memory_file(outside, "secret", memory_text("secret", "SECRET NOTE"))
    link(workspace / MEMORY_FOLDER, outside / MEMORY_FOLDER)
    index = MemoryIndex(MemoryStore(workspace, workspace.parent / "home"))
    assert "SECRET" not in index.text()
    (warning,) = index.warnings
    assert warning.startswith(".tutorial/memory/ cannot be read (.tutorial/memory leads outside")


def test_a_memory_file_that_is_a_link_is_left_out_and_never_read(
    tmp_path: Path, outside: Path
) -> None:
    target = memory_file(outside, "secret", memory_text("secret", "SECRET NOTE"))
    r = rig(tmp_path)
    link(r.root / MEMORY_FOLDER / "secret.md", target)
    store = MemoryStore(r.root, r.home)
    loaded = store.load()
    assert loaded.get("secret") is None
    assert loaded.warnings == (
        ".tutorial/memory/secret.md: it is a link: the harness does not open its own files "
        "through links; left out of the memory index",
    )
    history = r.run((MEMORY_READ, {"name": "secret"}))
    assert "SECRET" not in r.result(history)
    assert store.folder(Scope.PROJECT) == r.root / MEMORY_FOLDER

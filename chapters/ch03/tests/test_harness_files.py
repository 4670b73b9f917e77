"""The harness's own files are never written through a link: a folder of them that leads out of
the workspace (or home) is refused, a file of them that is a link is refused, a named pipe in
their place is refused without waiting on it. The audit log fails closed: a decision it cannot
write safely denies the call."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch02.tests.blocking import bounded, needs_fifo
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.harness_files import UnsafeHarnessFile, open_harness_file
from chapters.ch03.tests.support import DONE, link, planted_link, shell, turn
from chapters.ch03.tests.test_gate_and_cli import make_agent

APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
DENIED = "denied: the decision could not be written to the audit log, so the call did not run."


def _append(base: Path, relative: Path, text: bytes = b"line\n") -> None:
    descriptor = open_harness_file(base, relative, APPEND)
    try:
        os.write(descriptor, text)
    finally:
        os.close(descriptor)


# --- the helper ---------------------------------------------------------------------------------


def test_missing_folders_are_made_inside_the_base_and_the_file_is_written(
    workspace: Path,
) -> None:
    _append(workspace, Path(".tutorial") / "logs" / "a.jsonl")
    _append(workspace, Path(".tutorial") / "logs" / "a.jsonl")
    assert (workspace / ".tutorial" / "logs" / "a.jsonl").read_bytes() == b"line\nline\n"


def test_a_folder_linked_outside_the_base_is_refused_and_nothing_is_made_there(
    workspace: Path, outside: Path
) -> None:
    link(workspace / ".tutorial", outside)
    with pytest.raises(UnsafeHarnessFile) as caught:
        _append(workspace, Path(".tutorial") / "logs" / "a.jsonl")
    assert list(outside.iterdir()) == []
    assert str(caught.value) == (
        f".tutorial/logs leads outside {workspace.resolve()} (to {outside.resolve() / 'logs'}): "
        "the harness keeps its files inside it and does not follow links out"
    )


def test_a_folder_linked_to_another_folder_inside_the_base_is_followed(workspace: Path) -> None:
    (workspace / "build" / "tutorial").mkdir(parents=True)
    link(workspace / ".tutorial", workspace / "build" / "tutorial")
    _append(workspace, Path(".tutorial") / "a.jsonl")
    assert (workspace / "build" / "tutorial" / "a.jsonl").read_bytes() == b"line\n"


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_file_that_is_a_link_is_refused_wherever_it_points(
    workspace: Path, outside: Path, where: str
) -> None:
    target = (outside if where == "outside" else workspace) / "target.txt"
    target.write_bytes(b"kept\n")
    link(workspace / ".tutorial" / "a.jsonl", target)
    with pytest.raises(UnsafeHarnessFile) as caught:
        _append(workspace, Path(".tutorial") / "a.jsonl")
    assert target.read_bytes() == b"kept\n"
    assert str(caught.value) == (
        ".tutorial/a.jsonl is a link: the harness does not open its own files through links"
    )


def test_a_dangling_folder_link_is_refused_and_its_target_is_not_made(
    workspace: Path, outside: Path
) -> None:
    link(workspace / ".tutorial", outside / "missing")
    with pytest.raises(UnsafeHarnessFile, match=r"^\.tutorial/logs cannot be resolved"):
        _append(workspace, Path(".tutorial") / "logs" / "a.jsonl")
    assert list(outside.iterdir()) == []


@needs_fifo
def test_a_named_pipe_in_place_of_a_harness_file_is_refused_without_waiting(
    workspace: Path,
) -> None:
    fifo = workspace / ".tutorial" / "a.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)

    def append() -> str:
        try:
            _append(workspace, Path(".tutorial") / "a.jsonl")
        except OSError as error:
            return str(error)
        return "written"

    said, hung = bounded(fifo, append)
    assert not hung, "opening a harness file blocked on a named pipe"
    assert said == ".tutorial/a.jsonl is a named pipe (FIFO), not a regular file"


# --- the audit log fails closed -----------------------------------------------------------------


def test_an_audit_folder_linked_outside_denies_every_call_and_writes_nothing_there(
    workspace: Path, outside: Path
) -> None:
    link(workspace / ".tutorial", outside)
    audit = AuditLog(workspace / AUDIT_FILE, inside=workspace)
    agent = make_agent(workspace, allow=["shell(git status)"], audit=audit)
    agent.run(turn(shell("c1", "git status")), DONE)
    assert agent.runner.commands == []
    assert agent.result("c1") == DENIED
    assert list(outside.iterdir()) == []
    assert ".tutorial leads outside" in agent.printed()


def test_an_audit_file_that_is_a_link_denies_and_its_target_is_untouched(
    workspace: Path, outside: Path
) -> None:
    target = planted_link(workspace / AUDIT_FILE, outside)
    agent = make_agent(workspace, allow=["shell(git status)"])
    agent.run(turn(shell("c1", "git status")), DONE)
    assert agent.runner.commands == []
    assert agent.result("c1") == DENIED
    assert target.read_bytes() == b"mine\n"
    assert "audit.jsonl is a link" in agent.printed()


def test_an_audit_file_swapped_for_a_link_mid_run_denies_the_next_call(
    workspace: Path, outside: Path
) -> None:
    agent = make_agent(workspace, allow=["shell(git status)"])
    target = outside / "notes.txt"
    target.write_bytes(b"mine\n")

    def swapped(request: Mapping[str, Any]) -> Mapping[str, Any]:
        (workspace / AUDIT_FILE).unlink()
        link(workspace / AUDIT_FILE, target)
        return turn(shell("c2", "git status"))

    agent.run(turn(shell("c1", "git status")), swapped, DONE)
    assert agent.runner.commands == ["git status"]  # c1 only
    assert agent.result("c2") == DENIED
    assert target.read_bytes() == b"mine\n"

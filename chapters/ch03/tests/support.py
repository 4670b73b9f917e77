"""Test helpers for chapter 3's tests, and for later tests that read the same files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

import shared.approval as approval_module
import shared.cli as shared_cli
from chapters.ch01.tests.cli_support import tutorial as tutorial  # for later chapters' tests
from shared.scripted import response, tool_call
from tutorial.catalog import CHAPTERS


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """An empty folder, a home folder of its own, and no provider settings."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "home"))
    yield


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder, `tmp_path/ws`: its parent is free for what lies outside it
    (a home folder, a link's target, another workspace)."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """An empty folder beside the workspace: where a planted link leads out to."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def write_json(path: Path, data: Any) -> None:
    """Write `data` as JSON, or a string as it is (to write malformed files on purpose)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def audit_records(path: Path) -> list[dict[str, Any]]:
    """Every line of an audit log: decisions and outcomes."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def read_audit(path: Path) -> list[dict[str, Any]]:
    """The decisions in an audit log, in order (each call that ran also has an outcome line)."""
    return [record for record in audit_records(path) if "decision" in record]


def read_outcomes(path: Path) -> list[dict[str, Any]]:
    return [record for record in audit_records(path) if "outcome" in record]


def ready_from(first: int) -> list[int]:
    """The chapters a promise made in chapter `first` must keep: it and every later ready one."""
    return [chapter.number for chapter in CHAPTERS if chapter.ready and chapter.number >= first]


TASK = "do the task"  # run_chapter's prompt, unless a test gives another


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return tool_call(call_id, name, json.dumps(arguments))


def shell(call_id: str, command: str) -> dict[str, Any]:
    return call(call_id, "shell", command=command)


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    """A model step that makes `calls`."""
    return response(None, list(calls))


DONE = response("done")


class TaskModel:
    """A scripted model for any chapter: each task makes its calls once, then reports.

    A request is answered by the task it works on (the first user message that
    holds one of `calls`' keys, so a sub-agent's own task has a script of its
    own): with that task's calls while the request has no tool result yet, then
    with the tool results' text as the answer. The number of requests a
    chapter makes (reminders, summaries, retries) does not matter.
    """

    name = "task-model"
    label = "task-model (scripted, no network)"

    def __init__(self, calls: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        self.calls = calls
        self.requests: list[Mapping[str, Any]] = []

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.requests.append(request)
        messages = request["messages"]
        asked = [str(m.get("content")) for m in messages if m["role"] == "user"]
        task = next((t for text in asked for t in self.calls if t in text), None)
        results = [str(m.get("content")) for m in messages if m["role"] == "tool"]
        if task is None:
            return response("no task I know")
        if not results:
            return response(None, list(self.calls[task]))
        return response("results:\n" + "\n".join(results))


def task(*calls: Mapping[str, Any]) -> TaskModel:
    """A model for `run_chapter`'s one task, the default prompt: it makes `calls`, then reports."""
    return TaskModel({TASK: calls})


RunChapter = Callable[..., Result]


@pytest.fixture
def run_chapter(monkeypatch: pytest.MonkeyPatch) -> RunChapter:
    """`run_chapter(number, workspace, model, *options, terminal=False, stdin=None)`: the
    chapter's command line (`tutorial run`), its model replaced by `model`. With `terminal`
    the human is asked at a terminal and answers with `stdin`; without, nobody can answer."""

    def run(
        number: int,
        workspace: Path,
        model: TaskModel,
        *options: str,
        prompt: str = TASK,
        terminal: bool = False,
        stdin: str | None = None,
    ) -> Result:
        monkeypatch.setattr(shared_cli, "select_model", lambda **_: model)
        monkeypatch.setattr(approval_module, "is_terminal", lambda stream: terminal)
        workspace.mkdir(parents=True, exist_ok=True)
        return tutorial(
            "run",
            "--chapter",
            str(number),
            "--prompt",
            prompt,
            "--workspace",
            str(workspace),
            *options,
            stdin=stdin,
        )

    return run


def link(path: Path, target: Path) -> None:
    """`path` -> `target`, or skip where this system will not make links (Windows, unprivileged)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as error:
        pytest.skip(f"cannot make a symbolic link here ({error})")


def planted_link(path: Path, outside: Path) -> Path:
    """A link at `path` to a file of the user's outside the workspace, `outside/notes.txt`
    holding `mine`; returns that file, for the test to check that it stayed as it was."""
    target = outside / "notes.txt"
    target.write_bytes(b"mine\n")
    link(path, target)
    return target

"""Chapter 12's command line: --task-list and its check, the `tasks` listing (empty, a diamond,
ready marks, a corrupt file), the demo's two runs through `RECIPE.main`, and two runs over the
real `openai` SDK, streamed, to the local server (chapters/ch01/tests/chat_server.py) that
share one task list on disk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import chapters.ch12.demo as demo
from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch12.agent import RECIPE
from chapters.ch12.tasks import TaskStatus, TaskStore

pytestmark = pytest.mark.usefixtures("isolated")

chapter12 = command_line(RECIPE.command(), "python -m chapters.ch12")  # in this process
demo_folder = demo_folder_fixture(demo.write_demo_files)
WIDE = {"COLUMNS": "200"}  # the listing's lines unwrapped, whatever the path's length


@pytest.fixture(autouse=True)
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fallback settings from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def tasks(*args: str) -> Any:
    return tutorial("tasks", "--chapter", "12", *args, env=WIDE)


# --- the options ---------------------------------------------------------------------------------


def test_help_lists_task_list_with_its_default_and_no_remind_after() -> None:
    shown = " ".join(chapter12("--help").stdout.split())
    assert re.search(r"--task-list NAME .*?\[default: default\]", shown)
    assert "--remind-after" not in shown


@pytest.mark.parametrize(
    ("name", "fix"),
    [("my list", "my-list"), ("../up", "up"), ("x" * 65, "x" * 64), ("", "default")],
    ids=["space", "path", "too-long", "empty"],
)
def test_a_bad_task_list_is_exit_2_with_the_fix_before_any_request(
    name: str, fix: str, tmp_path: Path
) -> None:
    with ChatServer([]) as server:
        result = chapter12("--prompt", "hi", "--workspace", str(tmp_path), "--task-list", name,
                           env=model_env(server.base_url))  # fmt: skip
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "Invalid value for '--task-list': task list name" in result.stderr
    assert "must be 1 to 64 characters, each a letter, a digit, - or _" in result.stderr
    assert f"try --task-list {fix}\n" in result.stderr
    assert not (tmp_path / ".tutorial").exists()
    listed = tasks("--workspace", str(tmp_path), "--task-list", name)
    assert listed.exit_code == 2 and f"try --task-list {fix}" in listed.stderr


# --- the listing ---------------------------------------------------------------------------------


def test_an_empty_or_missing_list_says_so(tmp_path: Path) -> None:
    result = tasks("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"No tasks in .tutorial/tasks/default/ of {tmp_path.resolve()} yet: a run from this "
        "folder makes them with task_create.\n"
    )
    assert not (tmp_path / ".tutorial").exists()  # listing made nothing


def diamond(root: Path) -> TaskStore:
    """1 done; 2 (claimed by alice) and 3 wait for 1; 4 waits for 2 and 3; 5 waits for 4."""
    store = TaskStore(root)
    made = [
        store.create("Design the [API]"),
        store.create("Write the server", blocked_by=["1"]),
        store.create("Write the client", blocked_by=["1"]),
        store.create("Integrate", blocked_by=["2", "3"]),
        store.create("Release", blocked_by=["4"]),
        store.update("1", status="completed"),
        store.update("2", status="in_progress", owner="alice"),
    ]
    assert all(outcome.ok for outcome in made), [o.text for o in made]
    return store


def test_a_diamond_is_drawn_under_both_blockers_with_the_ready_task_marked(
    tmp_path: Path,
) -> None:
    diamond(tmp_path)
    result = tasks("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == (
        f"5 tasks in .tutorial/tasks/default/ of {tmp_path.resolve()}: "
        "1 ready · 1 in progress · 2 blocked · 1 done\n"
        "└── 1 [completed] Design the [API]\n"
        "    ├── 2 [in_progress] Write the server (owner: alice)\n"
        "    │   └── 4 [pending] Integrate (also waits for 3)\n"
        "    │       └── 5 [pending] Release\n"
        "    └── 3 [pending] Write the client · ready\n"
        "        └── 4 [pending] Integrate (also waits for 2)\n"
        "            └── (what waits for it: drawn above)\n"
    )


def test_tasks_that_wait_for_nothing_are_roots_and_ready(tmp_path: Path) -> None:
    store = TaskStore(tmp_path, "side")
    assert store.create("One").ok and store.create("Two").ok
    result = tasks("--workspace", str(tmp_path), "--task-list", "side")
    assert result.stdout.splitlines()[1:] == [
        "├── 1 [pending] One · ready",
        "└── 2 [pending] Two · ready",
    ]


def test_a_corrupt_file_is_a_warning_and_the_rest_is_drawn(tmp_path: Path) -> None:
    store = diamond(tmp_path)
    (store.folder / "6.json").write_text("not json", encoding="utf-8")
    result = tasks("--workspace", str(tmp_path))
    assert result.exit_code == 0
    (warning,) = result.stderr.splitlines()
    assert warning.startswith("warning: .tutorial/tasks/default/6.json: not JSON")
    assert warning.endswith("; left out of the task list")
    assert result.stdout.startswith(f"5 tasks in .tutorial/tasks/default/ of {tmp_path.resolve()}")
    assert (store.folder / "6.json").read_text(encoding="utf-8") == "not json"  # untouched


def test_a_cycle_in_a_hand_edited_file_is_drawn_once_and_said(tmp_path: Path) -> None:
    store = TaskStore(tmp_path)
    assert store.create("A").ok and store.create("B", blocked_by=["1"]).ok
    first = json.loads((store.folder / "1.json").read_text(encoding="utf-8"))
    (store.folder / "1.json").write_text(json.dumps({**first, "blockedBy": ["2"]}), "utf-8")
    result = tasks("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "└── 1 [pending] A (also waits for 2)",
        "    └── 2 [pending] B",
        "        └── 1 [pending] A",
        "            └── (a cycle: 1 → 2 → 1; only a hand-edited file can hold one)",
    ]


# --- the demo ----------------------------------------------------------------------------------


def test_the_demo_plans_three_tasks_does_two_and_the_next_session_does_the_third(
    demo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        RECIPE.main(["--demo"])
    out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    first, second = out.splitlines()
    assert first.startswith("[scripted] Tasks 1 and 2 are done") and "task 3 is unblocked" in first
    assert second.startswith("[scripted] The changelog line is in CHANGES.md")
    assert "tasks: .tutorial/tasks/default/ (empty)" in err  # the banner, before run 1
    assert "[task_update → blocked]\nblocked: task 3 waits for 1, 2" in err
    assert "ok: task 2 updated: status in_progress → completed; unblocked: 3" in err
    assert "\n3 [pending] Add a SAVE5 line to CHANGES.md\n" in err  # run 2's task_list

    assert demo.NEW_CODES in (demo_folder / demo.CART).read_text(encoding="utf-8")
    assert (demo_folder / demo.TEST_FILE).read_text(encoding="utf-8") == demo.TEST
    assert (demo_folder / "CHANGES.md").read_text(encoding="utf-8") == demo.CHANGES
    snapshot = TaskStore(demo_folder).list()
    assert [t.status for t in snapshot.tasks] == [TaskStatus.COMPLETED] * 3
    assert snapshot.tasks[2].blockedBy == ["1", "2"]
    assert len(list((demo_folder / SESSIONS_FOLDER).glob("*.jsonl"))) == 2  # two sessions


def test_the_dispatcher_runs_chapter_12_and_its_other_commands(tmp_path: Path) -> None:
    run = tutorial("run", "--chapter", "12", "--demo")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.count("[scripted]") == 2
    shown = tutorial("prompt", "--chapter", "12", "--workspace", str(tmp_path))
    assert shown.exit_code == 0, shown.stderr
    assert "todo_write" not in shown.stdout  # chapter 10 writes a line only for a tool there
    assert (
        "todo_write" in tutorial("prompt", "--chapter", "11", "--workspace", str(tmp_path)).stdout
    )
    agents = tutorial("agents", "--chapter", "12", "--workspace", str(tmp_path))
    assert "task_create, task_update, task_get, task_list" in agents.stdout
    assert "todo_write" not in agents.stdout
    earlier = tutorial("tasks", "--chapter", "11")
    assert earlier.exit_code == 2
    assert "Chapter 11 keeps no task list; tasks are kept from chapter 12 on" in earlier.stderr
    diff = tutorial("diff", "--chapter", "12", "--stat")
    assert "chapters/ch12/agent.py" in diff.stdout
    assert "extends chapters/ch11/agent.py" in diff.stdout


# --- over the wire -------------------------------------------------------------------------------


def calls(*made: tuple[str, str, dict[str, Any]]) -> Any:
    return sse(*calls_stream(*((i, name, json.dumps(a)) for i, name, a in made)))


def test_over_the_wire_two_runs_share_the_task_list(tmp_path: Path) -> None:
    plan = calls(
        ("c1", "task_create", {"subject": "Write the code", "activeForm": "Writing the code"}),
        ("c2", "task_create", {"subject": "Release it", "blockedBy": [1]}),  # an id as a number
    )
    with ChatServer([plan, sse(*text_stream("Planned."))]) as server:
        first = chapter12("--prompt", "Plan it.", "--workspace", str(tmp_path),
                          env=model_env(server.base_url))  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert first.exit_code == 0, first.stderr
    assert first.stdout == "Planned.\n"
    assert "tasks: .tutorial/tasks/default/ (empty)" in first.stderr
    tools = {t["function"]["name"]: t["function"] for t in bodies[0]["tools"]}
    assert "todo_write" not in tools
    assert list(tools["task_create"]["parameters"]["properties"]) == [
        "subject",
        "description",
        "activeForm",
        "blockedBy",
    ]
    assert list(tools["task_update"]["parameters"]["properties"]) == [
        "taskId",
        "status",
        "owner",
        "subject",
        "description",
        "activeForm",
        "addBlockedBy",
        "addBlocks",
    ]
    assert "todo_write" not in bodies[0]["messages"][0]["content"]
    results = [m["content"] for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert results[0] == "created task 1: Write the code"
    assert results[1].startswith("created task 2: Release it; waits for 1")

    listing = calls(("c1", "task_list", {}))
    with ChatServer([listing, sse(*text_stream("Task 1 is ready."))]) as server:
        second = chapter12("--prompt", "What is open?", "--workspace", str(tmp_path),
                           env=model_env(server.base_url))  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert second.exit_code == 0, second.stderr
    assert "tasks: .tutorial/tasks/default/ (2 tasks, 1 ready)" in second.stderr
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user"]  # a new history
    assert bodies[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "ok: 2 tasks, 1 ready to start\n"
        "1 [pending] Write the code\n"
        "2 [pending] Release it waits for: 1",
    }

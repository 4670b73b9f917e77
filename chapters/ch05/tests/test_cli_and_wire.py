"""Chapter 5's command line: the demo, --trace, --remind-after, and a run over the real SDK.

The commands run through click's runner as a user runs them
(`python -m tutorial run --chapter 5 ...`). The wire test points the real
`openai` SDK, configured from the environment like any real run, at the local
Chat Completions server on 127.0.0.1.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import chapters.ch05.agent as chapter_agent
import shared.console
from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env, traced_requests
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.tests.support import read_audit, tutorial
from chapters.ch05.demo import README, write_demo_files
from chapters.ch05.tests.support import (
    LEFT_OPEN,
    REMINDER_NOTICE,
    REMINDER_PREFIX,
    glob,
    is_reminder,
    item,
    reminded_at,
    todo,
)
from chapters.ch05.todo import TODO_TOOL, TodoPlan, make_todo_tool
from shared.scripted import response
from shared.tools import function_definition

pytestmark = pytest.mark.usefixtures("isolated")

demo_folder = demo_folder_fixture(write_demo_files)

DEMO_ANSWER = "[scripted] README.md now has one line about greet.py and one about shapes.py.\n"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# --- the demo ------------------------------------------------------------------------------


def test_the_demo_finishes_the_plan_after_exactly_one_reminder(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "5", "--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == DEMO_ANSWER  # all three items completed: no note
    err = result.stderr
    assert err.count(REMINDER_NOTICE) == 1
    notice = f"{REMINDER_NOTICE} (plan: 0 of 3 completed)"
    assert err.index("(turn 4)") < err.index(notice) < err.index("(turn 5)")
    assert "assistant: [scripted] The harness reminded me: steps 1 and 2 are done." in err
    assert "plan: 2 of 3 completed\n" in err
    assert (
        "plan: 3 of 3 completed\n"
        "[x] 1. List the Python files\n"
        "[x] 2. Read each file\n"
        "[x] 3. Write README.md\n"
        "Every item is completed: answer the user.\n"
    ) in err
    assert (demo_folder / "README.md").read_text(encoding="utf-8") == README
    decisions = [(a["tool"], a["decision"]) for a in read_audit(demo_folder / AUDIT_FILE)]
    assert decisions.count((TODO_TOOL, "allow")) == 3


def test_the_trace_shows_the_reminder_in_request_5_and_in_none_before(
    demo_folder: Path,
) -> None:
    result = tutorial("run", "--chapter", "5", "--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    requests = traced_requests(result.stderr)
    assert len(requests) == 8
    assert reminded_at(requests) == [5]
    reminder = requests[4]["messages"][-1]
    assert reminder["role"] == "user"
    assert reminder["content"].startswith(REMINDER_PREFIX)
    assert reminder["content"].endswith(
        "[>] 1. List the Python files\n[ ] 2. Read each file\n[ ] 3. Write README.md"
    )
    # The notice comes just before the request that carries the reminder.
    assert f"{REMINDER_NOTICE} (plan: 0 of 3 completed)\n--- request 5 ---\n" in result.stderr
    for request in requests:
        assert TODO_TOOL in [tool["function"]["name"] for tool in request["tools"]]


def test_in_a_terminal_the_demo_draws_the_plan_under_the_spinner(
    demo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared.console, "is_terminal", lambda stream: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "120")  # rich's width: each spinner line stays one line
    monkeypatch.setattr(chapter_agent, "DEMO_PAUSE", 0.0)  # no waiting in tests
    result = tutorial("run", "--chapter", "5", "--demo")
    assert result.exit_code == 0, result.stderr
    err = re.sub(r" · \d+s\n", "\n", ANSI.sub("", result.stderr))  # the seconds waited
    assert "--- request" not in err and "[todo_write → ok]" not in err  # not the plain output
    assert "(turn 1)\n计划" not in err  # no plan yet while the first request waits
    assert "(turn 2)\n计划 plan: 0 of 3 completed\n  [>] 1. List the Python files\n" in err
    assert "(turn 6)\n计划 plan: 2 of 3 completed\n" in err
    assert "(turn 8)\n计划 plan: 3 of 3 completed\n" in err
    assert "README.md now has one line about greet.py" in result.stdout


def test_remind_after_0_is_a_usage_error() -> None:
    result = tutorial("run", "--chapter", "5", "--prompt", "hi", "--remind-after", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--remind-after': 0 is not in the range x>=1." in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_rule_can_name_todo_write_but_not_give_it_an_argument(demo_folder: Path) -> None:
    denied = tutorial("run", "--chapter", "5", "--demo", "--deny", "todo_write")
    assert denied.exit_code == 0, denied.stderr
    assert "[todo_write → denied]" in denied.stderr
    assert "(rule todo_write from --deny)" in denied.stderr

    # todo_write has no key argument: a spec would match nothing, so it is refused
    spec = tutorial("run", "--chapter", "5", "--demo", "--deny", "todo_write(x)")
    assert spec.exit_code == 2
    assert "todo_write has no argument a rule can match; write todo_write" in spec.stderr
    assert "Traceback" not in spec.stderr


def test_permissions_check_knows_todo_write_and_plan_mode_allows_it(tmp_path: Path) -> None:
    check = ("permissions", "check", "--chapter", "5", "--workspace", str(tmp_path))
    planned = tutorial(*check, "todo_write", "--mode", "plan")
    assert planned.exit_code == 0, planned.stderr
    assert planned.stdout.splitlines()[:2] == [
        "allow: todo_write",
        "  because: mode plan allows state calls",
    ]
    denied = tutorial(*check, "todo_write", "--deny", "todo_write")
    assert denied.stdout.startswith("deny: todo_write\n  because: rule todo_write from --deny")


def test_help_lists_remind_after_with_its_default() -> None:
    result = tutorial("run", "--chapter", "5", "--help")
    assert result.exit_code == 0, result.stderr
    assert "--remind-after" in result.stdout
    assert "[default: 3; x>=1]" in " ".join(result.stdout.split())


# --- over the real SDK ---------------------------------------------------------------------


def test_a_plan_a_reminder_and_the_open_items_note_over_the_wire(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    plan = [item("1", "Read notes.txt", "in_progress"), item("2", "Summarise it")]
    replies = [
        (200, response(None, [todo("call_1", *plan)])),
        (200, response(None, [glob("call_2")])),  # a silent reply: with --remind-after 1, remind
        (200, response("I stopped early.")),
    ]
    with ChatServer(replies) as server:
        result = tutorial(
            "run", "--chapter", "5", "--prompt", "Summarise notes.txt",
            "--workspace", str(workspace), "--remind-after", "1",
            env=model_env(server),
        )  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert len(bodies) == 3
    # The schema went over the wire as generated, $refs inlined.
    schema = function_definition(make_todo_tool(TodoPlan()))
    for body in bodies:
        assert schema in body["tools"]
    # The tool message carries the rendered plan.
    assert bodies[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "plan: 0 of 2 completed\n"
        "[>] 1. Read notes.txt\n"
        "[ ] 2. Summarise it\n"
        "Work on the in_progress item; update the list when its status changes.",
    }
    # --remind-after 1 reached the loop: one silent reply, then the reminder.
    assert reminded_at(bodies) == [3]
    assert not any(is_reminder(m) for m in bodies[1]["messages"])
    # The answer on stdout says what was left open.
    assert result.stdout == (
        "I stopped early.\n\n"
        "[harness] The model stopped with 2 of 2 plan items still open:\n"
        "[>] 1. Read notes.txt\n"
        "[ ] 2. Summarise it\n"
    )
    assert LEFT_OPEN not in result.stderr

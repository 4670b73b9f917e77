"""`--demo`: a job broken into three tasks, two done in one run, the third in the next.

The workspace is a new temporary folder holding chapter 6's small shop, with
settings in accept-edits mode so that the edits run without asking. The demo
is two runs of chapter 12's agent in that folder, one after the other, as a
person would type them:

    run 1   the user asks for a new discount code, its test and a changelog entry,
            the entry for tomorrow. The model makes three tasks, the third waiting
            for the first two (task_create ... blockedBy); starts the third too
            early and is refused (`blocked:`); claims and does task 1 (an edit of
            shop/cart.py) and task 2 (a new test file); completing task 2 says it
            unblocked task 3; the answer says task 3 is left for later
    run 2   a new session, an empty history: only the files remember. The model
            calls task_list, takes the task the list shows ready, writes
            CHANGES.md, completes it and answers

The scripted model reads what it is sent: run 2 takes its task from the
task_list result, and says there is nothing to go on with if the list is
empty. Only the model is scripted: the task list on disk, its lock, the edits,
the gate and the session logs are the real ones.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch06.demo import write_demo_files as write_shop
from chapters.ch07.scripted_stream import (
    AgentStep,
    AgentStreams,
    call_result,
    calls_stream,
    said,
    tool_call,
)
from chapters.ch09.demo import RunInSession  # one run in a session: chapter 9 makes them
from shared.console import Console
from shared.scripted import scripted_text

DEMO_MODEL = "scripted-demo"
FIRST = (
    "Add a discount code SAVE5 (5 percent off) to the shop, with a test, and a line about it "
    "in CHANGES.md. Track the work as tasks: the changelog line waits for the code and the "
    "test, and it is for tomorrow."
)
SECOND = "Go on with the open tasks."
DEMO_PROMPT = FIRST
DEMO_SETTINGS = {"permissions": {"defaultMode": "accept-edits"}}
CART = "shop/cart.py"
OLD_CODES = 'CODES = {"WELCOME10": 10, "STAFF": 30}'
NEW_CODES = 'CODES = {"WELCOME10": 10, "STAFF": 30, "SAVE5": 5}'
TEST_FILE = "tests/test_cart.py"
TEST = """\
from decimal import Decimal

from shop.cart import total


def test_save5_takes_5_percent_off() -> None:
    assert total([("tea", Decimal("20.00"), 1)], "SAVE5") == Decimal("19.00")
"""
CHANGES = "# Changes\n\n- New discount code SAVE5: 5 percent off the subtotal.\n"
TASKS = (  # (subject, activeForm, blockedBy)
    (f"Add SAVE5 to CODES in {CART}", "Adding SAVE5 to CODES", ()),
    (f"Test SAVE5 in {TEST_FILE}", "Writing the SAVE5 test", ()),
    ("Add a SAVE5 line to CHANGES.md", "Writing the changelog line", ("1", "2")),
)
_LISTED = re.compile(r"^(?P<id>\d+) \[(?P<status>\w+)\] (?P<subject>.+)$", re.M)


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch12-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    """Chapter 6's shop, and settings that let the edits run without asking."""
    write_shop(folder)
    settings = folder / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(DEMO_SETTINGS, indent=2) + "\n", encoding="utf-8")


def run_demo(run: RunInSession, console: Console) -> str:
    """The demo's two runs; the first answer is printed, the second returned.

    The caller has already shown the first prompt (it is `DEMO_PROMPT`).
    """
    first, _ = run(FIRST, None)
    console.answer(first)
    console.info(
        "\n── 第 2 次运行 run 2 of 2: a new session: an empty history, the same task list ──"
    )
    console.info(f'   python -m tutorial run --chapter 12 --prompt "{SECOND}"')
    console.info(f"user: {SECOND}")
    second, _ = run(SECOND, None)
    return second


def demo_model(*, stream: bool = True) -> AgentStreams:
    """Each run's script, chosen by the prompt it starts with."""
    scripts: Mapping[str, list[AgentStep]] = {
        FIRST: [
            _plan,
            _start_too_early,
            _start_task_1,
            _edit_the_cart,
            _finish_1_start_2,
            _write_the_test,
            _finish_2,
            _leave_3_for_later,
        ],
        SECOND: [_list_the_tasks, _take_the_ready_one, _write_the_changelog, _finish, _report],
    }
    return AgentStreams(scripts, name=DEMO_MODEL, stream=stream)


# --- run 1 ------------------------------------------------------------------------------------


def _plan(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for number, (subject, active, waits) in enumerate(TASKS, start=1):
        arguments: dict[str, Any] = {"subject": subject, "activeForm": active}
        if waits:
            arguments["blockedBy"] = list(waits)
        calls.append(tool_call(number, "task_create", arguments))
    text = scripted_text("Three tasks; the changelog line waits for the other two.")
    return calls_stream(*calls, text=text)


def _start_too_early(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("The changelog line first.")
    return calls_stream(_update(4, "3", status="in_progress"), text=text)


def _start_task_1(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_4").startswith("blocked:"):
        return said(f"Task 3 was not refused: {_first_line(request, 'call_4')}")
    text = scripted_text("Task 3 waits for 1 and 2: I start with task 1.")
    read = tool_call(6, "read_file", {"path": CART})
    return calls_stream(_update(5, "1", status="in_progress"), read, text=text)


def _edit_the_cart(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    edit = {"path": CART, "old_string": OLD_CODES, "new_string": NEW_CODES}
    return calls_stream(tool_call(7, "edit_file", edit))


def _finish_1_start_2(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_7").startswith("ok:"):
        return said(f"The edit failed: {_first_line(request, 'call_7')}")
    return calls_stream(_update(8, "1", status="completed"), _update(9, "2", status="in_progress"))


def _write_the_test(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return calls_stream(tool_call(10, "write_file", {"path": TEST_FILE, "content": TEST}))


def _finish_2(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_10").startswith("ok:"):
        return said(f"The test was not written: {_first_line(request, 'call_10')}")
    return calls_stream(_update(11, "2", status="completed"))


def _leave_3_for_later(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    done = call_result(request, "call_11")
    freed = "task 3 is unblocked" if "unblocked: 3" in done else "task 3 is still open"
    return said(
        f"Tasks 1 and 2 are done: SAVE5 is in CODES ({CART}) and {TEST_FILE} tests it. "
        f"As you asked, the changelog line is for tomorrow: {freed} and waits in the task "
        "list, .tutorial/tasks/default/."
    )


# --- run 2 ------------------------------------------------------------------------------------


def _list_the_tasks(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("A new session: the task list says what is open.")
    return calls_stream(tool_call(1, "task_list", {}), text=text)


def _take_the_ready_one(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    ready = _ready(call_result(request, "call_1"))
    if ready is None:
        return said("The task list has no task I can start: nothing to go on with.")
    task_id, subject = ready
    text = scripted_text(f"Task {task_id} is ready: {subject}. I take it.")
    return calls_stream(_update(2, task_id, status="in_progress"), text=text)


def _write_the_changelog(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_2").startswith("ok:"):
        return said(f"I could not start it: {_first_line(request, 'call_2')}")
    return calls_stream(tool_call(3, "write_file", {"path": "CHANGES.md", "content": CHANGES}))


def _finish(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_3").startswith("ok:"):
        return said(f"CHANGES.md was not written: {_first_line(request, 'call_3')}")
    task_id = _ready(call_result(request, "call_1"))
    return calls_stream(_update(4, task_id[0] if task_id else "3", status="completed"))


def _report(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not call_result(request, "call_4").startswith("ok:"):
        return said(f"The task was not completed: {_first_line(request, 'call_4')}")
    return said(
        "The changelog line is in CHANGES.md, and its task is completed: every task on the "
        "list is done."
    )


# --- helpers ----------------------------------------------------------------------------------


def _ready(listed: str) -> tuple[str, str] | None:
    """The first pending task in a task_list result that waits for nothing: (id, subject)."""
    for match in _LISTED.finditer(listed):
        if match["status"] == "pending" and " waits for: " not in match["subject"]:
            return match["id"], match["subject"].split(" (owner: ")[0]
    return None


def _update(number: int, task_id: str, **fields: str) -> tuple[str, str, str]:
    return tool_call(number, "task_update", {"taskId": task_id, **fields})


def _first_line(request: Mapping[str, Any], call_id: str) -> str:
    return (call_result(request, call_id).splitlines() or ["(no result)"])[0]

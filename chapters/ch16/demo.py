"""`--demo`: a teammate in plan mode is refused a write, submits a plan, the lead approves it,
the write goes through; then the lead asks it to stop, and it does.

The workspace is a new temporary folder with `shop/cart.py`, a `CHANGELOG.md` and a
`.tutorial/settings.json` that allows `write_file(CHANGELOG.md)`: the allow rule does
not lift the plan gate, which comes before the policy. Only the model is scripted
(one script per history, chosen by its prompt); the team, the request log, the gate
and the mailboxes are the chapters' real code.

    lead 1   spawn_teammate alice, plan_mode_required
    lead 2   an answer while alice works: the lead waits (1st wait)
    alice    read_file CHANGELOG.md (reading is allowed); write_file: denied, plan not
             approved; submit_plan; its answer
    lead 3   reads the plan_approval_request and alice's answer: review_plan, approved
    lead 4   an answer: waits (2nd wait)
    alice    woken by the approval: write_file goes through (the allow rule); its answer
    lead 5   request_shutdown alice
    lead 6   an answer: waits (3rd wait)
    alice    woken by the request: shutdown_response approve; stops at its next boundary
    lead 7   reads teammate_terminated, answers: nobody works, the run ends

Each of alice's turns waits for the lead's wait the schedule names (chapter 15's
`DemoGate`), so what the two print comes in one order and the golden files hold
every byte; a reader's run has no gate.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from itertools import count
from pathlib import Path
from typing import Any

from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch07.scripted_stream import AgentStreams, call_result, calls_stream, said, tool_call
from chapters.ch15.demo import CART, CART_TEXT, DemoGate, write_files
from shared.scripted import scripted_text

DEMO_MODEL = "scripted-demo"
CHANGELOG = "CHANGELOG.md"
CHANGELOG_TEXT = "# Changes\n\n- 1.0: the cart adds prices.\n"
NEW_LINE = "- 1.1: the cart takes a discount in percent."
DEMO_SETTINGS = {"permissions": {"allow": [f"write_file({CHANGELOG})"]}}
DEMO_SCHEDULE = {1: (1, 2, 3)}  # alice: her start, then each wake, at the lead's Nth wait
DEMO_PROMPT = (
    "Have a teammate in plan mode add a line about the cart's discount to CHANGELOG.md; "
    "review its plan, and when it is done, ask it to shut down."
)
ALICE_PROMPT = (
    f"Add the line '{NEW_LINE}' to {CHANGELOG}, after the last line. You are in plan mode."
)
PLAN = f"1. Read {CHANGELOG}.\n2. Write it again with the line '{NEW_LINE}' added at the end."
_REQUEST = re.compile(r"request_id (?P<id>[0-9a-f]{8})")
_PLAN_REQUEST = re.compile(r"plan_approval_request (?P<id>[0-9a-f]{8}) from alice")
_SHUTDOWN = re.compile(r"shutdown_request (?P<id>[0-9a-f]{8}) from lead")


def demo_ids() -> Callable[[], str]:
    """The demo's request ids: eight hexadecimal digits, the same in every run."""
    numbers: Iterator[int] = count(1)
    return lambda: hashlib.sha256(f"chapter 16 demo request {next(numbers)}".encode()).hexdigest()[
        :8
    ]


def demo_gate() -> DemoGate:
    return DemoGate(DEMO_SCHEDULE)


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch16-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    settings = json.dumps(DEMO_SETTINGS, indent=2) + "\n"
    files = {CART: CART_TEXT, CHANGELOG: CHANGELOG_TEXT, PROJECT_SETTINGS.as_posix(): settings}
    write_files(folder, files)


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The lead's script and alice's, each chosen by its prompt."""
    return AgentStreams(
        {
            DEMO_PROMPT: [
                _spawn,
                _wait_for_plan,
                _review,
                _wait_for_work,
                _stop,
                _wait_for_stop,
                _report,
            ],
            ALICE_PROMPT: [
                _read,
                _try_to_write,
                _submit,
                _wait_for_answer,
                _write,
                _done,
                _leave,
                _gone,
            ],
        },
        name=DEMO_MODEL,
        stream=stream,
    )


def _last_user(request: Mapping[str, Any]) -> str:
    for message in reversed(request["messages"]):
        if message["role"] == "user":
            return str(message.get("content") or "")
    return ""


# --- the lead ----------------------------------------------------------------------------------


def _spawn(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    arguments = {"name": "alice", "prompt": ALICE_PROMPT, "plan_mode_required": True}
    text = scripted_text("A change to a file: alice plans first, and I review the plan.")
    return calls_stream(tool_call(1, "spawn_teammate", arguments), text=text)


def _wait_for_plan(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return said("alice is in plan mode; I wait for her plan.")


def _review(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = _PLAN_REQUEST.search(_last_user(request))
    if found is None:
        return said("No plan came from alice.")
    arguments = {"request_id": found["id"], "approve": True, "feedback": "Keep the list's form."}
    text = scripted_text(f"alice's plan {found['id']} touches only {CHANGELOG}: approved.")
    return calls_stream(tool_call(2, "review_plan", arguments), text=text)


def _wait_for_work(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return said(f"Approved; alice writes {CHANGELOG} now.")


def _stop(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    arguments = {"teammate": "alice", "reason": "The line is in; nothing else to do."}
    text = scripted_text("alice is done: I ask her to shut down.")
    return calls_stream(tool_call(3, "request_shutdown", arguments), text=text)


def _wait_for_stop(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    asked = _REQUEST.search(call_result(request, "call_3"))
    return said(f"Asked alice to stop ({asked['id'] if asked else 'no request'}).")


def _report(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    ended = "teammate_terminated: alice" in _last_user(request)
    return said(
        f"alice planned, was approved, added the line to {CHANGELOG}"
        + (", and stopped when asked." if ended else "; she has not stopped.")
    )


# --- alice -------------------------------------------------------------------------------------


def _read(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text(f"I read {CHANGELOG} first.")
    return calls_stream(tool_call(5, "read_file", {"path": CHANGELOG}), text=text)


def _try_to_write(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    arguments = {"path": CHANGELOG, "content": CHANGELOG_TEXT + NEW_LINE + "\n"}
    text = scripted_text(f"I add the line to {CHANGELOG}.")
    return calls_stream(tool_call(1, "write_file", arguments), text=text)


def _submit(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("Refused: plan first. I submit my plan.")
    return calls_stream(tool_call(2, "submit_plan", {"plan": PLAN}), text=text)


def _wait_for_answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    sent = _REQUEST.search(call_result(request, "call_2"))
    return said(f"My plan {sent['id'] if sent else '?'} waits for the lead's review.")


def _write(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    arguments = {"path": CHANGELOG, "content": CHANGELOG_TEXT + NEW_LINE + "\n"}
    text = scripted_text("The plan is approved: I write the line.")
    return calls_stream(tool_call(3, "write_file", arguments), text=text)


def _done(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return said(f"{CHANGELOG}: {call_result(request, 'call_3').splitlines()[0]}")


def _leave(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = _SHUTDOWN.search(_last_user(request))
    if found is None:
        return said("No shutdown request came.")
    arguments = {"request_id": found["id"], "approve": True}
    text = scripted_text("My work is done: I agree to stop.")
    return calls_stream(tool_call(4, "shutdown_response", arguments), text=text)


def _gone(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return said("I should have stopped before this request.")

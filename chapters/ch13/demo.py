"""`--demo`: a slow test run in the background, a file read while it runs, and the answer
that waits for it.

The workspace is a new temporary folder holding chapter 6's small shop, a slow test
suite (`slow_tests.py`: four real checks of the shop, one every 0.35 s, then `4 passed`)
and settings that allow running it. Only the model is scripted; the job, its process
group, its log, the inbox, the wait and the notification are the chapter's real code:

    reply 1   shell {"command": "python3 slow_tests.py", "run_in_background": true}:
              the call answers at once, `started background job bg1 (...)`
    reply 2   read_file shop/cart.py, while the tests run
    reply 3   the answer to the question, and "the tests are still running": the model
              stops. A job may still post, so the run does not end: it waits
              (DeliverEvents.on_stop, at most --background-wait seconds)
              ... the tests end; the job's end posts its task notification; the wait
              returns and the notification goes to the model as a user message
    reply 4   job_output bg1: what the tests printed
    reply 5   the answer, from the notification (status, exit code) and the output

Deterministic, so that the golden files (tests/golden/ch13/) hold every run: the job must
end after the run has started to wait, never earlier. Were it to end during reply 2 or 3,
the notification would go with request 3 (before_request) or be found pending by
on_stop, and the requests or the console would differ. A fixed duration cannot promise
that on a busy machine; the demo holds the last test instead, and lets it go at the
moment the run starts waiting. The suite's last step waits for the file
`.tests-may-finish` (at most `GATE_SECONDS`; run by hand, nobody writes it and the suite
ends anyway). When the model answers (reply 3, on the run's own thread) the scripted
model sets a profile hook on that thread (`sys.setprofile`, event-driven: no polling in
this process) that writes the file when the thread calls `Inbox.wait`, and removes
itself. So the order is: answer, on_stop finds nothing pending, the spinner line, then
the file, then the suite's last line, its end, the notification. Where the run's thread
never gets there (it failed first), reply 4 removes the hook; the file is opened by the
reply too, so nothing waits for `GATE_SECONDS`. The model learns the workspace from the
system prompt's Environment section (chapter 10), as a real model would.

The command is `python3 slow_tests.py` on Linux and macOS and `python slow_tests.py` on
Windows (the name a Python installation puts on PATH there), like chapter 1's demo's
`echo`; the golden files are recorded on Linux.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType
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
from chapters.ch13.inbox import Inbox
from shared.process import IS_WINDOWS
from shared.scripted import scripted_text

DEMO_MODEL = "scripted-demo"
SUITE = "slow_tests.py"
TEST_COMMAND = f"python {SUITE}" if IS_WINDOWS else f"python3 {SUITE}"
DEMO_PROMPT = (
    f"Run the tests in the background ({SUITE} is slow) and, while they run, tell me which "
    "discount codes shop/cart.py accepts. Then tell me how the tests went."
)
DEMO_SETTINGS = {"permissions": {"allow": ["shell(python3:*)", "shell(python:*)"]}}
CART = "shop/cart.py"
GATE = ".tests-may-finish"  # the demo writes it when the run starts waiting for the job
GATE_SECONDS = 20  # the most the suite's last step waits for it
SUITE_TEXT = f'''\
"""The shop's tests, slowly: four checks, one every 0.35 s, as a long suite runs.

The last step waits for the file {GATE} (the demo of chapter 13 writes it at the
moment its run starts waiting for this job: chapters/ch13/demo.py), at most
{GATE_SECONDS} s: run by hand, nobody writes it, and the suite ends after that.
"""

import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the workspace

from decimal import Decimal
from pathlib import Path

from shop.cart import total
from shop.pricing import apply_discount, with_tax

GATE = Path(__file__).with_name("{GATE}")


def test_ten_percent_off():
    assert apply_discount(Decimal("20.00"), 10) == Decimal("18.00")


def test_more_than_everything_is_refused():
    try:
        apply_discount(Decimal("20.00"), 150)
    except ValueError:
        return
    raise AssertionError("150 percent was accepted")


def test_welcome10_takes_10_percent():
    assert total([("tea", Decimal("20.00"), 2)], "WELCOME10") == Decimal("36.00")


def test_tax_is_added_in_cents():
    assert with_tax(Decimal("10.00")) == Decimal("10.80")


TESTS = [
    test_ten_percent_off,
    test_more_than_everything_is_refused,
    test_welcome10_takes_10_percent,
    test_tax_is_added_in_cents,
]

print(f"collected {{len(TESTS)}} items", flush=True)
failed = 0
for test in TESTS:
    time.sleep(0.35)
    try:
        test()
    except Exception as error:
        failed += 1
        print(f"{SUITE}::{{test.__name__}} FAILED: {{error!r}}", flush=True)
    else:
        print(f"{SUITE}::{{test.__name__}} PASSED", flush=True)
deadline = time.monotonic() + {GATE_SECONDS}
while not GATE.exists() and time.monotonic() < deadline:
    time.sleep(0.01)
passed = len(TESTS) - failed
print(f"{{passed}} passed" + (f", {{failed}} failed" if failed else ""), flush=True)
sys.exit(1 if failed else 0)
'''
_CODES = re.compile(r'"(?P<code>[A-Z0-9]+)": (?P<percent>\d+)')
_FIELD = re.compile(r"<(?P<tag>[a-z-]+)>(?P<value>[^<]*)</(?P=tag)>")
NOTIFICATION = "<task-notification>"


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch13-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    """Chapter 6's shop, the slow suite, and settings that allow running it."""
    write_shop(folder)
    (folder / SUITE).write_text(SUITE_TEXT, encoding="utf-8")
    settings = folder / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(DEMO_SETTINGS, indent=2) + "\n", encoding="utf-8")


def demo_model(*, stream: bool = True, folder: Path | None = None) -> AgentStreams:
    """The five replies above; each made from the request it answers. `folder`: the demo's
    workspace, where the gate file goes (None: the gate is never opened early)."""
    hold = GateHolder(folder)
    replies: list[AgentStep] = [
        _start_the_tests,
        _read_the_cart,
        lambda request: _answer_while_waiting(request, hold),
        lambda request: _read_the_output(request, hold),
        _report,
    ]
    return AgentStreams({DEMO_PROMPT: replies}, name=DEMO_MODEL, stream=stream)


# --- the gate: the suite ends when the run waits -----------------------------------------------


class GateHolder:
    """Writes the gate file when the thread it watches calls `Inbox.wait` (see above)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.gate: Path | None = None
        self._previous: Callable[..., Any] | None = None
        self._watching = False

    def open_when_waiting(self, gate: Path) -> None:
        """From now on, on this thread: the first call of `Inbox.wait` writes `gate`."""
        self.gate = gate
        self._previous = sys.getprofile()
        self._watching = True
        sys.setprofile(self._profile)

    def _profile(self, frame: FrameType, event: str, arg: object) -> None:
        if self._previous is not None:
            self._previous(frame, event, arg)
        if event == "call" and frame.f_code is _WAIT:
            self.release()

    def release(self) -> None:
        """Open the gate now (once), and stop watching."""
        if self._watching:
            self._watching = False
            sys.setprofile(self._previous)
        if self.gate is not None:
            self.gate.touch()
            self.gate = None


_WAIT = Inbox.wait.__code__


# --- the replies -------------------------------------------------------------------------------


def _start_the_tests(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    start = {"command": TEST_COMMAND, "run_in_background": True}
    text = scripted_text("The tests are slow: I start them in the background.")
    return calls_stream(tool_call(1, "shell", start), text=text)


def _read_the_cart(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    started = call_result(request, "call_1")
    if not started.startswith("started background job"):
        return said(f"The tests did not start: {_first_line(started)}")
    text = scripted_text("While they run, I read the cart.")
    return calls_stream(tool_call(2, "read_file", {"path": CART}), text=text)


def _answer_while_waiting(request: Mapping[str, Any], hold: GateHolder) -> list[dict[str, Any]]:
    if hold.folder is not None:
        hold.open_when_waiting(hold.folder / GATE)
    return said(
        f"{_codes(call_result(request, 'call_2'))} The tests are still running in the "
        "background (bg1); I will tell you how they went when they end."
    )


def _read_the_output(request: Mapping[str, Any], hold: GateHolder) -> list[dict[str, Any]]:
    hold.release()  # already open, unless the run never waited
    ended = _notification(request)
    if ended is None:
        return said("I was sent back to work, but no background job has ended.")
    text = scripted_text(f"Job {ended['task-id']} has ended ({ended['status']}): its output.")
    return calls_stream(tool_call(3, "job_output", {"job_id": ended["task-id"]}), text=text)


def _report(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    ended = _notification(request) or {}
    printed = [line for line in call_result(request, "call_3").splitlines() if line.strip()]
    summary = next((line for line in reversed(printed) if " passed" in line), "no summary line")
    how = "passed" if ended.get("status") == "completed" else "did not pass"
    return said(
        f"The tests {how}: job {ended.get('task-id', '?')} {ended.get('status', 'ended')} "
        f"with exit code {ended.get('exit-code', '?')}, and the suite said `{summary}`. "
        f"{_codes(call_result(request, 'call_2'))}"
    )


# --- helpers -----------------------------------------------------------------------------------


def _codes(cart: str) -> str:
    """What the model read in the cart: each code of CODES and its percent."""
    line = next((line for line in cart.splitlines() if "CODES = {" in line), "")
    found = [f"{m['code']} ({m['percent']} percent off)" for m in _CODES.finditer(line)]
    if not found:
        return f"I found no CODES in {CART}."
    return f"{CART} accepts {len(found)} discount codes: {' and '.join(found)}."


def _notification(request: Mapping[str, Any]) -> dict[str, str] | None:
    """The fields of the last task notification the request carries, if any."""
    texts = [str(m.get("content")) for m in request["messages"] if m.get("role") == "user"]
    last = next((text for text in reversed(texts) if NOTIFICATION in text), None)
    return None if last is None else {m["tag"]: m["value"] for m in _FIELD.finditer(last)}


def _first_line(text: str) -> str:
    return (text.splitlines() or ["(no result)"])[0]

"""`--demo`: the lead starts two teammates, one finds the tests and one reads the code; both
report, and the lead answers from both.

The workspace is a new temporary folder with a small project: `shop/cart.py` and
`tests/test_cart.py`. Only the model is scripted (one script per history,
chosen by its prompt, chapters/ch07/scripted_stream.py): the team, the threads,
the mailboxes and the inbox are the chapter's real code.

    lead 1    spawn_teammate alice (explore: find the tests), spawn_teammate bob
              (explore: read the code)
    lead 2    an answer while both work: the end rule holds the run, the lead waits
    alice 1-2 glob the tests, answer: the answer goes to the lead as a message
    lead 3    alice's message arrives (chapter 13's inbox); bob still works: it waits again
    bob 1-2   read shop/cart.py, answer
    lead 4    the answer, from both messages; nobody works: the run ends, and both
              teammates, idle, are stopped

Teammates run beside the lead, so what they print could come in any order. The
demo fixes one, so its golden files hold every byte: a teammate starts its
first request only once the lead waits for the Nth time (alice the first, bob
the second: `DemoGate`, given to the team as its `before_turn`, and counted by
the lead's wait). A reader's run has no gate: its teammates start at once.
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chapters.ch07.scripted_stream import AgentStreams, call_result, calls_stream, said, tool_call
from chapters.ch15.team import Seat, Team
from shared.agent import Run
from shared.scripted import scripted_text
from shared.slots import Key

DEMO_MODEL = "scripted-demo"
GATE_BOUND = 30.0  # seconds a teammate waits for its turn; then it starts anyway
DEMO_SCHEDULE = {1: (1,), 2: (2,)}  # alice starts at the lead's first wait, bob at its second
STOP_CHECK = 0.05  # seconds between two looks, while it waits, at whether the team stopped
CART = "shop/cart.py"
TESTS = "tests/test_cart.py"
CART_TEXT = '''"""A shopping cart: prices in cents, so that sums are exact."""


def total(prices: list[int], discount_percent: int = 0) -> int:
    """The sum of the prices, less the discount, rounded down to a cent."""
    subtotal = sum(prices)
    return subtotal - subtotal * discount_percent // 100
'''
TESTS_TEXT = """from shop.cart import total


def test_total_adds_prices() -> None:
    assert total([250, 100]) == 350


def test_total_takes_the_discount() -> None:
    assert total([1000], discount_percent=15) == 850
"""
DEMO_PROMPT = (
    "How is this project tested, and what does its code do? Have one teammate find the tests "
    "and another read the code, then tell me both."
)
ALICE_PROMPT = (
    "Find the test files of this project. Report which files hold tests and how many test "
    "functions each has."
)
BOB_PROMPT = "Read the code in shop/ (not the tests). Report what each function does, briefly."
_GLOB_LINE = re.compile(r"^(?P<path>\S+\.py)$", re.M)
_DEF = re.compile(r"^\s*\d+\tdef (?P<name>\w+)\((?P<args>[^)]*)\)", re.M)
_DOC = re.compile(r'^\s*\d+\t\s*"""(?P<doc>.+?)"""', re.M)
_TAG = re.compile(
    r'<teammate-message teammate_id="(?P<who>[a-z0-9-]+)"[^>]*>(?P<text>.*?)</teammate-message>',
    re.S,
)


class DemoGate:
    """How many times the lead has started to wait for its team; a teammate's turns wait for
    theirs. `schedule`: for the Nth teammate to join, the wait each of its turns waits for
    (its start first, then each wake by mail); a turn not in it waits for nothing."""

    def __init__(self, schedule: Mapping[int, Sequence[int]] | None = None) -> None:
        self.schedule = dict(schedule or DEMO_SCHEDULE)
        self._changed = threading.Condition()
        self.waits = 0
        self.team: Team | None = None  # the run's, once made: `settle` watches it
        self._held: set[str] = set()  # teammates waiting here for their turn

    def settle(self) -> None:
        """As the lead's wait ends: until no teammate works, so that a teammate's turn (one
        whose message woke the lead half-way, say) prints all it prints before the lead goes
        on. Bounded, and over once the team stops."""
        team = self.team
        if team is None:
            return
        deadline = time.monotonic() + GATE_BOUND
        while self._busy(team) and not team.stopping.is_set():
            seen, left = team.generation(), deadline - time.monotonic()
            if left <= 0:
                return
            team.wait_for_change(seen, min(left, STOP_CHECK))

    def lead_waits(self) -> None:
        with self._changed:
            self.waits += 1
            self._changed.notify_all()

    def _busy(self, team: Team) -> bool:
        """Whether a teammate works that is not waiting here for its turn."""
        with self._changed:
            held = set(self._held)
        return bool(set(team.working()) - held)

    def before_turn(self, seat: Seat, turn: int, stopping: threading.Event) -> None:
        """Turn `turn` of the Nth teammate goes on once the lead waits for the time the
        schedule says, or once the team stops (a run that ended before the lead waited)."""
        turns = self.schedule.get(seat.number, ())
        if turn > len(turns):
            return
        deadline = time.monotonic() + GATE_BOUND
        with self._changed:
            self._held.add(seat.name)
            try:
                while self.waits < turns[turn - 1] and not stopping.is_set():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    self._changed.wait(min(left, STOP_CHECK))
            finally:
                self._held.discard(seat.name)


DEMO_GATE: Key[DemoGate] = Key("the demo's order of teammates")


def counted_waiting(gate: DemoGate) -> Callable[[Run, float], Any]:
    """The lead's wait, as the console shows it, counted by the gate once it is shown."""
    from chapters.ch15.team import waiting_for_team

    @contextmanager
    def waiting(run: Run, seconds: float) -> Iterator[None]:
        with waiting_for_team(run, seconds):
            gate.lead_waits()
            yield
            gate.settle()

    return waiting


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch15-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    write_files(folder, {CART: CART_TEXT, TESTS: TESTS_TEXT, "shop/__init__.py": ""})


def write_files(folder: Path, files: Mapping[str, str]) -> None:
    """Each file of `files` (a relative path, its text) in `folder`, its folders made."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The demo's scripts: the lead's, alice's and bob's, each chosen by its prompt."""
    return AgentStreams(
        {
            DEMO_PROMPT: [_spawn_both, _wait_for_both, _wait_for_bob, _report],
            ALICE_PROMPT: [_find_tests, _report_tests],
            BOB_PROMPT: [_read_code, _report_code],
        },
        name=DEMO_MODEL,
        stream=stream,
    )


# --- the lead ----------------------------------------------------------------------------------


def _spawn_both(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("Two questions, two teammates: alice finds the tests, bob reads the code.")
    alice = {"name": "alice", "prompt": ALICE_PROMPT, "agent": "explore"}
    bob = {"name": "bob", "prompt": BOB_PROMPT, "agent": "explore"}
    return calls_stream(
        tool_call(1, "spawn_teammate", alice), tool_call(2, "spawn_teammate", bob), text=text
    )


def _wait_for_both(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    started = [call_result(request, f"call_{n}").startswith("spawned") for n in (1, 2)]
    if not all(started):
        return said(f"A teammate did not start: {call_result(request, 'call_1')[:200]}")
    return said("Both teammates are at work; I will answer when both have reported.")


def _wait_for_bob(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    heard = _messages(request)
    return said(f"Heard from {', '.join(heard) or 'nobody'}; still waiting for bob.")


def _report(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    heard = _messages(request)
    lines = [f"- {who}: {text}" for who, text in heard.items()]
    return said("Both teammates reported:\n" + "\n".join(lines))


def _messages(request: Mapping[str, Any]) -> dict[str, str]:
    """Every teammate's message the lead's history holds, by sender (the last of each)."""
    heard: dict[str, str] = {}
    for message in request["messages"]:
        if message["role"] in ("user", "tool"):
            for found in _TAG.finditer(str(message.get("content") or "")):
                text = found["text"].replace("[scripted] ", "").strip()
                heard[found["who"]] = " ".join(text.split())
    return heard


# --- the teammates -----------------------------------------------------------------------------


def _find_tests(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("I look for test files.")
    return calls_stream(tool_call(1, "glob", {"pattern": "**/test_*.py"}), text=text)


def _report_tests(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = _GLOB_LINE.findall(call_result(request, "call_1"))
    if not found:
        return said(f"No test files found: {call_result(request, 'call_1')[:200]}")
    return said(f"{', '.join(found)}: the tests of the project, run by pytest.")


def _read_code(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text(f"I read {CART}.")
    return calls_stream(tool_call(1, "read_file", {"path": CART}), text=text)


def _report_code(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    result = call_result(request, "call_1")
    functions = _DEF.findall(result)
    docs = _DOC.findall(result)
    if not functions:
        return said(f"I could not read {CART}: {result[:200]}")
    name, args = functions[0]
    doc = docs[-1] if docs else "(no docstring)"
    return said(f"{CART} has one function, {name}({args.strip()}): {doc}")

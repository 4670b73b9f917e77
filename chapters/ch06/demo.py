"""`--demo`: the parent hands "where is it defined?" to explore, and answers from its report.

The workspace is a new temporary folder holding a small generated project. The
scripted model serves two agents, and knows which one is asking by the system
prompt a request starts with: the parent calls `task` with agent `explore`;
explore greps, reads one file and reports; the parent answers from the report.
Only the model is scripted: the tools, the policy, the budget and the child's
fresh history are the real ones, and `--trace` shows the two histories apart.

`demo_model(delegate=False)` is the same task done by one agent without `task`
(the grep and the read in its own history), for the size comparison in the
chapter text and in scripts/bench_subagents.py.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chapters.ch06.prompt import EXPLORE_PROMPT, SYSTEM_PROMPT
from shared.scripted import (
    SCRIPTED_MARK,
    ScriptExhaustedError,
    Step,
    last_tool_result,
    response,
    scripted_text,
    tool_call,
)

DEMO_PROMPT = "Where is apply_discount defined, and what does it do with a percent over 100?"
DEMO_MODEL = "scripted-demo"
TASK = {
    "description": "Find where apply_discount is defined",
    "prompt": (
        "Find where the function apply_discount is defined in this project. Report the file "
        "and line, its signature, and what it does when percent is over 100."
    ),
    "agent": "explore",
}
PRICING = '''\
"""Prices: rounding, tax and discounts, in Decimal so that cents add up."""

from decimal import ROUND_HALF_UP, Decimal

TAX_RATE = Decimal("0.08")


def to_cents(amount: Decimal) -> Decimal:
    """Round to whole cents, half up, as the till does."""
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def with_tax(amount: Decimal) -> Decimal:
    """The amount with sales tax added."""
    return to_cents(amount * (1 + TAX_RATE))


def apply_discount(price: Decimal, percent: int) -> Decimal:
    """The price after a discount of `percent`, 0 to 100."""
    if not 0 <= percent <= 100:
        raise ValueError(f"a discount must be 0 to 100 percent, not {percent}")
    return to_cents(price * (100 - percent) / 100)
'''
DEMO_FILES = {
    "README.md": "# shop\n\nA tiny shop: a cart, prices and a checkout.\n",
    "shop/__init__.py": '"""A tiny shop."""\n',
    "shop/pricing.py": PRICING,
    "shop/cart.py": '''\
"""A cart: lines of (name, price, quantity), and a discount code."""

from decimal import Decimal

from shop.pricing import apply_discount

CODES = {"WELCOME10": 10, "STAFF": 30}


def total(lines: list[tuple[str, Decimal, int]], code: str | None = None) -> Decimal:
    subtotal = sum((price * quantity for _, price, quantity in lines), Decimal(0))
    return apply_discount(subtotal, CODES.get(code or "", 0))
''',
    "shop/checkout.py": '''\
"""Checkout: the cart's total with tax."""

from shop.cart import total
from shop.pricing import with_tax


def amount_due(lines, code=None):
    return with_tax(total(lines, code))
''',
    "tests/test_pricing.py": """\
from decimal import Decimal

import pytest

from shop.pricing import apply_discount


def test_ten_percent_off() -> None:
    assert apply_discount(Decimal("20.00"), 10) == Decimal("18.00")


def test_more_than_everything_is_refused() -> None:
    with pytest.raises(ValueError):
        apply_discount(Decimal("20.00"), 150)
""",
}


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch06-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    for name, text in DEMO_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    """The number of the first line of `text` that contains `needle`."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def report() -> str:
    """What explore finds, with the line numbers of the files the demo writes."""
    defined = line_of(PRICING, "def apply_discount")
    raised = line_of(PRICING, "raise ValueError")
    used = line_of(DEMO_FILES["shop/cart.py"], "return apply_discount")
    return (
        f"apply_discount is defined in shop/pricing.py, line {defined}: "
        "`apply_discount(price: Decimal, percent: int) -> Decimal`. A percent over 100 "
        f"(or below 0) raises ValueError (line {raised}); otherwise it returns the price "
        f"minus that percent, rounded to cents. It is called from shop/cart.py, line {used}."
    )


def demo_model(*, delegate: bool = True) -> AgentScripts:
    """The parent's script and explore's; `delegate=False`: one agent does it all."""

    def reply(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
        return response(scripted_text(text) if text else None, calls, model=DEMO_MODEL)

    search: list[Step] = [
        reply(tool_call("call_2", "grep", json.dumps({"pattern": "apply_discount"}))),
        reply(tool_call("call_3", "read_file", json.dumps({"path": "shop/pricing.py"}))),
    ]
    explore = [*search, reply(text=report())]
    if not delegate:
        return AgentScripts({SYSTEM_PROMPT: [*search, reply(text=report())]})
    parent: list[Step] = [
        reply(
            tool_call("call_1", "task", json.dumps(TASK)),
            text="A side question: explore can search without filling my context.",
        ),
        _answer_from_report,
    ]
    return AgentScripts({SYSTEM_PROMPT: parent, EXPLORE_PROMPT: explore})


def _answer_from_report(request: Mapping[str, Any]) -> dict[str, Any]:
    """The parent's answer quotes the first line of the task's one tool message."""
    first = last_tool_result(request).splitlines()[0].removeprefix(SCRIPTED_MARK).strip()
    failed = first.startswith(("denied:", "subagent_failed:", "invalid_arguments:"))
    said = "No report" if failed else "From explore's report"
    return response(scripted_text(f"{said}: {first}"), model=DEMO_MODEL)


class AgentScripts:
    """A scripted model that serves several agents, one script each.

    A request is answered from the script of the agent whose system prompt it
    starts with, so a parent and the children it starts can take turns in any
    order. Like `ScriptedModel`, it keeps a copy of every request and says that
    it is scripted.
    """

    def __init__(self, scripts: Mapping[str, Sequence[Step]], *, name: str = DEMO_MODEL) -> None:
        self.scripts = {prompt: list(steps) for prompt, steps in scripts.items()}
        self.used = dict.fromkeys(self.scripts, 0)
        self.name = name
        self.label = f"{name} (scripted, no network)"
        self.requests: list[dict[str, Any]] = []

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.requests.append(copy.deepcopy(dict(request)))
        system = request["messages"][0]["content"]
        if system not in self.scripts:
            raise ScriptExhaustedError(f"no script for the agent whose prompt is {system[:60]!r}…")
        steps, done = self.scripts[system], self.used[system]
        if done == len(steps):
            raise ScriptExhaustedError(f"the script for {system[:40]!r}… has {done} replies")
        self.used[system] += 1
        step = steps[done]
        return step(request) if callable(step) else step

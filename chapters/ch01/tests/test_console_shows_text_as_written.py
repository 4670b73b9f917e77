"""On a terminal, the panels show a tool's name and an agent's name as written.

rich reads a plain string as markup: a title of `x[/]` raised MarkupError, and the
run ended with a traceback instead of a result the model reads. The name of a tool
comes from the model, an agent's from a file someone wrote: both are shown as text.
"""

from __future__ import annotations

import io
from pathlib import Path

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner, ScriptedApprover, printed
from chapters.testing import agent_of
from shared.console import Console
from shared.scripted import ScriptedModel, response, tool_call

LOOKS_LIKE_MARKUP = "x[/]"


def fancy_console() -> Console:
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=True)


def test_a_tool_name_that_looks_like_markup_gets_a_result_not_a_traceback() -> None:
    console = fancy_console()
    steps = [response(None, [tool_call("c1", LOOKS_LIKE_MARKUP, "{}")]), response("ok")]
    agent = agent_of(
        1,
        model=ScriptedModel(steps),
        console=console,
        approver=ScriptedApprover([]),
        cwd=Path.cwd(),
        runner=FakeRunner(),
    )
    assert run_agent("go", agent) == "ok"
    assert LOOKS_LIKE_MARKUP in printed(console)


def test_an_agent_name_that_looks_like_markup_is_shown_in_the_approval_panel() -> None:
    console = fancy_console()
    console.approval_request("shell", "asked", {"command": "ls"}, agent=LOOKS_LIKE_MARKUP)
    assert LOOKS_LIKE_MARKUP in printed(console)

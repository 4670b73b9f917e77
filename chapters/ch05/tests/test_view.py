"""The plan as the human sees it, in both modes.

Fancy (a terminal): `plan_view` is drawn under the spinner while the model thinks,
through `Console.keep_in_view`. The tests ask for fancy output on a
StringIO (rich is forced to write terminal codes there) and read what was drawn.
Plain (no terminal): the spinner is one line and the plan is only what the
todo_write result printed; no terminal codes at all.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console as RichConsole

from chapters.ch01.tests.harness import printed
from chapters.ch05.tests.support import FRESH, HALFWAY, make_agent, silent, todo, turn
from chapters.ch05.todo import TodoItem, TodoPlan
from chapters.ch05.view import plan_view
from shared.console import Console
from shared.scripted import ScriptedModel, response

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HEADER = "计划 plan:"


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich reads its width from COLUMNS: a fixed one keeps every drawn line on one line."""
    monkeypatch.setenv("COLUMNS", "120")


def plan_of(*items: Mapping[str, str]) -> TodoPlan:
    plan = TodoPlan()
    plan.replace([TodoItem.model_validate(i) for i in items])
    return plan


def fancy_console() -> Console:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=True)
    console.timer = lambda: 0.0  # the spinner's seconds waited: always 0s here
    return console


def visible(text: str) -> str:
    return ANSI.sub("", text)


def wait_once(console: Console, what: str = "waiting for the model") -> str:
    """Enter and leave one wait; what it drew, without terminal codes."""
    before = len(printed(console))
    with console.waiting(what):
        pass
    return printed(console)[before:]


# --- plan_view on its own ------------------------------------------------------------------


def test_plan_view_is_none_for_an_empty_plan() -> None:
    assert plan_view(TodoPlan()) is None


def test_plan_view_draws_a_header_and_one_line_per_item() -> None:
    view = plan_view(plan_of(*HALFWAY))
    assert view is not None
    screen = RichConsole(file=io.StringIO(), width=100, color_system=None)
    with screen.capture() as captured:
        screen.print(view)
    assert captured.get() == (
        "计划 plan: 1 of 3 completed\n"
        "  [x] 1. List the files\n"
        "  [>] 2. Read each file\n"
        "  [ ] 3. Write the summary\n"
    )


def test_plan_view_colours_each_line_by_its_status_and_only_the_header_cyan() -> None:
    view = plan_of(*HALFWAY)
    screen = RichConsole(
        file=io.StringIO(), width=100, color_system="standard", force_terminal=True
    )
    with screen.capture() as captured:
        screen.print(plan_view(view))
    lines = captured.get().splitlines()
    assert lines[0].startswith("\x1b[36m")  # cyan header
    assert "\x1b[2;32m" in lines[1]  # completed: dim green
    assert "\x1b[1;33m" in lines[2]  # in progress: bold yellow
    assert lines[3] == "  [ ] 3. Write the summary"  # pending: no style at all


def test_plan_view_shows_rich_markup_in_the_content_literally() -> None:
    view = plan_view(
        plan_of({"id": "1", "content": "[bold]x[/bold] and [red]y", "status": "pending"})
    )
    screen = RichConsole(file=io.StringIO(), width=100, color_system=None)
    with screen.capture() as captured:
        screen.print(view)
    assert "  [ ] 1. [bold]x[/bold] and [red]y\n" in captured.get()


# --- fancy: the plan under the spinner -----------------------------------------------------


def test_fancy_waiting_draws_the_plan_under_the_spinner() -> None:
    console = fancy_console()
    plan = plan_of(
        {"id": "1", "content": "Read [bold]x[/bold]", "status": "in_progress"},
        {"id": "2", "content": "Write it", "status": "pending"},
    )
    console.keep_in_view(lambda: plan_view(plan))
    drawn = wait_once(console, "waiting for m (turn 2)")
    assert ANSI.search(printed(console))  # terminal codes: this is the fancy mode
    shown = visible(drawn)
    assert "waiting for m (turn 2)" in shown
    assert (
        "waiting for m (turn 2) · 0s\n计划 plan: 0 of 2 completed\n  [>] 1. Read [bold]x[/bold]\n"
        in shown
    )
    assert "  [ ] 2. Write it" in shown


def test_fancy_waiting_with_an_empty_plan_draws_only_the_spinner() -> None:
    console = fancy_console()
    plan = TodoPlan()
    console.keep_in_view(lambda: plan_view(plan))
    shown = visible(wait_once(console, "waiting for m (turn 1)"))
    assert "waiting for m (turn 1)" in shown
    assert HEADER not in shown
    assert "[ ]" not in shown


def test_each_wait_draws_the_plan_of_that_moment() -> None:
    console = fancy_console()
    plan = plan_of(*FRESH)
    console.keep_in_view(lambda: plan_view(plan))
    assert f"{HEADER} 0 of 3 completed" in visible(wait_once(console))
    plan.replace([TodoItem.model_validate(i) for i in HALFWAY])
    later = visible(wait_once(console))
    assert f"{HEADER} 1 of 3 completed" in later
    assert "0 of 3" not in later
    plan.replace([])
    assert HEADER not in visible(wait_once(console))


def test_plain_waiting_ignores_what_is_below_the_spinner() -> None:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    console.keep_in_view(lambda: plan_view(plan_of(*FRESH)))
    drawn = wait_once(console, "waiting for m (turn 3)")
    assert drawn == "… waiting for m (turn 3)\n"


# --- both modes through the real loop ------------------------------------------------------


class Watching(ScriptedModel):
    """Records what the console had drawn at the moment each request was being answered."""

    def __init__(self, console: Console, steps: list[dict[str, Any]]) -> None:
        super().__init__(steps)
        self.console = console
        self.screens: list[str] = []

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.screens.append(printed(self.console))
        return super().complete(request)


def test_in_a_terminal_the_loop_shows_the_current_plan_under_each_spinner(
    tmp_path: Path,
) -> None:
    console = fancy_console()
    agent = make_agent(tmp_path, console=console)  # registers plan_view, as the CLI does
    model = Watching(
        console,
        [turn(todo("p1", *FRESH)), *silent(1), turn(todo("p2", *HALFWAY)), response("done")],
    )
    agent.model = model
    answer = agent.run()
    assert answer.startswith("done\n\n[harness] The model stopped with 2 of 3")
    screens = [visible(s) for s in model.screens]
    # While request 1 waits there is no plan yet; each later wait shows the latest one.
    waits = [screens[0], *(later[len(earlier) :] for earlier, later in pairwise(screens))]
    assert HEADER not in waits[0]
    assert f"{HEADER} 0 of 3 completed\n  [>] 1. List the files" in waits[1]
    assert f"{HEADER} 0 of 3 completed" in waits[2]
    halfway = f"{HEADER} 1 of 3 completed\n  [x] 1. List the files\n  [>] 2. Read each file"
    assert halfway in waits[3]


@pytest.mark.parametrize("fancy", [False, True], ids=["plain", "fancy"])
def test_the_todo_write_result_shows_the_plan_in_both_modes(tmp_path: Path, fancy: bool) -> None:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=fancy)
    agent = make_agent(tmp_path, console=console)
    agent.run(turn(todo("p1", *HALFWAY)), response("done"))
    text = printed(console)
    assert bool(ANSI.search(text)) is fancy
    lines = visible(text)
    for line in ("[x] 1. List the files", "[>] 2. Read each file", "[ ] 3. Write the summary"):
        assert line in lines
    assert "todo_write → ok" in lines
    assert (HEADER in lines) is fancy  # the view under the spinner is drawn only in a terminal

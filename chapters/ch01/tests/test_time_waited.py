"""On a terminal, a wait says how long it has lasted: the spinner while the model thinks
(`… (turn 2) · 12s`) and a spinner while an approved command runs (`运行中 running: make
· 3s`). Anywhere else (pipes, tests, the generated docs) the output is as it was: one line
for the wait, nothing for the run, no time that would differ between two runs.

The time comes from the console's `timer`, so a test moves it by hand: no sleeps.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner, ScriptedApprover, plain_console, printed
from chapters.testing import agent_of
from shared.console import Console, Ticking, waited
from shared.process import CommandOutcome
from shared.scripted import ScriptedModel, response, tool_call

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


@dataclass
class FakeTimer:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def fancy_console(timer: FakeTimer) -> Console:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=True)
    console.timer = timer
    return console


def shown(console: Console) -> str:
    """What a fancy console drew, without the terminal's control codes."""
    return CONTROL.sub("", printed(console))


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (0.9, "0s"), (12.7, "12s"), (59.99, "59s"), (65, "1m05s")]
)
def test_the_time_waited_is_whole_seconds_then_minutes(seconds: float, text: str) -> None:
    assert waited(seconds) == text


def test_the_spinner_text_counts_up_from_when_it_started() -> None:
    timer = FakeTimer()
    ticking = Ticking("thinking", timer)
    assert ticking.text() == "thinking · 0s"
    timer.now += 12.4
    assert ticking.text() == "thinking · 12s"
    drawn = io.StringIO()
    from rich.console import Console as RichConsole

    RichConsole(file=drawn, width=60).print(ticking)
    assert "thinking · 12s" in drawn.getvalue()


def test_on_a_terminal_the_model_spinner_shows_the_time_waited() -> None:
    timer = FakeTimer()
    console = fancy_console(timer)
    with console.waiting("等待模型 waiting for m (turn 1)"):
        timer.now += 7
    assert "等待模型 waiting for m (turn 1) · 7s" in shown(console)


def test_off_a_terminal_the_wait_is_one_line_without_a_time() -> None:
    console, timer = plain_console(), FakeTimer()
    console.timer = timer
    with console.waiting("等待模型 waiting for m (turn 1)"), console.running("make"):
        timer.now += 7
    assert printed(console) == "… 等待模型 waiting for m (turn 1)\n"


class SlowRunner(FakeRunner):
    """A command that takes three seconds on the fake timer."""

    def __init__(self, timer: FakeTimer) -> None:
        super().__init__()
        self.timer = timer

    def __call__(self, command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
        self.timer.now += 3
        return super().__call__(command, cwd=cwd, timeout=timeout)


def test_on_a_terminal_an_approved_command_shows_a_spinner_with_its_time() -> None:
    timer = FakeTimer()
    console = fancy_console(timer)
    steps = [response(None, [tool_call("c1", "shell", '{"command": "make"}')]), response("ok")]
    agent = agent_of(
        1,
        model=ScriptedModel(steps),
        console=console,
        approver=ScriptedApprover([True]),
        cwd=Path.cwd(),
        runner=SlowRunner(timer),
    )
    assert run_agent("build it", agent) == "ok"
    assert "运行中 running: make · 3s" in shown(console)


@pytest.mark.parametrize("command", ["sed 's/[/]/x/' a", "echo [bold]loud[/bold]"])
def test_a_command_that_looks_like_rich_markup_is_shown_as_written(command: str) -> None:
    """The spinner shows the command's text, never reads it as markup: `[/]` made rich raise
    (the run ended with a traceback) and `[bold]` vanished from what was shown."""
    timer = FakeTimer()
    console = fancy_console(timer)
    arguments = json.dumps({"command": command})
    steps = [response(None, [tool_call("c1", "shell", arguments)]), response("ok")]
    agent = agent_of(
        1,
        model=ScriptedModel(steps),
        console=console,
        approver=ScriptedApprover([True]),
        cwd=Path.cwd(),
        runner=SlowRunner(timer),
    )
    assert run_agent("edit it", agent) == "ok"
    assert f"运行中 running: {command} · 3s" in shown(console)

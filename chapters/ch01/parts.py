"""Chapter 1's parts: the loop, one tool (shell), a human who approves, a fixed prompt.

Each part is one feature with everything it brings (shared/parts.py); chapter 1's
recipe lists them (chapters/ch01/agent.py). Later chapters replace some of them
(the human who approves, the prompt) and keep the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.parts import Build, Part, Setup
from shared.process import DEFAULT_OUTPUT_LIMIT, CommandRunner, Shell
from shared.recipe import AUTHORIZE, FOLDER, PROMPT, RUN, TOOLS, Runner
from shared.slots import Key

if TYPE_CHECKING:
    from shared.approval import Approver

RUNNER: Key[CommandRunner] = Key("the shell tool's command runner")  # a test's fake one
SHELL: Key[Shell] = Key("the shell the shell tool runs commands in")
OUTPUT_LIMIT: Key[int] = Key("how much of each output stream the shell tool keeps")
APPROVER: Key[Approver] = Key("who approves a call with a side effect")


class Folder(Part):
    """The folder the agent was started in: where commands run."""

    name = "folder"
    summary = "the current folder: where commands run"

    def setup(self, setup: Setup) -> None:
        from shared.cli import working_directory

        setup.provide(FOLDER, working_directory)


class ShellTool(Part):
    """`shell`: run a command in the folder (chapters/ch01/shell_tool.py)."""

    name = "shell"
    summary = "shell: run a command in the folder"

    def contribute(self, build: Build) -> None:
        from chapters.ch01.shell_tool import make_shell_tool

        tool = make_shell_tool(
            build.get(FOLDER),
            runner=build.find(RUNNER, None),
            shell=build.find(SHELL, None),
            output_limit=build.find(OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT),
        )
        build.add(TOOLS, tool, children=True)


class AskHumanPart(Part):
    """Step 4: ask the human about every call with a side effect (chapters/ch01/approve.py)."""

    name = "ask-human"
    summary = "step 4: ask the human about every call with a side effect"

    def contribute(self, build: Build) -> None:
        from chapters.ch01.approve import AskHuman
        from shared.approval import TerminalApprover

        given = build.find(APPROVER, None)

        def ask_human() -> AskHuman:  # made for a run: a listing has no one to ask
            console = build.run_console
            return AskHuman(given or TerminalApprover(console), console)

        build.add(AUTHORIZE, build.later(ask_human), label="AskHuman")


class FixedPrompt(Part):
    """The system prompt: a fixed text, from a chapter's prompt.py."""

    name = "prompt"
    summary = "the system prompt: a fixed text"

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source  # chapters/chNN/prompt.py
        self.from_chapter = int(source.split("/")[1][2:])

    def contribute(self, build: Build) -> None:
        build.add(PROMPT, self.text, label=self.source)


class Loop(Part):
    """A task is one run of the loop (chapters/ch01/loop.py), from an empty history."""

    name = "loop"
    summary = "a task is one run of the loop, from an empty history"

    def setup(self, setup: Setup) -> None:
        setup.provide(RUN, lambda: run_once)


def run_once(task: str, runner: Runner) -> str:
    from chapters.ch01.loop import run_agent

    return run_agent(task, runner.agent())

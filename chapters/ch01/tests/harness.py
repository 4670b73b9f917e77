"""A chapter-1 agent with every outside part scripted: model, approver, shell runner, console.

Tests build one with `Harness(steps=..., answers=..., outcomes=...)`, call
`run(prompt)`, and then read `history`, `model.requests`, `approver.requests`,
`runner.commands` and `console_text()` to check what happened.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chapters.ch01.approve import AskHuman
from chapters.ch01.loop import run_agent
from chapters.ch01.prompt import SYSTEM_PROMPT
from chapters.ch01.shell_tool import make_shell_tool
from shared.agent import DEFAULT_MAX_TURNS, AgentSpec
from shared.approval import ApprovalRequest
from shared.calls import CallPipeline
from shared.console import Console
from shared.messages import Message, ToolMessage
from shared.process import CommandOutcome, Shell
from shared.scripted import ScriptedModel, Step
from shared.tools import ToolRegistry

BASH = Shell("bash", ("bash", "-c"))


def printed(console: Console) -> str:
    """What a console built on StringIO wrote to stderr: progress, panels, notices."""
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


def result_of(history: Sequence[Message], call_id: str) -> str:
    """The content of the one tool message that answers `call_id`."""
    found = [m.content for m in history if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
    assert len(found) == 1, f"{call_id}: {found}"
    return found[0]


@dataclass
class FakeRunner:
    """Returns scripted outcomes in order (default: exit 0, no output) and records commands."""

    outcomes: list[CommandOutcome] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def __call__(self, command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
        self.commands.append(command)
        return self.outcomes.pop(0) if self.outcomes else CommandOutcome(0, "", "")


@dataclass
class ScriptedApprover:
    """Answers from a list, in order, and records every request it saw."""

    answers: list[bool]
    requests: list[ApprovalRequest] = field(default_factory=list)

    @classmethod
    def always(cls, answer: bool, times: int = 1000) -> ScriptedApprover:
        return cls([answer] * times)

    def approve(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"ScriptedApprover was not told how to answer {request}")
        return self.answers.pop(0)


def plain_console() -> Console:
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=False)


class Harness:
    def __init__(
        self,
        steps: Sequence[Step],
        answers: Sequence[bool] = (),
        outcomes: Sequence[CommandOutcome] = (),
        *,
        tools: Callable[[FakeRunner], ToolRegistry] | None = None,
        system_prompt: str = SYSTEM_PROMPT,
    ) -> None:
        """`tools` builds a later chapter's tool set around the fake runner."""
        self.model = ScriptedModel(steps)
        self.approver = ScriptedApprover(list(answers))
        self.runner = FakeRunner(list(outcomes))
        self.console = plain_console()
        self.tools = (
            tools(self.runner)
            if tools
            else ToolRegistry([make_shell_tool(Path.cwd(), runner=self.runner, shell=BASH)])
        )
        self.system_prompt = system_prompt
        self.history: list[Message] = []

    def agent(self, max_turns: int = DEFAULT_MAX_TURNS) -> AgentSpec:
        """Chapter 1's agent, as chapters/ch01/agent.py builds it, around the scripted parts."""
        return AgentSpec(
            model=self.model,
            tools=self.tools,
            calls=CallPipeline(authorize=[AskHuman(self.approver, self.console)]),
            console=self.console,
            system_prompt=self.system_prompt,
            max_turns=max_turns,
        )

    def run(self, prompt: str = "do the task", max_turns: int = DEFAULT_MAX_TURNS) -> str:
        return run_agent(prompt, self.agent(max_turns), history=self.history)

    def console_text(self) -> str:
        return printed(self.console)

    def tool_messages(self) -> list[ToolMessage]:
        return [m for m in self.history if isinstance(m, ToolMessage)]

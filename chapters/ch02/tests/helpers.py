"""Calling chapter 2's tools the way the loop does: prepare (with preview), then invoke."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chapters.ch01.tests.harness import FakeRunner, Harness
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from shared.messages import FunctionCall, ToolCall
from shared.scripted import Step
from shared.tools import PreparedCall, ToolRegistry, ToolResult


def prepare(tools: ToolRegistry, name: str, **args: Any) -> PreparedCall | ToolResult:
    call = ToolCall(id="call_1", function=FunctionCall(name=name, arguments=json.dumps(args)))
    return tools.snapshot().prepare(call)


def run(tools: ToolRegistry, name: str, **args: Any) -> ToolResult:
    """Prepare and, if that passed, invoke (as if the human said yes)."""
    prepared = prepare(tools, name, **args)
    return prepared if isinstance(prepared, ToolResult) else prepared.invoke()


def file_tools(root: Path) -> ToolRegistry:
    return make_tools(Workspace(root), runner=FakeRunner())


def file_harness(root: Path, steps: list[Step], answers: list[bool] | None = None) -> Harness:
    """A chapter-2 agent in `root`: scripted model and approver, fake shell runner."""
    return Harness(
        steps,
        answers or [],
        tools=lambda runner: make_tools(Workspace(root), runner=runner),
        system_prompt=SYSTEM_PROMPT,
    )

"""Chapter 1's agent, listed: the loop's parts, each from the module that defines it.

    tools     shell (chapters/ch01/shell_tool.py)
    step 4    ask the human about every call with a side effect (chapters/ch01/approve.py)
    prompt    what this loop is, in a few lines (chapters/ch01/prompt.py)
    features  none

Later chapters write their own `build_agent` in the same shape; `python -m
tutorial diff` shows each one against the chapter before it.
"""

from __future__ import annotations

from pathlib import Path

from chapters.ch01.approve import AskHuman
from chapters.ch01.prompt import SYSTEM_PROMPT
from chapters.ch01.shell_tool import make_shell_tool
from shared.agent import DEFAULT_MAX_TURNS, AgentSpec
from shared.approval import Approver
from shared.calls import CallPipeline
from shared.completion import ModelClient
from shared.console import Console
from shared.process import CommandRunner, Shell
from shared.tools import ToolRegistry


def build_agent(
    *,
    model: ModelClient,
    console: Console,
    approver: Approver,
    cwd: Path,
    max_turns: int = DEFAULT_MAX_TURNS,
    runner: CommandRunner | None = None,
    shell: Shell | None = None,
) -> AgentSpec:
    """`runner` and `shell` let a test run the agent without starting real commands."""
    return AgentSpec(
        model=model,
        tools=ToolRegistry([make_shell_tool(cwd, runner=runner, shell=shell)]),
        calls=CallPipeline(authorize=[AskHuman(approver, console)]),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        max_turns=max_turns,
    )

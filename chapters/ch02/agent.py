"""Chapter 2's agent: chapter 1's, with five file tools that cannot leave the workspace.

    tools     read_file, write_file, edit_file, glob, grep, and chapter 1's shell
              (chapters/ch02/toolset.py), all bound to one `Workspace`
    prompt    chapter 1's rules plus how to use the file tools (chapters/ch02/prompt.py)

Extends: chapters/ch01/agent.py
"""

from __future__ import annotations

from chapters.ch01.approve import AskHuman
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from shared.agent import DEFAULT_MAX_TURNS, AgentSpec
from shared.approval import Approver
from shared.calls import CallPipeline
from shared.completion import ModelClient
from shared.console import Console
from shared.process import CommandRunner


def build_agent(
    *,
    model: ModelClient,
    console: Console,
    approver: Approver,
    workspace: Workspace,
    max_turns: int = DEFAULT_MAX_TURNS,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    return AgentSpec(
        model=model,
        tools=make_tools(workspace, runner=runner),
        calls=CallPipeline(authorize=[AskHuman(approver, console)]),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        max_turns=max_turns,
    )

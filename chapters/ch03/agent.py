"""Chapter 3's agent: chapter 2's, with a permission policy in step 4 instead of asking always.

    tools     chapter 2's; glob and grep skip what a read deny rule covers
    step 4    the gate: the policy decides, every decision is audited, only "ask"
              reaches the human (chapters/ch03/gate.py); the outcome of each call
              that ran is audited too

Extends: chapters/ch02/agent.py
"""

from __future__ import annotations

from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from shared.agent import DEFAULT_MAX_TURNS, AgentSpec
from shared.calls import CallPipeline
from shared.completion import ModelClient
from shared.console import Console
from shared.process import CommandRunner


def build_agent(
    *,
    model: ModelClient,
    console: Console,
    asker: Asker,
    workspace: Workspace,
    policy: Policy,
    audit: AuditLog,
    max_turns: int = DEFAULT_MAX_TURNS,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    gate = PermissionGate(policy, asker, audit, console)
    return AgentSpec(
        model=model,
        tools=make_tools(workspace, runner=runner, hidden=policy.hides),
        calls=CallPipeline(authorize=[gate], finish=[gate]),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        max_turns=max_turns,
    )

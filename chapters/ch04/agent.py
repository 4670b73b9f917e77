"""Chapter 4's agent: chapter 3's, with the user's hooks at four of the loop's seams.

    features  UserPromptSubmit and Stop hooks (chapters/ch04/loop_hooks.py)
    step 4    PreToolUse hooks before the gate, their say inside its policy;
              PostToolUse hooks after the call ran (chapters/ch04/tool_hooks.py)

Extends: chapters/ch03/agent.py
"""

from __future__ import annotations

from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop_hooks import PromptHooks, StopHooks
from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks
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
    hooks: Hooks,
    max_turns: int = DEFAULT_MAX_TURNS,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    return AgentSpec(
        model=model,
        tools=make_tools(workspace, runner=runner, hidden=policy.hides),
        calls=CallPipeline(
            authorize=[pre, gate], finish=[gate, PostToolUseHooks(hooks, workspace)]
        ),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        features=[PromptHooks(hooks, workspace), StopHooks(hooks, workspace)],
        max_turns=max_turns,
    )

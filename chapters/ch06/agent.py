"""Chapter 6's agent: chapter 5's, plus a `task` tool that runs a sub-agent in a fresh context.

    tools     chapter 5's, plus task (chapters/ch06/task.py), which can start the agents
              of an `AgentCatalog` (chapters/ch06/definitions.py)
    features  one request budget for the agent and all its children, first
              (chapters/ch06/budget.py); then chapter 5's, the Stop event naming the agent
    children  `AgentSpec.child`: the same model and call pipeline (policy, hooks, audit,
              human); their own history, max_turns (never more than the parent's) and a
              fresh set of chapter 5's tools cut to their definition, never task; the
              budget and the Stop hooks; the console nested under the parent's
    prompt    chapter 5's, plus when to hand a side task to a sub-agent (chapters/ch06/prompt.py)

Extends: chapters/ch05/agent.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.control import ControlFile
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop_hooks import PromptHooks, StopHooks
from chapters.ch04.settings import hook_programs
from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.reminder import PlanReminder
from chapters.ch05.todo import TodoPlan
from chapters.ch05.view import plan_view
from chapters.ch06.budget import MAX_REQUESTS, RequestBudget
from chapters.ch06.definitions import (
    AgentCatalog,
    AgentDefinition,
    agent_folders,
    built_in_agents,
)
from chapters.ch06.prompt import SYSTEM_PROMPT
from chapters.ch06.task import Delegation, make_task_tool, not_started
from shared.agent import DEFAULT_MAX_TURNS, MAIN_AGENT, AgentSpec, Feature
from shared.calls import CallPipeline
from shared.completion import ModelClient
from shared.console import Console
from shared.process import CommandRunner
from shared.tools import ToolRegistry


def build_agent(
    *,
    model: ModelClient,
    console: Console,
    asker: Asker,
    workspace: Workspace,
    policy: Policy,
    audit: AuditLog,
    hooks: Hooks,
    plan: TodoPlan,
    agents: AgentCatalog,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_requests: int = MAX_REQUESTS,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    budget = RequestBudget(max_requests)
    console.keep_in_view(lambda: plan_view(plan))

    def fresh_tools() -> ToolRegistry:  # each child: its own read ledger, its own plan
        return plan_tools(workspace, TodoPlan(), runner=runner, hidden=policy.hides)

    def child_features(definition: AgentDefinition) -> Sequence[Feature]:
        return [budget, StopHooks(hooks, workspace, more=_named(definition.name))]

    tools = plan_tools(workspace, plan, runner=runner, hidden=policy.hides)
    agent = AgentSpec(
        model=model,
        tools=tools,
        calls=CallPipeline(
            authorize=[pre, gate], finish=[gate, PostToolUseHooks(hooks, workspace)]
        ),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        features=[
            budget,
            PromptHooks(hooks, workspace),
            StopHooks(hooks, workspace, more=lambda: {"agent": MAIN_AGENT, "plan": plan.as_json()}),
            PlanReminder(plan),
        ],
        max_turns=max_turns,
    )
    tools.register(make_task_tool(agents, Delegation(agent, fresh_tools, child_features).start))
    return agent


def chapter_tools(workspace: Workspace, agents: AgentCatalog | None = None) -> ToolRegistry:
    """Chapter 5's tools and task, for what only reads their names, keys and side effects:
    the rules, and `permissions check`. This task tool starts nothing."""
    tools = plan_tools(workspace)
    catalog = agents or AgentCatalog({a.name: a for a in built_in_agents()})
    tools.register(make_task_tool(catalog, not_started))
    return tools


def control_files(workspace: Workspace, home: Path) -> list[ControlFile]:
    """What a run protects beyond chapter 3's files: the programs the hooks run and the
    agent definitions' folders. The command line and `permissions check` both use it."""
    return [*hook_programs(workspace, home), *agent_folders(workspace.root, home)]


def _named(name: str) -> Callable[[], dict[str, str]]:
    """The Stop event's extra field: which agent is stopping."""
    return lambda: {"agent": name}

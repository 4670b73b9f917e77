"""Chapter 7's agent: chapter 6's, streaming its replies and running safe calls side by side.

    model     given: the streaming model (chapters/ch07/streaming.py), or with
              --no-stream chapter 1's plain one; the loop cannot tell them apart
    console   given: the streaming console (chapters/ch07/stream_console.py)
    calls     the parallel pipeline (chapters/ch07/parallel.py) with chapter 6's
              authorizers and finishers: consecutive concurrency-safe calls run side
              by side, at most `max_parallel` at once; every other call is a barrier
    tools     chapter 5's, plus task (chapters/ch07/side_by_side.py): chapter 6's
              task tool, safe when its agent has only safe tools, its children
              printing into blocks of their own when they run beside other calls
    features  chapter 6's, with the request budget counted under a lock
              (chapters/ch07/side_by_side.py): children side by side ask at once
    children  as in chapter 6 (`AgentSpec.child`): the same model and pipeline
    prompt    chapter 6's, plus: independent calls go in one reply (chapters/ch07/prompt.py)

Extends: chapters/ch06/agent.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop_hooks import PromptHooks, StopHooks
from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.reminder import PlanReminder
from chapters.ch05.todo import TodoPlan
from chapters.ch05.view import plan_view
from chapters.ch06.agent import chapter_tools as chapter6_tools
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.definitions import AgentCatalog, AgentDefinition
from chapters.ch06.task import Delegation
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL, ParallelCallPipeline
from chapters.ch07.prompt import SYSTEM_PROMPT
from chapters.ch07.side_by_side import SharedBudget, make_task_tool
from shared.agent import DEFAULT_MAX_TURNS, MAIN_AGENT, AgentSpec, Feature
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
    max_parallel: int = DEFAULT_MAX_PARALLEL,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    budget = SharedBudget(max_requests)
    console.keep_in_view(lambda: plan_view(plan))

    def fresh_tools() -> ToolRegistry:  # each child: its own read ledger, its own plan
        return plan_tools(workspace, TodoPlan(), runner=runner, hidden=policy.hides)

    def child_features(definition: AgentDefinition) -> Sequence[Feature]:
        return [budget, StopHooks(hooks, workspace, more=_named(definition.name))]

    tools = plan_tools(workspace, plan, runner=runner, hidden=policy.hides)
    agent = AgentSpec(
        model=model,
        tools=tools,
        calls=ParallelCallPipeline(
            authorize=[pre, gate],
            finish=[gate, PostToolUseHooks(hooks, workspace)],
            max_parallel=max_parallel,
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
    tools.register(make_task_tool(agents, Delegation(agent, fresh_tools, child_features)))
    return agent


def chapter_tools(workspace: Workspace, agents: AgentCatalog | None = None) -> ToolRegistry:
    """Chapter 6's tools, for what only reads their names, keys and side effects (the rules,
    `permissions check`): whether a task may run side by side changes nothing there."""
    return chapter6_tools(workspace, agents)


def _named(name: str) -> Callable[[], dict[str, str]]:
    """The Stop event's extra field: which agent is stopping."""
    return lambda: {"agent": name}

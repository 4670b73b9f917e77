"""Chapter 5's agent: chapter 4's, plus a plan the model keeps and the harness watches.

    tools     chapter 2's, plus todo_write on one `TodoPlan` (chapters/ch05/todo.py)
    features  chapter 4's hooks, the Stop event now carrying the plan; then the
              plan's reminder and its note on open items (chapters/ch05/reminder.py)
    prompt    chapter 2's, plus when to keep a plan (chapters/ch05/prompt.py)
    console   the plan under the spinner (chapters/ch05/view.py)

Extends: chapters/ch04/agent.py
"""

from __future__ import annotations

from collections.abc import Callable

from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop_hooks import PromptHooks, StopHooks
from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks
from chapters.ch05.prompt import SYSTEM_PROMPT
from chapters.ch05.reminder import PlanReminder
from chapters.ch05.todo import TodoPlan, make_todo_tool
from chapters.ch05.view import plan_view
from shared.agent import DEFAULT_MAX_TURNS, AgentSpec
from shared.calls import CallPipeline
from shared.completion import ModelClient
from shared.console import Console
from shared.process import DEFAULT_OUTPUT_LIMIT, CommandRunner
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
    max_turns: int = DEFAULT_MAX_TURNS,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`runner` lets a test run the agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    console.keep_in_view(lambda: plan_view(plan))
    return AgentSpec(
        model=model,
        tools=chapter_tools(workspace, plan, runner=runner, hidden=policy.hides),
        calls=CallPipeline(
            authorize=[pre, gate], finish=[gate, PostToolUseHooks(hooks, workspace)]
        ),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        features=[
            PromptHooks(hooks, workspace),
            StopHooks(hooks, workspace, more=lambda: {"plan": plan.as_json()}),
            PlanReminder(plan),
        ],
        max_turns=max_turns,
    )


def chapter_tools(
    workspace: Workspace,
    plan: TodoPlan | None = None,
    *,
    runner: CommandRunner | None = None,
    hidden: Callable[[str], bool] | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> ToolRegistry:
    """Chapter 2's tools, plus `todo_write` on `plan` (`check` only looks at their names);
    `output_limit` goes to chapter 2's `make_tools`, for the shell."""
    tools = make_tools(workspace, runner=runner, hidden=hidden, output_limit=output_limit)
    tools.register(make_todo_tool(plan or TodoPlan()))
    return tools

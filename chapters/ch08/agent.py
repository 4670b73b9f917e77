"""Chapter 8's agent: chapter 7's, with a context that never overflows.

    model     given, streaming or not, as in chapter 7
    console   given: the streaming console; the context gauge under its spinner
              (chapters/ch08/view.py)
    calls     chapter 7's parallel pipeline; its last finisher saves a result longer
              than `offload_over` characters whole on disk, and the model reads its
              first and last part (chapters/ch08/offload.py)
    tools     chapter 7's; the shell keeps up to 1 MB of each stream, since big
              output is now saved whole rather than cut (`TOOL_OUTPUT_LIMIT`)
    features  chapter 7's, then: the run's transcript, every message on disk
              (chapters/ch08/transcript.py); the plan's reminder; old results as
              stubs after `keep_results` requests (chapters/ch08/old_results.py);
              compaction before a request above `compact_at` of `context_window`,
              last, so it measures what will really be sent (chapters/ch08/compaction.py)
    children  as in chapter 7, with no transcript, stubs or compaction: a child's
              history is fresh and short, ended by its own max_turns. Its results
              go through the same pipeline, so a big one is saved like the parent's
    budget    chapter 6's: counts the loop's requests; a compaction's summary
              request is the harness's, not the agent's, and is not counted
    prompt    chapter 7's, plus where saved, stubbed and summarised text is
              (chapters/ch08/prompt.py)

Extends: chapters/ch07/agent.py
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
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.definitions import AgentCatalog, AgentDefinition
from chapters.ch06.task import Delegation
from chapters.ch07.agent import chapter_tools as chapter7_tools
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL, ParallelCallPipeline
from chapters.ch07.side_by_side import SharedBudget, make_task_tool
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW, Compactor
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, TOOL_OUTPUT_LIMIT, Offloader
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS, OldResults
from chapters.ch08.prompt import SYSTEM_PROMPT
from chapters.ch08.transcript import Transcript, new_run_id
from chapters.ch08.view import context_gauge
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
    offload_over: int = DEFAULT_OFFLOAD_OVER,
    keep_results: int = DEFAULT_KEEP_RESULTS,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    compact_at: float = DEFAULT_COMPACT_AT,
    run_id: str | None = None,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`run_id` names the transcript (a new one by default); `runner` lets a test run the
    agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    budget = SharedBudget(max_requests)
    offloader = Offloader(workspace.root, console, over=offload_over)
    transcript = Transcript(workspace.root, run_id or new_run_id())
    old = OldResults(offloader, transcript, keep=keep_results)
    compactor = Compactor(transcript, window=context_window, compact_at=compact_at)
    console.keep_in_view(lambda: plan_view(plan))
    console.keep_in_view(lambda: context_gauge(compactor.meter, compactor.window, compact_at))

    def fresh_tools() -> ToolRegistry:  # each child: its own read ledger, its own plan
        return plan_tools(
            workspace,
            TodoPlan(),
            runner=runner,
            hidden=policy.hides,
            output_limit=TOOL_OUTPUT_LIMIT,
        )

    def child_features(definition: AgentDefinition) -> Sequence[Feature]:
        return [budget, StopHooks(hooks, workspace, more=_named(definition.name))]

    tools = plan_tools(
        workspace, plan, runner=runner, hidden=policy.hides, output_limit=TOOL_OUTPUT_LIMIT
    )
    agent = AgentSpec(
        model=model,
        tools=tools,
        calls=ParallelCallPipeline(
            authorize=[pre, gate],
            finish=[gate, PostToolUseHooks(hooks, workspace), offloader],  # what the model reads
            max_parallel=max_parallel,
        ),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        features=[
            budget,
            PromptHooks(hooks, workspace),
            StopHooks(hooks, workspace, more=lambda: {"agent": MAIN_AGENT, "plan": plan.as_json()}),
            transcript,
            PlanReminder(plan),
            old,
            compactor,
        ],
        max_turns=max_turns,
    )
    tools.register(make_task_tool(agents, Delegation(agent, fresh_tools, child_features)))
    return agent


def chapter_tools(workspace: Workspace, agents: AgentCatalog | None = None) -> ToolRegistry:
    """Chapter 7's tools, for what only reads their names, keys and side effects (the rules,
    `permissions check`): the shell's larger cap changes nothing there."""
    return chapter7_tools(workspace, agents)


def _named(name: str) -> Callable[[], dict[str, str]]:
    """The Stop event's extra field: which agent is stopping."""
    return lambda: {"agent": name}

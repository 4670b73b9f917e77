"""Chapter 11's agent: chapter 10's, which recovers where recovering is safe, and says so.

    model     given, streaming or not, as in chapter 7, with the fallback if there is one,
              and wrapped for recovery (chapters/ch11/models.py): each model in its own
              RetryingModel (the one owner of every retry: the SDK's are off), the two in
              a FallbackModel, and outside them CompactOnOverflow, wired to chapter 8's
              Compactor: a 400 "context too long" compacts the history once and sends
              the request again
    console   given: the recovery console, chapter 7's plus each wait with a countdown
              under the spinner and the attempt number (chapters/ch11/recovery_console.py)
    calls     chapter 10's pipeline inside GuardedCalls (chapters/ch11/guarded_calls.py):
              the calls of a reply cut at the output limit never run, each answered that
              its arguments were cut off; every result passes the repeat guard, which warns
              at the 3rd identical call and result and ends the run at the 5th
    reply     ContinueAfterLength replaces chapter 1's finish-reason step: a text cut at
              the output limit is continued, its parts joined into one assistant message
              (chapters/ch11/continuation.py), at most `max_continuations` times in a row
    tools     chapter 10's, or those of them `chosen` names (--tools,
              chapters/ch11/tool_choice.py): the others are neither offered nor
              described, and without task there are no children; a child gets the
              chosen tools its definition lists, and an agent left with none is not
              offered (with no agent left, neither is task)
    features  chapter 10's, with CurrentRun first (which run is about to send: what
              compaction shortens) and ReportAtEnd last: one line on stderr when the run
              ends, adding up retries, continuations, fallbacks and repeats, if any
    children  as in chapter 10, and recovering as the parent does: they keep its wrapped
              model (one retry owner; once the run moved to the fallback, they are on it
              too), its reply check and its guarded pipeline (counts are per run), and
              write to the same RecoveryLog. A child does not compact: its history is its
              own and short-lived, so a child whose context is too long fails, and the
              parent reads why as the task's result, as it reads a child's repeat stop
    budget    chapter 6's, as in chapter 8; a continuation request is not a turn, it has
              its own bound
    prompt    chapter 10's, assembled once per run

Extends: chapters/ch10/agent.py
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

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
from chapters.ch06.definitions import TASK_TOOL, AgentCatalog, AgentDefinition
from chapters.ch06.task import Delegation
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL, ParallelCallPipeline
from chapters.ch07.side_by_side import SharedBudget, make_task_tool
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW, Compactor
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, TOOL_OUTPUT_LIMIT, Offloader
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS, OldResults
from chapters.ch08.view import context_gauge
from chapters.ch09.memory import MemoryStore
from chapters.ch09.memory_tools import make_memory_tools
from chapters.ch09.resume import CompactFirst
from chapters.ch09.session_log import SessionLog
from chapters.ch10.agent import assemble_prompt
from chapters.ch10.environment import Environment
from chapters.ch10.show_prompt import summary
from chapters.ch10.skill_tool import make_load_skill_tool
from chapters.ch10.skills import load_skills
from chapters.ch11.continuation import DEFAULT_MAX_CONTINUATIONS, ContinueAfterLength
from chapters.ch11.guarded_calls import GuardedCalls
from chapters.ch11.models import recovering_model
from chapters.ch11.overflow import CurrentRun, compacting
from chapters.ch11.repeats import RepeatGuard
from chapters.ch11.retry import DEFAULT_MAX_RETRIES, Clock, RetryPolicy
from chapters.ch11.summary import RecoveryLog, ReportAtEnd
from chapters.ch11.tool_choice import choose_agents, keep_only
from shared.agent import DEFAULT_MAX_TURNS, MAIN_AGENT, AgentSpec, Feature, Run
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
    log: SessionLog,
    home: Path,
    environment: Environment,
    fallback: ModelClient | None = None,
    recovery: RecoveryLog | None = None,
    clock: Clock | None = None,
    draw: Callable[[], float] = random.random,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_continuations: int = DEFAULT_MAX_CONTINUATIONS,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_requests: int = MAX_REQUESTS,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
    offload_over: int = DEFAULT_OFFLOAD_OVER,
    keep_results: int = DEFAULT_KEEP_RESULTS,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    compact_at: float = DEFAULT_COMPACT_AT,
    runner: CommandRunner | None = None,
    chosen: Collection[str] | None = None,
) -> AgentSpec:
    """As chapter 10's. `fallback` is the model that takes over when `model` cannot serve
    (`OPENAI_FALLBACK_MODEL`), `recovery` the log the end line is made from (a new one if
    not given), `clock` where retries wait (the console should count down on the same one),
    `draw` the random number each backoff's jitter is made from, and `chosen` the names of
    the tools the agent gets (None: all of them)."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    budget = SharedBudget(max_requests)
    offloader = Offloader(workspace.root, console, over=offload_over)
    old = OldResults(offloader, log, keep=keep_results)
    compactor = Compactor(log, window=context_window, compact_at=compact_at)
    resumed = [CompactFirst(context_window, compactor.compact)] if log.continuing else []
    store = MemoryStore(workspace.root, home)
    skills = load_skills(workspace.root, home)  # once: the index and load_skill serve the same
    recovery = recovery or RecoveryLog()
    current = CurrentRun()
    reply_check = ContinueAfterLength(max_continuations, log=recovery)
    console.keep_in_view(lambda: plan_view(plan))
    console.keep_in_view(lambda: context_gauge(compactor.meter, compactor.window, compact_at))

    def compact_now(run: Run) -> bool:  # the provider said too long: chapter 8 compacts
        tools = compactor.meter.tools(run.agent.tools.snapshot().schemas())
        return compactor.compact(run, compactor.meter.size(run.history, tools))

    def fresh_tools() -> ToolRegistry:  # each child: its own read ledger, its own plan
        return keep_only(
            plan_tools(
                workspace,
                TodoPlan(),
                runner=runner,
                hidden=policy.hides,
                output_limit=TOOL_OUTPUT_LIMIT,
            ),
            chosen,
        )

    def child_features(definition: AgentDefinition) -> Sequence[Feature]:
        return [budget, StopHooks(hooks, workspace, more=_named(definition.name))]  # no log

    tools = plan_tools(
        workspace, plan, runner=runner, hidden=policy.hides, output_limit=TOOL_OUTPUT_LIMIT
    )
    for tool in make_memory_tools(store):
        tools.register(tool)
    tools.register(make_load_skill_tool(skills, workspace))
    tools = keep_only(tools, chosen)
    if chosen is not None:  # each agent with the chosen tools its definition lists, if any
        agents = choose_agents(agents, fresh_tools().names).agents
    delegates = (chosen is None or TASK_TOOL in chosen) and bool(agents.names)
    # Once, before the first request: the same bytes in every request of the run. task is
    # registered below, once the spec it starts children from exists.
    names = (*tools.names, TASK_TOOL) if delegates else tools.names
    prompt = assemble_prompt(workspace, home, environment, names, skills)
    console.info(summary(prompt))
    for warning in prompt.warnings:
        console.notice(f"harness: {warning}")
    agent = AgentSpec(
        model=recovering_model(
            model,
            fallback=fallback,
            shorten=compacting(current, compact_now),
            policy=RetryPolicy(max_retries=max_retries),
            clock=clock,
            draw=draw,
            log=recovery,
        ),
        tools=tools,
        calls=GuardedCalls(
            inner=ParallelCallPipeline(
                authorize=[pre, gate],
                finish=[gate, PostToolUseHooks(hooks, workspace), offloader],  # what it reads
                max_parallel=max_parallel,
            ),
            cut_replies=reply_check,
            repeats=RepeatGuard(log=recovery, workspace=workspace),  # resolves paths
        ),
        console=console,
        system_prompt=prompt.text,
        features=[
            current,
            budget,
            PromptHooks(hooks, workspace),
            StopHooks(hooks, workspace, more=lambda: {"agent": MAIN_AGENT, "plan": plan.as_json()}),
            *resumed,
            PlanReminder(plan),
            old,
            compactor,
            log,
            ReportAtEnd(recovery),
        ],
        max_turns=max_turns,
        check_reply=reply_check,
    )
    if delegates:
        tools.register(make_task_tool(agents, Delegation(agent, fresh_tools, child_features)))
    return agent


def _named(name: str) -> Callable[[], dict[str, str]]:
    """The Stop event's extra field: which agent is stopping."""
    return lambda: {"agent": name}

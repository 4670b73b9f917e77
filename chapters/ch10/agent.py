"""Chapter 10's agent: chapter 9's, with a system prompt assembled for where it runs, and skills.

    model     given, streaming or not, as in chapter 7
    console   given: the streaming console, with the plan and the context gauge
    calls     chapter 8's pipeline; memory_write is a write like any other, so the
              permission gate judges it, the human sees the memory as it will be
              written, and the audit log records it (chapters/ch09/memory_tools.py)
    tools     chapter 9's, plus load_skill: a skill's instructions, and the names of
              its other files, when the task needs them (chapters/ch10/skill_tool.py).
              A read: nobody is asked
    features  chapter 8's, with the session log in the transcript's place: every
              message on disk as it enters the history, a first line saying what the
              session is, and the history again whenever something replaced it
              (chapters/ch09/session_log.py). The log is listed last, so a history
              shortened before a request is written before the request goes out.
              A resumed session is checked before its first request: one longer
              than the window is compacted first, or not sent (chapters/ch09/resume.py)
    children  as in chapter 9: chapter 5's tools, no memory tools and no load_skill,
              since a child's prompt is its definition's, with no skills index
    budget    chapter 6's, as in chapter 8
    prompt    assembled once, when the agent is built, from sections in a fixed order
              (chapters/ch10/prompt.py): identity; a line per tool the agent has;
              AGENTS.md or CLAUDE.md and ~/.tutorial/AGENTS.md; the skills index;
              chapter 9's memory index; the environment and `today` last. Every request
              of the run sends these bytes; `python -m tutorial prompt` prints them.
              What could not be read is one notice each, and the run goes on

Extends: chapters/ch09/agent.py
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path

from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import Asker
from chapters.ch03.audit import AuditLog
from chapters.ch03.control import ControlFile
from chapters.ch03.gate import PermissionGate
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.loop_hooks import PromptHooks, StopHooks
from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.reminder import PlanReminder
from chapters.ch05.todo import TodoPlan
from chapters.ch05.view import plan_view
from chapters.ch06.agent import control_files as chapter6_control_files
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.definitions import TASK_TOOL, AgentCatalog, AgentDefinition
from chapters.ch06.task import Delegation
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL, ParallelCallPipeline
from chapters.ch07.side_by_side import SharedBudget, make_task_tool
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW, Compactor
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, TOOL_OUTPUT_LIMIT, Offloader
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS, OldResults
from chapters.ch08.view import context_gauge
from chapters.ch09.agent import chapter_tools as chapter9_tools
from chapters.ch09.memory import MemoryIndex, MemoryStore
from chapters.ch09.memory_tools import make_memory_tools
from chapters.ch09.resume import CompactFirst
from chapters.ch09.session_log import SessionLog
from chapters.ch10.environment import Environment, read_environment
from chapters.ch10.prompt import read_system_prompt
from chapters.ch10.sections import SystemPrompt
from chapters.ch10.show_prompt import summary
from chapters.ch10.skill_tool import make_load_skill_tool
from chapters.ch10.skills import SkillCatalog, load_skills, skill_folders
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
    log: SessionLog,
    home: Path,
    environment: Environment,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_requests: int = MAX_REQUESTS,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
    offload_over: int = DEFAULT_OFFLOAD_OVER,
    keep_results: int = DEFAULT_KEEP_RESULTS,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    compact_at: float = DEFAULT_COMPACT_AT,
    runner: CommandRunner | None = None,
) -> AgentSpec:
    """`log` is the session's: a new one (`SessionLog.new`), or a resumed one
    (`resume_session(...).log`, whose history the run is then given). `home` holds the
    user's AGENTS.md, skills and memory folder; `environment` is what the prompt says of
    this machine, this folder and today (`read_environment`, read once per run); `runner`
    lets a test run the agent without starting real commands."""
    pre = PreToolUseHooks(hooks, workspace)
    gate = PermissionGate(pre.joined(policy), asker, audit, console)
    budget = SharedBudget(max_requests)
    offloader = Offloader(workspace.root, console, over=offload_over)
    old = OldResults(offloader, log, keep=keep_results)
    compactor = Compactor(log, window=context_window, compact_at=compact_at)
    resumed = [CompactFirst(context_window, compactor.compact)] if log.continuing else []
    store = MemoryStore(workspace.root, home)
    skills = load_skills(workspace.root, home)  # once: the index and load_skill serve the same
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
        return [budget, StopHooks(hooks, workspace, more=_named(definition.name))]  # no log

    tools = plan_tools(
        workspace, plan, runner=runner, hidden=policy.hides, output_limit=TOOL_OUTPUT_LIMIT
    )
    for tool in make_memory_tools(store):
        tools.register(tool)
    tools.register(make_load_skill_tool(skills, workspace))
    # Once, before the first request: the same bytes in every request of the run. task is
    # registered below, once the spec it starts children from exists.
    prompt = assemble_prompt(workspace, home, environment, (*tools.names, TASK_TOOL), skills)
    console.info(summary(prompt))
    for warning in prompt.warnings:
        console.notice(f"harness: {warning}")
    agent = AgentSpec(
        model=model,
        tools=tools,
        calls=ParallelCallPipeline(
            authorize=[pre, gate],
            finish=[gate, PostToolUseHooks(hooks, workspace), offloader],  # what the model reads
            max_parallel=max_parallel,
        ),
        console=console,
        system_prompt=prompt.text,
        features=[
            budget,
            PromptHooks(hooks, workspace),
            StopHooks(hooks, workspace, more=lambda: {"agent": MAIN_AGENT, "plan": plan.as_json()}),
            *resumed,
            PlanReminder(plan),
            old,
            compactor,
            log,
        ],
        max_turns=max_turns,
    )
    tools.register(make_task_tool(agents, Delegation(agent, fresh_tools, child_features)))
    return agent


def assemble_prompt(
    workspace: Workspace,
    home: Path,
    environment: Environment,
    tools: Collection[str],
    skills: SkillCatalog,
) -> SystemPrompt:
    """The run's system prompt, read now, with chapter 9's memory index as its memory section.

    What could not be read is in `warnings`: the prompt's own (a skill left out, an
    unreadable AGENTS.md) and the memory files the index left out.
    """
    index = MemoryIndex(MemoryStore(workspace.root, home))
    prompt = read_system_prompt(
        workspace.root, home, environment, tools=tools, skills=skills, memory=index
    )
    return replace(prompt, warnings=(*prompt.warnings, *index.warnings))


def chapter_prompt(
    workspace: Workspace, home: Path, today: date, tools: Collection[str] | None = None
) -> SystemPrompt:
    """The prompt a run in `workspace` would send on `today`: what `tutorial prompt` prints.
    `tools`: the names of the tools the run has, when it does not have every one."""
    environment = read_environment(workspace.root, today)
    names = chapter_tools(workspace).names if tools is None else tools
    return assemble_prompt(workspace, home, environment, names, load_skills(workspace.root, home))


def chapter_tools(workspace: Workspace, agents: AgentCatalog | None = None) -> ToolRegistry:
    """Chapter 9's tools and load_skill, for what only reads their names, keys and side
    effects (the rules, `permissions check`, the tools section): `load_skill(deploy)` is a
    rule now."""
    tools = chapter9_tools(workspace, agents)
    tools.register(make_load_skill_tool(SkillCatalog({}), workspace))
    return tools


def control_files(workspace: Workspace, home: Path) -> list[ControlFile]:
    """Chapter 6's control files and the skills folders. The command line and
    `permissions check` both use it."""
    return [*chapter6_control_files(workspace, home), *skill_folders(workspace.root, home)]


def _named(name: str) -> Callable[[], dict[str, str]]:
    """The Stop event's extra field: which agent is stopping."""
    return lambda: {"agent": name}

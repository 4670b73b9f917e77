"""The command line of chapter 11: chapter 10's, and a run that recovers from failures.

    --max-retries N         retries of a request that failed for a reason that passes
                            (429, 5xx, a dropped connection or stream), each after a
                            wait: what the provider asked, else a backoff (default 4)
    --max-continuations N   replies cut at the output limit in a row that are continued
                            (a text) or answered (a tool call) before the run ends
                            (default 3)
    --tools NAMES           only these tools, separated by commas (default: all);
                            a small model does better with fewer. `python -m tutorial
                            prompt --chapter 11 --tools NAMES` prints the system
                            prompt such a run sends

Three more settings, read and checked like the first model's (shared/config.py)
before anything starts: `OPENAI_FALLBACK_MODEL`, and optionally its own
`OPENAI_FALLBACK_BASE_URL` and `OPENAI_FALLBACK_API_KEY` (else the first
model's). A malformed one is exit 2 with the fix, as for `OPENAI_BASE_URL`.

`--trace` shows every failed attempt with its status and body, names a
continuation request as one, and, with a fallback, says which model answered
each request.

`--demo` is one run in a new folder (chapters/ch11/demo.py): a 429 waited out,
a repeated call noticed, a cut answer continued.

Extends: chapters/ch10/cli.py
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.options import choose_workspace
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import TerminalAsker
from chapters.ch03.audit import AUDIT_FILE, AuditLog
from chapters.ch03.check import make_check_command
from chapters.ch03.options import policy_from_options, policy_options
from chapters.ch04.check_hooks import PreToolUseAdviser
from chapters.ch04.hooks import Hooks
from chapters.ch04.settings import load_hooks
from chapters.ch05.agent import chapter_tools as plan_tools
from chapters.ch05.todo import REMIND_AFTER, TodoPlan
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.definitions import TASK_TOOL, load_agents
from chapters.ch06.listing import make_agents_command
from chapters.ch06.task import MAX_TURNS_HELP
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, DEFAULT_SHOWN
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS
from chapters.ch09.listing import sessions_command
from chapters.ch09.memory import MemoryIndex, MemoryStore
from chapters.ch09.resume import open_session
from chapters.ch09.sessions import find_session
from chapters.ch10.agent import chapter_prompt, chapter_tools, control_files
from chapters.ch10.environment import read_environment
from chapters.ch10.sections import SystemPrompt
from chapters.ch10.show_prompt import make_prompt_command
from chapters.ch11.agent import build_agent
from chapters.ch11.continuation import DEFAULT_MAX_CONTINUATIONS
from chapters.ch11.demo import DEMO_PROMPT, DemoClock, demo_model, make_demo_workspace
from chapters.ch11.recovery_console import RecoveryConsole
from chapters.ch11.retry import DEFAULT_MAX_RETRIES, Clock, SystemClock
from chapters.ch11.tool_choice import choose_agents, keep_only, parse_tool_names, tools_option
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import (
    FriendlyCommand,
    Session,
    common_options,
    require_prompt,
    run_session,
    working_directory,
)
from shared.completion import ModelClient
from shared.config import Settings, load_optional_settings
from shared.console import Console

CHAPTER = 11
PROG_NAME = "python -m chapters.ch11"
MIN_WINDOW = 1_000  # tokens: below this not even the system prompt and the tools fit
MOST_RECENT = ""  # what --resume without an ID gives
RESUME_NEEDS_PROMPT = '--resume goes on with a new --prompt: add --prompt "what to do next"'
FALLBACK_PREFIX = "OPENAI_FALLBACK_"  # OPENAI_FALLBACK_MODEL, _BASE_URL, _API_KEY


@click.command(
    name="ch11",
    cls=FriendlyCommand,
    help=(
        "Chapter 11: chapter 10's agent, which retries what passes, continues a cut answer, "
        "falls back to OPENAI_FALLBACK_MODEL, and notices when it repeats itself."
    ),
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS, max_turns_help=MAX_TURNS_HELP)
@policy_options
@click.option(
    "--remind-after",
    type=click.IntRange(min=1),
    default=REMIND_AFTER,
    show_default=True,
    help="Remind the model of its open plan after this many replies without todo_write.",
)
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    default=MAX_REQUESTS,
    show_default=True,
    help="Model requests the agent and all its sub-agents may make together.",
)
@click.option(
    "--no-stream",
    is_flag=True,
    help="Send the plain request of chapters 1-6: the reply arrives whole.",
)
@click.option(
    "--max-parallel",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_PARALLEL,
    show_default=True,
    help="How many concurrency-safe calls of one reply may run at once (1: one by one).",
)
@click.option(
    "--offload-over",
    type=click.IntRange(min=DEFAULT_SHOWN),
    default=DEFAULT_OFFLOAD_OVER,
    show_default=True,
    help="Save a tool result longer than this many characters to disk; the model reads its ends.",
)
@click.option(
    "--keep-results",
    type=click.IntRange(min=1),
    default=DEFAULT_KEEP_RESULTS,
    show_default=True,
    help="Send a long tool result whole in this many requests, then as a short stub.",
)
@click.option(
    "--context-window",
    type=click.IntRange(min=MIN_WINDOW),
    default=DEFAULT_CONTEXT_WINDOW,
    show_default=True,
    help="The model's context window, in tokens.",
)
@click.option(
    "--compact-at",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=DEFAULT_COMPACT_AT,
    show_default=True,
    help="Compact the history before a request above this share of the window.",
)
@click.option(
    "--resume",
    is_flag=False,
    flag_value=MOST_RECENT,
    default=None,
    metavar="[ID]",
    help=(
        "Go on with the most recent session of this folder, or the one whose id is (or "
        "starts with) ID, with a new --prompt. List them: python -m tutorial sessions."
    ),
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_RETRIES,
    show_default=True,
    help="Send a request again this many times after a 429, a 5xx or a dropped connection.",
)
@click.option(
    "--max-continuations",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_CONTINUATIONS,
    show_default=True,
    help="Replies cut at the output limit in a row that are continued before the run ends.",
)
@tools_option
def command(
    prompt: str | None,
    max_turns: int,
    trace: bool,
    demo: bool,
    workspace: Path | None,
    mode: str | None,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    remind_after: int,
    max_requests: int,
    no_stream: bool,
    max_parallel: int,
    offload_over: int,
    keep_results: int,
    context_window: int,
    compact_at: float,
    resume: str | None,
    max_retries: int,
    max_continuations: int,
    tool_names: str | None,
) -> None:
    if resume is not None and demo:
        raise click.UsageError("--demo runs a session of its own in a new folder; drop --resume")
    if resume is not None and not (prompt and prompt.strip()):
        raise click.UsageError(RESUME_NEEDS_PROMPT)
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    if resume is not None:
        find_session(root.root, resume or None)  # exit 2, listing the sessions, before any start
    home = Path.home()
    environment = read_environment(root.root, date.today())  # once: what the prompt states
    agents = load_agents(root.root, home, plan_tools(root).names)  # exit 2 if malformed
    every_tool = chapter_tools(root, agents)
    chosen = parse_tool_names(tool_names, every_tool.names)  # exit 2 on a misspelt name
    policy = policy_from_options(root, every_tool, mode, allow, deny)
    hooks = Hooks(load_hooks(root, home))  # exit 2 if malformed
    policy = policy.protecting(control_files(root, home))  # what the harness obeys
    audit = AuditLog(root.root / AUDIT_FILE, inside=root.root)
    clock = make_clock(demo)
    fallbacks: list[ModelClient] = []  # the fallback, once connect has read its settings

    def in_session(
        task: str, wanted: str | None, model: ModelClient, console: Console
    ) -> tuple[str, str]:
        """One run: a new session (`wanted` None), or the one `wanted` names ("": the latest).
        The answer, and the session's id."""
        log, history = open_session(root.root, wanted, chapter=CHAPTER, console=console)
        agent = build_agent(
            model=model,
            console=console,
            asker=TerminalAsker(console),
            workspace=root,
            policy=policy,
            audit=audit,
            hooks=hooks,
            plan=TodoPlan(remind_after=remind_after),
            agents=agents,
            log=log,
            home=home,
            environment=environment,
            fallback=fallbacks[0] if fallbacks else None,
            clock=clock,
            max_retries=max_retries,
            max_continuations=max_continuations,
            max_turns=max_turns,
            max_requests=max_requests,
            max_parallel=max_parallel,
            offload_over=offload_over,
            keep_results=keep_results,
            context_window=context_window,
            compact_at=compact_at,
            chosen=chosen,
        )
        return run_agent(task, agent, history=history), log.session_id

    def run(task: str, model: ModelClient, console: Console) -> str:
        counts = ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"
        console.info(f"mode: {policy.mode} · audit: {AUDIT_FILE.as_posix()} · hooks: {counts}")
        console.info(f"agents: {', '.join(agents.names)} · max_requests: {max_requests}")
        streaming = "off (--no-stream)" if no_stream else "on"
        console.info(f"streaming: {streaming} · max_parallel: {max_parallel}")
        console.info(
            f"context: {context_window:,} tokens, compact at {compact_at:.0%} · offload over "
            f"{offload_over:,} characters · stubs after {keep_results} requests"
        )
        memory = MemoryIndex(MemoryStore(root.root, home)).source
        console.info(f"memory: {memory} · its index goes into the system prompt")
        fallback = fallbacks[0].label if fallbacks else f"none ({FALLBACK_PREFIX}MODEL)"
        console.info(
            f"recovery: max_retries: {max_retries} · max_continuations: {max_continuations} "
            f"· fallback: {fallback}"
        )
        if chosen is not None:
            line = f"tools: {', '.join(keep_only(every_tool, chosen).names)} (--tools)"
            if TASK_TOOL in chosen:  # what the choice took from the agents task starts
                took = choose_agents(agents, keep_only(plan_tools(root), chosen).names)
                line = " · ".join(filter(None, [line, took.described()]))
            console.info(line)
        return in_session(task, resume, model, console)[0]

    def client(settings: Settings) -> ModelClient:
        if no_stream:
            from shared.openai_client import OpenAIChatModel

            return OpenAIChatModel(settings)
        from chapters.ch07.streaming import StreamingChatModel

        return StreamingChatModel(settings)

    def connect(settings: Settings) -> ModelClient:
        """The first model; the fallback's settings are read and checked here too, before
        anything starts, with the first model's URL and key as their defaults."""
        second = load_optional_settings(
            os.environ, working_directory(), prefix=FALLBACK_PREFIX, defaults=settings
        )
        if second is not None:
            fallbacks.append(client(second))
        return client(settings)

    session = Session(
        chapter=CHAPTER,
        folder=root.root,
        demo_model=lambda: demo_model(stream=not no_stream),
        demo_prompt=DEMO_PROMPT,
        run=run,
        console=lambda traced: RecoveryConsole(trace=traced, clock=clock),
        connect=connect,
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(chapter_tools, PreToolUseAdviser(), control_files)
agents_command = make_agents_command(plan_tools)


def prompt_for(
    workspace: Workspace, home: Path, today: date, tool_names: str | None = None
) -> SystemPrompt:
    """The prompt a run with these `--tools` would send: `prompt --chapter 11 --tools ...`."""
    every_tool = chapter_tools(workspace)
    chosen = parse_tool_names(tool_names, every_tool.names)  # exit 2 on a misspelt name
    return chapter_prompt(workspace, home, today, keep_only(every_tool, chosen).names)


prompt_command = make_prompt_command(prompt_for, options=[tools_option])

__all__ = [
    "agents_command",
    "check_command",
    "command",
    "main",
    "prompt_command",
    "sessions_command",
]


def make_clock(demo: bool) -> Clock:
    """Where the run's retries wait and its countdown counts: the real clock; for --demo,
    one that waits only when a person watches (chapters/ch11/demo.py)."""
    return DemoClock.for_this_terminal() if demo else SystemClock()


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

"""The command line of chapter 10: chapter 9's, with the assembled prompt and the skills.

No new options: what goes into the prompt comes from files (AGENTS.md or
CLAUDE.md, ~/.tutorial/AGENTS.md, .tutorial/skills/, ~/.tutorial/skills/, the
memory folders) and from this machine and today's date, read once when the
run starts. `python -m tutorial prompt --chapter 10` prints that prompt
without running anything (chapters/ch10/show_prompt.py); `--raw`, as sent.

`--demo` is one run in a new folder (chapters/ch10/demo.py): a review that the
model does with the python-diff-review skill, loaded on demand.

Extends: chapters/ch09/cli.py
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import click

from chapters.ch01.loop import run_agent
from chapters.ch02.options import choose_workspace
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
from chapters.ch06.definitions import load_agents
from chapters.ch06.listing import make_agents_command
from chapters.ch06.task import MAX_TURNS_HELP
from chapters.ch07.parallel import DEFAULT_MAX_PARALLEL
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, DEFAULT_SHOWN
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS
from chapters.ch09.listing import sessions_command
from chapters.ch09.memory import MemoryIndex, MemoryStore
from chapters.ch09.resume import open_session
from chapters.ch09.sessions import find_session
from chapters.ch10.agent import build_agent, chapter_prompt, chapter_tools, control_files
from chapters.ch10.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch10.environment import read_environment
from chapters.ch10.show_prompt import make_prompt_command
from shared.agent import DEFAULT_MAX_TURNS
from shared.cli import FriendlyCommand, Session, common_options, require_prompt, run_session
from shared.completion import ModelClient
from shared.config import Settings
from shared.console import Console

CHAPTER = 10
PROG_NAME = "python -m chapters.ch10"
MIN_WINDOW = 1_000  # tokens: below this not even the system prompt and the tools fit
MOST_RECENT = ""  # what --resume without an ID gives
RESUME_NEEDS_PROMPT = '--resume goes on with a new --prompt: add --prompt "what to do next"'


@click.command(
    name="ch10",
    cls=FriendlyCommand,
    help=(
        "Chapter 10: the system prompt is assembled for this folder (AGENTS.md, skills, "
        "memory, environment), and skills load when a task needs them."
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
    policy = policy_from_options(root, chapter_tools(root, agents), mode, allow, deny)
    hooks = Hooks(load_hooks(root, home))  # exit 2 if malformed
    policy = policy.protecting(control_files(root, home))  # what the harness obeys
    audit = AuditLog(root.root / AUDIT_FILE, inside=root.root)

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
            max_turns=max_turns,
            max_requests=max_requests,
            max_parallel=max_parallel,
            offload_over=offload_over,
            keep_results=keep_results,
            context_window=context_window,
            compact_at=compact_at,
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
        return in_session(task, resume, model, console)[0]

    def connect(settings: Settings) -> ModelClient:
        if no_stream:
            from shared.openai_client import OpenAIChatModel

            return OpenAIChatModel(settings)
        from chapters.ch07.streaming import StreamingChatModel

        return StreamingChatModel(settings)

    session = Session(
        chapter=CHAPTER,
        folder=root.root,
        demo_model=lambda: demo_model(stream=not no_stream),
        demo_prompt=DEMO_PROMPT,
        run=run,
        console=lambda traced: StreamingConsole(trace=traced),
        connect=connect,
    )
    run_session(session, prompt=prompt, trace=trace, demo=demo)


check_command = make_check_command(chapter_tools, PreToolUseAdviser(), control_files)
agents_command = make_agents_command(plan_tools)
prompt_command = make_prompt_command(chapter_prompt)

__all__ = [
    "agents_command",
    "check_command",
    "command",
    "main",
    "prompt_command",
    "sessions_command",
]


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

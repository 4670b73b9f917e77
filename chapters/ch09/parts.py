"""Chapter 9's parts: sessions you can resume, and memories that outlive them.

sessions  --resume [ID]; every run is a session log in the transcript's place
          (chapters/ch09/session_log.py), the last feature, so a history shortened
          before a request is written before the request goes out; a resumed one
          is checked before its first request (chapters/ch09/resume.py);
          `sessions` lists them
memory    memory_read and memory_write over the project's and the user's memory
          folders (chapters/ch09/memory_tools.py); the memory index after the
          system prompt (chapters/ch09/prompt.py)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from chapters.ch02.parts import WORKSPACE
from chapters.ch08.parts import COMPACTOR, TRANSCRIPT
from shared.parts import Build, Part, Setup, Subcommand
from shared.recipe import FEATURES, PROMPT, RUN, TOOLS, Runner, home_folder
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch09.memory import MemoryStore
    from shared.console import Console

MOST_RECENT = ""  # what --resume without an ID gives
RESUME_NEEDS_PROMPT = '--resume goes on with a new --prompt: add --prompt "what to do next"'
MEMORY: Key[MemoryStore] = Key("the memory folders")


class Sessions(Part):
    """Every run a session: on disk as it happens, and resumable."""

    name = "sessions"
    summary = "--resume [ID]: every run is a session log; go on with one"
    options = (
        click.Option(
            ["--resume"],
            is_flag=False,
            flag_value=MOST_RECENT,
            default=None,
            metavar="[ID]",
            help=(
                "Go on with the most recent session of this folder, or the one whose id is "
                "(or starts with) ID, with a new --prompt. List them: python -m tutorial "
                "sessions."
            ),
        ),
    )

    def check(self, setup: Setup) -> None:
        resume, prompt = setup.options.get("resume"), setup.options.get("prompt")
        if resume is not None and setup.demo:
            several = "sessions" if setup.recipe.demo.script else "a session"
            raise click.UsageError(
                f"--demo runs {several} of its own in a new folder; drop --resume"
            )
        if resume is not None and not (prompt and prompt.strip()):
            raise click.UsageError(RESUME_NEEDS_PROMPT)

    def setup(self, setup: Setup) -> None:
        from chapters.ch09.sessions import find_session

        resume = setup.option("resume")
        if resume is not None:  # exit 2, listing the sessions, before anything starts
            setup.provide(
                RESUMING, lambda: bool(find_session(setup.get(WORKSPACE).root, resume or None))
            )
        setup.decorate(RUN, lambda _: lambda task, runner: in_sessions(setup, task, runner))

    def contribute(self, build: Build) -> None:
        from chapters.ch09.resume import CompactFirst

        if build.child:
            return
        log = build.find(TRANSCRIPT, None)  # a run's session log (`in_sessions`); a listing's none
        if getattr(log, "continuing", False):

            def compact_first() -> CompactFirst:
                compactor = build.get(COMPACTOR)
                return CompactFirst(compactor.window, compactor.compact)

            build.add(FEATURES, build.later(compact_first), before=["plan"], label="CompactFirst")
        session_log = build.later(lambda: build.get(TRANSCRIPT))
        build.add(FEATURES, session_log, phase=Phase.LAST, after=["context"], label="SessionLog")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch09.listing import sessions_command

        return {
            "sessions": Subcommand(
                lambda recipe: sessions_command,
                help="List the sessions a chapter's run could resume from here; nothing runs.",
                absent="Chapter {n} keeps no sessions; sessions are kept from chapter 9 on",
            )
        }


RESUMING: Key[bool] = Key("the session --resume names")


def in_sessions(setup: Setup, task: str, runner: Runner) -> str:
    """A run in a new session, or the one --resume names; a demo's several, if it has them."""
    from chapters.ch07.stream_console import StreamingConsole

    def in_session(task: str, wanted: str | None, console: Console) -> tuple[str, str]:
        """One run: a new session (`wanted` None), or the one `wanted` names ("": the latest).
        The answer, and the session's id."""
        from chapters.ch01.loop import run_agent
        from chapters.ch09.resume import open_session

        root = setup.get(WORKSPACE).root
        log, history = open_session(root, wanted, chapter=setup.recipe.chapter, console=console)
        agent = runner.agent({TRANSCRIPT: log}, console)
        return run_agent(task, agent, history=history), log.session_id

    script = setup.recipe.demo.script
    if not (setup.demo and script):
        return in_session(task, setup.option("resume"), runner.console)[0]
    console = runner.console

    def demo_run(task: str, wanted: str | None) -> tuple[str, str]:
        # Each run its own console on the same streams: what one run keeps in view under
        # the spinner (its plan, its gauge) is not the next run's.
        fresh = StreamingConsole(
            out=console.out, err=console.err, fancy=console.fancy, trace=console.tracing
        )
        return in_session(task, wanted, fresh)

    return script(demo_run, console)


class Memory(Part):
    """Notes that outlive the session: two tools and an index in the prompt."""

    name = "memory"
    summary = "memory_read, memory_write; the memory index after the system prompt"

    def __init__(self, index_in_prompt: bool = True) -> None:
        """`index_in_prompt`: False when another part puts the index in the prompt."""
        self.index_in_prompt = index_in_prompt

    def setup(self, setup: Setup) -> None:
        from chapters.ch09.memory import MemoryIndex, MemoryStore

        setup.provide(MEMORY, lambda: MemoryStore(setup.get(WORKSPACE).root, home_folder(setup)))

        def line() -> str:
            source = MemoryIndex(setup.get(MEMORY)).source
            return f"memory: {source} · its index goes into the system prompt"

        setup.add_banner("memory", line)

    def contribute(self, build: Build) -> None:
        from chapters.ch09.memory import MemoryIndex
        from chapters.ch09.memory_tools import make_memory_tools
        from chapters.ch09.prompt import with_memory_index

        for tool in make_memory_tools(build.get(MEMORY)):
            build.add(TOOLS, tool)
        if build.child or not self.index_in_prompt:
            return

        def prompt() -> str:  # read once per run, when the agent is made
            index = MemoryIndex(build.get(MEMORY))
            text = with_memory_index(index.text())  # reading the files finds what is wrong
            for warning in index.warnings:
                build.run_console.notice(f"harness: {warning}")
            return text

        build.add(PROMPT, build.later(prompt), label="chapters/ch09/prompt.py")

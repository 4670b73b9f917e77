"""Chapter 11's parts: a run that recovers where recovering is safe, and fewer tools.

recovery     --max-retries, --max-continuations, OPENAI_FALLBACK_*: the model wrapped
             for recovery (chapters/ch11/models.py), the pipeline inside GuardedCalls
             (chapters/ch11/guarded_calls.py), ContinueAfterLength as the reply check
             (chapters/ch11/continuation.py); CurrentRun first and ReportAtEnd last of
             the features; the recovery console
tool-choice  --tools: only these tools, for the agent and its children
             (chapters/ch11/tool_choice.py)
"""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING, Any

from chapters.ch02.parts import WORKSPACE
from chapters.ch06.definitions import TASK_TOOL
from chapters.ch06.parts import AGENTS
from chapters.ch08.parts import COMPACTOR
from chapters.ch11.continuation import DEFAULT_MAX_CONTINUATIONS
from chapters.ch11.retry import DEFAULT_MAX_RETRIES
from chapters.ch11.tool_choice import tools_option
from shared.cli import count_option, params_of
from shared.parts import Build, Part, Setup
from shared.recipe import (
    CALL_LAYERS,
    CONNECT,
    CONSOLE,
    FEATURES,
    MODEL_LAYERS,
    REPLY_CHECK,
    TOOL_FILTERS,
    listed_tools,
)
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch11.retry import Clock
    from shared.agent import Run
    from shared.completion import ModelClient

FALLBACK_PREFIX = "OPENAI_FALLBACK_"  # OPENAI_FALLBACK_MODEL, _BASE_URL, _API_KEY
CLOCK: Key[Clock] = Key("where retries wait")
DRAW: Key[Any] = Key("the random number each backoff's jitter is made from")
FALLBACKS: Key[list[ModelClient]] = Key("the fallback model, once its settings are read")
CHOSEN: Key[Any] = Key("the tools --tools names")


def make_clock(demo: bool) -> Clock:
    """Where the run's retries wait and its countdown counts: the real clock; for --demo,
    one that waits only when a person watches (chapters/ch11/demo.py)."""
    from chapters.ch11.demo import DemoClock
    from chapters.ch11.retry import SystemClock

    return DemoClock.for_this_terminal() if demo else SystemClock()


class Recovery(Part):
    """Retries, a fallback, continuations and the repeat guard, all counted and told."""

    name = "recovery"
    summary = "--max-retries, --max-continuations, a fallback model: recover what is safe"
    options = (
        count_option(
            "--max-retries",
            DEFAULT_MAX_RETRIES,
            "Send a request again this many times after a 429, a 5xx or a dropped connection.",
            least=0,
        ),
        count_option(
            "--max-continuations",
            DEFAULT_MAX_CONTINUATIONS,
            "Replies cut at the output limit in a row that are continued before the run ends.",
            least=0,
        ),
    )

    def setup(self, setup: Setup) -> None:
        from chapters.ch11.recovery_console import RecoveryConsole
        from shared.cli import working_directory
        from shared.config import load_optional_settings

        if not setup.has(CLOCK):
            setup.provide(CLOCK, lambda: make_clock(setup.demo))
        fallbacks: list[ModelClient] = []
        setup.provide(FALLBACKS, lambda: fallbacks)
        setup.decorate(
            CONSOLE, lambda _: lambda traced: RecoveryConsole(trace=traced, clock=setup.get(CLOCK))
        )

        def connecting(inner: Any) -> Any:
            def connect(settings: Any) -> ModelClient:
                """The first model; the fallback's settings are read and checked here too,
                before anything starts, with the first model's URL and key as defaults."""
                second = load_optional_settings(
                    os.environ, working_directory(), prefix=FALLBACK_PREFIX, defaults=settings
                )
                if second is not None:
                    fallbacks.append(inner(second))
                return inner(settings)  # type: ignore[no-any-return]

            return connect

        setup.decorate(CONNECT, connecting)
        retries, continuations = setup.option("max_retries"), setup.option("max_continuations")

        def line() -> str:
            fallback = fallbacks[0].label if fallbacks else f"none ({FALLBACK_PREFIX}MODEL)"
            return (
                f"recovery: max_retries: {retries} · max_continuations: {continuations} "
                f"· fallback: {fallback}"
            )

        setup.add_banner("recovery", line)

    def contribute(self, build: Build) -> None:
        from chapters.ch11.continuation import ContinueAfterLength
        from chapters.ch11.guarded_calls import GuardedCalls
        from chapters.ch11.models import recovering_model
        from chapters.ch11.overflow import CurrentRun, compacting
        from chapters.ch11.repeats import RepeatGuard
        from chapters.ch11.retry import RetryPolicy
        from chapters.ch11.summary import RecoveryLog, ReportAtEnd

        if build.child:
            return
        setup = build.setup
        recovery, current = RecoveryLog(), CurrentRun()
        reply_check = ContinueAfterLength(setup.option("max_continuations"), log=recovery)

        def compact_now(run: Run) -> bool:  # the provider said too long: chapter 8 compacts
            compactor = build.get(COMPACTOR)
            tools = compactor.meter.tools(run.agent.tools.snapshot().schemas())
            return compactor.compact(run, compactor.meter.size(run.history, tools))

        def model(first: ModelClient) -> ModelClient:
            fallbacks = setup.get(FALLBACKS)
            return recovering_model(
                first,
                fallback=fallbacks[0] if fallbacks else None,
                shorten=compacting(current, compact_now),
                policy=RetryPolicy(max_retries=setup.option("max_retries")),
                clock=setup.get(CLOCK),
                draw=setup.find(DRAW, random.random),
                log=recovery,
            )

        workspace = build.get(WORKSPACE)
        build.add(MODEL_LAYERS, model, label="recovering_model")
        build.add(
            CALL_LAYERS,
            lambda inner: GuardedCalls(
                inner=inner,
                cut_replies=reply_check,
                repeats=RepeatGuard(log=recovery, workspace=workspace),  # resolves paths
            ),
            label="GuardedCalls",
        )
        build.add(REPLY_CHECK, reply_check)
        build.add(FEATURES, current, phase=Phase.FIRST, before=["budget"])
        build.add(FEATURES, ReportAtEnd(recovery), phase=Phase.LAST, after=["sessions"])


class ToolChoice(Part):
    """--tools: the agent, and the agents task starts, get only the tools named."""

    name = "tool-choice"
    summary = "--tools NAMES: only these tools, for the agent and its children"
    options = params_of(tools_option)
    changes_prompt = True

    def setup(self, setup: Setup) -> None:
        from chapters.ch11.tool_choice import choose_agents, parse_tool_names

        text = setup.option("tool_names")
        if text is None:
            return
        raw = {name.strip() for name in text.split(",") if name.strip()}
        setup.provide(CHOSEN, lambda: parse_tool_names(text, self.every_tool(setup)))

        def chosen_agents(agents: Any) -> Any:
            if not raw:  # nothing named: --tools is refused, and shows every tool
                return agents
            children = listed_tools(setup, child=True).names
            return choose_agents(agents, [n for n in children if n in raw]).agents

        setup.decorate(AGENTS, chosen_agents)
        setup.add_banner("tools", lambda: self.line(setup))

    def line(self, setup: Setup) -> str:
        from chapters.ch11.tool_choice import choose_agents

        chosen = setup.get(CHOSEN)
        line = f"tools: {', '.join(n for n in self.every_tool(setup) if n in chosen)} (--tools)"
        if TASK_TOOL in chosen:  # what the choice took from the agents task starts
            children = [n for n in listed_tools(setup, child=True).names if n in chosen]
            took = choose_agents(self.unchosen_agents(setup), children)
            line = " · ".join(filter(None, [line, took.described()]))
        return line

    def every_tool(self, setup: Setup) -> list[str]:
        """The tools --tools may name, in the order a run offers them: task too when an
        agent is defined, though the choice may leave it none (and so no task)."""
        names = list(listed_tools(setup).names)
        if TASK_TOOL not in names and self.unchosen_agents(setup).names:
            names.append(TASK_TOOL)
        return names

    def unchosen_agents(self, setup: Setup) -> Any:
        from chapters.ch06.definitions import load_agents
        from shared.recipe import home_folder

        children = listed_tools(setup, child=True).names
        return load_agents(setup.get(WORKSPACE).root, home_folder(setup), children)

    def contribute(self, build: Build) -> None:
        if build.setup.option("tool_names") is None:
            return
        setup = build.setup  # CHOSEN is asked for when the filter runs, not now: making
        # it lists the tools, which makes this build's parts contribute again
        build.add(
            TOOL_FILTERS,
            lambda names: [n for n in names if n in setup.get(CHOSEN)],
            children=True,
            label="--tools",
        )

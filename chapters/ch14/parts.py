"""Chapter 14's part: prompts that come back on a clock the harness keeps.

schedule  --stay-for SECONDS. Once per command: the run's wall clock (`WALL_CLOCK`:
          the machine's, or one started at TUTORIAL_NOW; the demo's starts two
          seconds before a minute), checked before anything starts. Per run, for
          the main agent only: its `Schedule` (chapters/ch14/schedule.py: its own
          jobs in memory, the folder's durable ones in .tutorial/scheduled_tasks.json);
          cron_create, cron_delete and cron_list on it (chapters/ch14/cron_tools.py);
          `FireBetweenTurns` (chapters/ch14/staying.py) before chapter 13's
          DeliverEvents, so that with --stay-for above 0 a due job reaches the model
          through the inbox after an answer, as a new turn, and a line under the spinner
          while the run stays (chapters/ch14/view.py); `cron` lists the folder's durable jobs
          (chapters/ch14/listing.py)

Children get no cron tools: a child's turn ends inside its parent's, and a job it
scheduled would come back to nobody. Every run-only object (the schedule, the tools on
it, the stay) is made `later`, so `tutorial recipe` names them and makes none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import click

from chapters.ch13.parts import INBOX
from chapters.ch14.staying import MAX_STAY
from shared.parts import Build, Part, Setup, Subcommand
from shared.recipe import FEATURES, FOLDER, TOOLS, VIEWS
from shared.slots import Key

if TYPE_CHECKING:
    from chapters.ch14.clock import Clock
    from chapters.ch14.schedule import Schedule
    from shared.tools import Tool

WALL_CLOCK: Key[Clock] = Key("the run's wall clock (TUTORIAL_NOW)")
SCHEDULE: Key[Schedule] = Key("the run's schedule: its own jobs and the folder's durable ones")


def make_clock(demo: bool) -> Clock:
    """The run's clock: TUTORIAL_NOW's, else the demo's (two seconds to a minute), else the
    machine's. A TUTORIAL_NOW that does not parse is a usage error that says the fix."""
    from chapters.ch14.clock import NOW_VARIABLE, ClockError, clock_from_env
    from chapters.ch14.demo import demo_clock

    if demo and not os.environ.get(NOW_VARIABLE, "").strip():
        return demo_clock()
    try:
        return clock_from_env(os.environ)
    except ClockError as error:
        raise click.UsageError(str(error)) from None


def stay_for(setup: Setup) -> float:
    """--stay-for; this chapter's demo's `DEMO_STAY` when that demo was not given one (a
    later chapter's demo schedules nothing, and ends after its answer)."""
    from chapters.ch14.demo import DEMO_PROMPT, DEMO_STAY

    stay = float(setup.option("stay_for") or 0.0)
    ours = setup.demo and setup.recipe.demo.prompt == DEMO_PROMPT
    return stay or (DEMO_STAY if ours else 0.0)


class Scheduling(Part):
    """A schedule of prompts, three tools on it, and a run that may stay for them."""

    name = "schedule"
    summary = (
        "--stay-for; cron_create, cron_delete, cron_list: prompts that come back on a clock, "
        "between turns; `cron` lists them"
    )
    options = (
        click.Option(
            ["--stay-for"],
            type=click.FloatRange(min=0, max=MAX_STAY),
            default=0.0,
            show_default=True,
            metavar="SECONDS",
            help=(
                "After the answer, stay this long and run each scheduled job of this run as a "
                "new turn when it comes due; the run ends sooner when no job is left (0: end "
                "after the answer). Each fire is a request, counted by --max-turns. The clock "
                "starts at TUTORIAL_NOW=<ISO 8601 instant> when it is set (for tests and demos)."
            ),
        ),
    )

    def check(self, setup: Setup) -> None:
        make_clock(setup.demo)  # a bad TUTORIAL_NOW: exit 2 with the fix, before any request

    def setup(self, setup: Setup) -> None:
        if not setup.has(WALL_CLOCK):
            setup.provide(WALL_CLOCK, lambda: make_clock(setup.demo))
        setup.add_banner("schedule", lambda: banner(setup))

    def contribute(self, build: Build) -> None:
        if build.child:
            return  # no cron tools, no stay: a child's turn ends inside its parent's
        from chapters.ch13.inbox import Inbox
        from chapters.ch14.cron_tools import CRON_TOOLS, make_cron_tools
        from chapters.ch14.staying import FireBetweenTurns
        from chapters.ch14.view import stay_view

        setup, stay = build.setup, stay_for(build.setup)
        schedule = build.later(
            lambda: build.shared(SCHEDULE, lambda: new_schedule(setup, listing=build.listing))
        )

        def cron_tools() -> dict[str, Tool]:
            return {tool.name: tool for tool in make_cron_tools(schedule(), stays=stay > 0)}

        tools = build.later(cron_tools)  # one schedule, three tools on it, made at the run

        def named(name: str) -> Callable[[], Tool]:
            return lambda: tools()[name]

        for name in CRON_TOOLS:
            build.add(TOOLS, build.later(named(name)), label=name)
        # Always there, so that the recipe lists it; with --stay-for 0 it lets every stop be.
        fire = build.later(
            lambda: FireBetweenTurns(
                schedule(), build.shared(INBOX, Inbox), setup.get(WALL_CLOCK), stay
            )
        )
        # Before chapter 13's DeliverEvents: the fires it posts go out in the same stop.
        build.add(FEATURES, fire, before=["background"], label="FireBetweenTurns")
        build.add(VIEWS, lambda: stay_view(fire()), label="stay_view")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch14.listing import cron_command

        return {
            "cron": Subcommand(
                lambda recipe: cron_command,
                help="List the durable scheduled jobs of this folder; nothing runs.",
                absent="Chapter {n} schedules nothing; jobs are scheduled from chapter 14 on",
            )
        }


def new_schedule(setup: Setup, *, listing: bool = False) -> Schedule:
    """The run's schedule on its folder and clock; the demo's ids are the same every run.
    For a listing that reads the tools' names (`permissions check`), one that reads no
    TUTORIAL_NOW: making a schedule touches no file, and nothing calls it."""
    from chapters.ch14.clock import Clock
    from chapters.ch14.demo import demo_ids
    from chapters.ch14.schedule import Schedule

    folder = setup.get(FOLDER)
    clock = Clock() if listing else setup.get(WALL_CLOCK)
    if setup.demo:
        return Schedule(folder, clock, new_id=demo_ids())
    return Schedule(folder, clock)


def banner(setup: Setup) -> str:
    """`schedule: stays up to 90s after an answer ... · clock from ... · 2 durable jobs ...`"""
    from chapters.ch14.clock import NOW_VARIABLE
    from chapters.ch14.demo import DEMO_NOW
    from chapters.ch14.schedule import SCHEDULE_FILE, ScheduleError, read_durable

    stay = stay_for(setup)
    if stay:
        items = [
            f"schedule: stays up to {stay:g}s after an answer while a job of this run may fire"
        ]
    else:
        items = ["schedule: the run ends after its answer (--stay-for 0): no job fires in it"]
    now = os.environ.get(NOW_VARIABLE, "").strip()
    if now:
        items.append(f"clock from {now} ({NOW_VARIABLE})")
    elif setup.demo:
        items.append(f"clock from {DEMO_NOW:%Y-%m-%d %H:%M:%S} (the demo's)")
    try:
        durable, warnings = read_durable(setup.get(FOLDER))
    except ScheduleError:
        return " · ".join(
            [*items, f"{SCHEDULE_FILE.as_posix()} cannot be read ({cron_fix(setup)})"]
        )
    if durable:
        count = len(durable)
        items.append(
            f"{count} durable job{'s' if count != 1 else ''} in {SCHEDULE_FILE.as_posix()}"
        )
    if warnings:
        count = len(warnings)
        items.append(f"{count} warning{'s' if count != 1 else ''} ({cron_fix(setup)})")
    return " · ".join(items)


def cron_fix(setup: Setup) -> str:
    return f"python -m tutorial cron --chapter {setup.recipe.chapter} says why"

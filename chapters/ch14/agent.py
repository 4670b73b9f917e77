"""Chapter 14's agent: chapter 13's, which may schedule a prompt for later and stay for it.

    schedule  cron_create {cron, prompt, recurring?, durable?}, cron_delete {id},
              cron_list {}: a five-field cron expression in local time (cronsim does
              the arithmetic), a job of this run (in memory) or a durable one (in
              .tutorial/scheduled_tasks.json, one run of the folder fires it); at
              most 50 jobs; they change only the schedule and run without asking.
              --stay-for SECONDS (0: the run ends after its answer): after the
              answer the run stays, and a job that comes due is sent through chapter
              13's inbox as a new turn, `[scheduled <id>] <prompt>`, never in the
              middle of one; due slots of one job merge into one fire; the run ends
              when no job of it is left or the time is up. TUTORIAL_NOW starts the
              clock at an instant; a line under the spinner counts down; `cron`
              lists the folder's durable jobs

Children get no cron tools: only the main agent's turns end where a fire may enter.

Extends: chapters/ch13/agent.py
"""

from __future__ import annotations

from chapters.ch13.agent import RECIPE as CHAPTER_13
from chapters.ch14.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch14.parts import WALL_CLOCK, Scheduling
from shared.recipe import Demo

RECIPE = CHAPTER_13.extend(
    chapter=14,
    help=(
        "Chapter 14: chapter 13's agent, which may schedule prompts for later (cron_create); "
        "with --stay-for, the run stays after its answer and each one comes back as a new turn."
    ),
    demo=Demo(
        DEMO_PROMPT,
        lambda setup: demo_model(setup.get(WALL_CLOCK), stream=not setup.option("no_stream")),
        make_demo_workspace,
    ),
    add=[Scheduling()],
)

"""Chapter 13's agent: chapter 12's, whose commands may run while it thinks.

    shell       replaced: chapter 1's tool, name, key argument and side effect, so the
                policy, the hooks and the human judge a call as before, in the
                foreground or the background; `timeout` (1 to 600 s) and
                `run_in_background` (answers at once: `started background job bg1`).
                Every command runs in its own process group, stdin from the null
                device, output to files, so `server & echo started` returns at once
    background  --job-output-limit (50 MB), --background-wait (600 s); job_output and
                job_stop; a job's end posts one event to the run's inbox, which the
                main agent delivers once, just before a request (a user message, or
                appended to the last tool result where the provider needs it); a run
                whose model answers while a job runs waits for it; the run's end stops
                every job with its group; a line under the spinner; `jobs` lists them

Children get the shell and both job tools; the jobs they start are the run's, and
their ends reach the main agent.

Extends: chapters/ch12/agent.py
"""

from __future__ import annotations

from chapters.ch02.parts import WORKSPACE
from chapters.ch12.agent import RECIPE as CHAPTER_12
from chapters.ch13.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch13.parts import Background, BackgroundShell
from shared.recipe import Demo

RECIPE = CHAPTER_12.extend(
    chapter=13,
    help=(
        "Chapter 13: chapter 12's agent, whose commands may run in the background while it "
        "thinks; it is told once, just before a request, when one ends."
    ),
    demo=Demo(
        DEMO_PROMPT,
        lambda setup: demo_model(
            stream=not setup.option("no_stream"), folder=setup.get(WORKSPACE).root
        ),
        make_demo_workspace,
    ),
    replace={"shell": BackgroundShell()},
    add=[Background()],
)

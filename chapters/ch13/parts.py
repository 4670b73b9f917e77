"""Chapter 13's parts: commands that run while the agent thinks, and an inbox that tells it
when they end.

shell       replaces chapter 1's: the same tool to whatever judges a call (its name, key
            argument and side effect), with `timeout` and `run_in_background`; every
            command in its own process group, stdin from the null device, output to
            files (chapters/ch13/job_tools.py, chapters/ch13/jobs.py). For the agent
            and its children
background  --job-output-limit, --background-wait. Per run, shared by the agent and its
            children: one Inbox (chapters/ch13/inbox.py) and the run's jobs, whose ends
            post to it (chapters/ch13/run_jobs.py); job_output and job_stop. The main
            agent delivers the events before each request, waits for one when it
            answers while a job runs, delivers a resumed session's once, and stops every
            job when the run ends. Where the events go is the provider's profile, read
            when the command connects (chapters/ch13/providers.py); a line under the
            spinner (chapters/ch13/view.py); `jobs` lists a workspace's jobs
            (chapters/ch13/listing.py)

The two go together: the shell starts the jobs the background part's inbox hears of.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from chapters.ch01.parts import OUTPUT_LIMIT, RUNNER, SHELL
from chapters.ch13.inbox import DEFAULT_BACKGROUND_WAIT, MAX_BACKGROUND_WAIT
from chapters.ch13.jobs import DEFAULT_JOB_OUTPUT_LIMIT
from shared.parts import Build, Part, Setup, Subcommand
from shared.process import DEFAULT_OUTPUT_LIMIT
from shared.recipe import CONNECT, FEATURES, FOLDER, TOOLS, VIEWS
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch13.inbox import Inbox
    from chapters.ch13.providers import ProviderProfile
    from chapters.ch13.run_jobs import RunJobs
    from shared.completion import ModelClient

INBOX: Key[Inbox] = Key("the run's inbox: events from outside the loop")
JOBS: Key[RunJobs] = Key("the run's background jobs")
PROVIDER_PROFILE: Key[ProviderProfile] = Key("where the provider wants the events")


def run_jobs(build: Build) -> RunJobs:
    """The run's jobs and inbox, made once for the agent and its children."""
    from chapters.ch13.inbox import Inbox
    from chapters.ch13.run_jobs import RunJobs
    from shared.process import detect_shell

    inbox = build.shared(INBOX, Inbox)
    return build.shared(
        JOBS,
        lambda: RunJobs(
            build.get(FOLDER),
            build.find(SHELL, None) or detect_shell(),
            inbox,
            output_limit=build.setup.option("job_output_limit"),
            stream_limit=build.find(OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT),
        ),
    )


class BackgroundShell(Part):
    """`shell`, which may run a command in the background (chapters/ch13/job_tools.py)."""

    name = "shell"
    summary = "shell: run a command in the folder, or in the background (run_in_background)"

    def contribute(self, build: Build) -> None:
        from chapters.ch13.job_tools import make_background_shell

        jobs = run_jobs(build)
        tool = make_background_shell(
            build.get(FOLDER),
            jobs,
            runner=build.find(RUNNER, None),  # a test's; else the jobs' runner
            shell=jobs.shell,
            output_limit=jobs.stream_limit,
        )
        build.add(TOOLS, tool, children=True)


class Background(Part):
    """Jobs that run while the agent thinks, and the inbox that tells it when they end."""

    name = "background"
    summary = (
        "--job-output-limit, --background-wait; job_output, job_stop; a job's end reaches "
        "the model once; `jobs` lists them"
    )
    options = (
        click.Option(
            ["--job-output-limit"],
            type=click.IntRange(min=1),
            default=DEFAULT_JOB_OUTPUT_LIMIT,
            show_default=True,
            metavar="BYTES",
            help=(
                "Stop a command whose output passes this many bytes (a background job's log, "
                "or a foreground command's two streams together)."
            ),
        ),
        click.Option(
            ["--background-wait"],
            type=click.FloatRange(min=0, max=MAX_BACKGROUND_WAIT),
            default=DEFAULT_BACKGROUND_WAIT,
            show_default=True,
            metavar="SECONDS",
            help=(
                "When the model answers while a background job runs, wait this long for it to "
                "end and tell the model (0: do not wait)."
            ),
        ),
    )

    def setup(self, setup: Setup) -> None:
        from chapters.ch13.providers import ProviderProfile

        setup.provide(PROVIDER_PROFILE, ProviderProfile)

        def connecting(inner: Any) -> Any:
            def connect(settings: Any) -> ModelClient:
                """The model; the provider's profile is read here, before anything starts."""
                from chapters.ch13.providers import delivery_for

                chosen = delivery_for(settings.base_url, os.environ)
                profile = setup.get(PROVIDER_PROFILE)
                profile.delivery, profile.source = chosen.delivery, chosen.source
                return inner(settings)  # type: ignore[no-any-return]

            return connect

        setup.decorate(CONNECT, connecting)
        limit, wait = setup.option("job_output_limit"), setup.option("background_wait")

        def line() -> str:
            from chapters.ch13.providers import described

            waits = f"waits up to {wait:g}s for a job" if wait else "does not wait for jobs"
            return (
                f"background: output limit {limit:,} bytes · {waits} · "
                f"{described(setup.get(PROVIDER_PROFILE))}"
            )

        setup.add_banner("background", line)

    def contribute(self, build: Build) -> None:
        from chapters.ch13.inbox import DeliverEvents
        from chapters.ch13.job_tools import make_job_tools
        from chapters.ch13.run_jobs import JobsOfThisSession, StopJobsAtEnd
        from chapters.ch13.view import jobs_view, waiting_for_jobs

        jobs = run_jobs(build)
        for tool in make_job_tools(jobs, read_limit=jobs.stream_limit):
            build.add(TOOLS, tool, children=True)
        if build.child:
            return  # a child's jobs are the run's: the main agent hears of their ends
        deliver = DeliverEvents(
            jobs.inbox,
            delivery=build.setup.get(PROVIDER_PROFILE).delivery,  # known: the model connected
            background_wait=build.setup.option("background_wait"),
            waiting=waiting_for_jobs(jobs),
        )
        resumed = JobsOfThisSession(jobs.inbox, jobs.root)
        # Before the Stop hooks: a stop the inbox refuses is not a stop they judge.
        build.add(FEATURES, resumed, before=["hooks"])
        build.add(FEATURES, deliver, before=["hooks"])
        build.add(FEATURES, StopJobsAtEnd(jobs), phase=Phase.FIRST)  # whatever else fails
        build.add(VIEWS, lambda: jobs_view(jobs), label="jobs_view")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch13.listing import jobs_command

        return {
            "jobs": Subcommand(
                lambda recipe: jobs_command,
                help="List the background jobs of this workspace; nothing runs.",
                absent="Chapter {n} runs no background jobs; they run from chapter 13 on",
            )
        }

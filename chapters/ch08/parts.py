"""Chapter 8's parts: a context that never overflows.

    offload     --offload-over; the last finisher saves a result longer than that whole
                on disk, and the model reads its first and last part
                (chapters/ch08/offload.py); the shell keeps up to 1 MB of each stream
    context     --keep-results, --context-window, --compact-at; old results as stubs
                (chapters/ch08/old_results.py) and compaction before a request above
                `compact_at` of the window (chapters/ch08/compaction.py), last of the
                features, so they measure what will really be sent; the gauge under
                the spinner
    transcript  every message of the run on disk, before the plan's reminder
                (chapters/ch08/transcript.py)

Children get none of them: a child's history is fresh and short, ended by its own
max_turns. Its results go through the same pipeline, so a big one is saved too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from chapters.ch01.parts import OUTPUT_LIMIT
from chapters.ch02.parts import WORKSPACE
from chapters.ch08.compaction import DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW
from chapters.ch08.offload import DEFAULT_OFFLOAD_OVER, DEFAULT_SHOWN, TOOL_OUTPUT_LIMIT
from chapters.ch08.old_results import DEFAULT_KEEP_RESULTS
from shared.cli import count_option
from shared.parts import Build, Part, Setup
from shared.recipe import FEATURES, FINISH, VIEWS
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch08.compaction import Compactor
    from chapters.ch08.offload import Offloader
    from chapters.ch08.transcript import Transcript

MIN_WINDOW = 1_000  # tokens: below this not even the system prompt and the tools fit
RUN_ID: Key[str] = Key("the run's id")
OFFLOADER: Key[Offloader] = Key("where big results are saved")
TRANSCRIPT: Key[Transcript] = Key("the run's record of its messages")
COMPACTOR: Key[Compactor] = Key("the run's compactor")


class Offload(Part):
    """Big tool output saved whole; the model reads its ends."""

    name = "offload"
    summary = "--offload-over: a big result is saved whole; the model reads its ends"
    options = (
        count_option(
            "--offload-over",
            DEFAULT_OFFLOAD_OVER,
            "Save a tool result longer than this many characters to disk; "
            "the model reads its ends.",
            least=DEFAULT_SHOWN,
        ),
    )

    def setup(self, setup: Setup) -> None:
        setup.provide(OUTPUT_LIMIT, lambda: TOOL_OUTPUT_LIMIT)  # big output is saved, not cut
        over = setup.option("offload_over")
        setup.add_banner("context", lambda: f"offload over {over:,} characters")

    def contribute(self, build: Build) -> None:
        from chapters.ch08.offload import Offloader

        if build.child:
            return
        offloader = build.later(
            lambda: Offloader(
                build.get(WORKSPACE).root,
                build.run_console,
                over=build.setup.option("offload_over"),
            )
        )
        build.provide(OFFLOADER, offloader)
        build.add(FINISH, offloader, phase=Phase.LAST, label="Offloader")  # what the model reads


class Context(Part):
    """Old results as stubs, compaction before the window fills, and a gauge."""

    name = "context"
    summary = "--keep-results, --context-window, --compact-at: stubs, compaction, a gauge"

    def __init__(self, demo_sizes: tuple[int, int] | None = None) -> None:
        """`demo_sizes`: the stubs' requests and the window a --demo runs with, when not
        given, so that everything happens in a few turns."""
        self.demo_sizes = demo_sizes
        keep_default: int | None = DEFAULT_KEEP_RESULTS
        window_default: int | None = DEFAULT_CONTEXT_WINDOW
        keep_shown: bool | str = True
        window_shown: bool | str = True
        if demo_sizes:
            keep_default = window_default = None
            keep_shown = f"{DEFAULT_KEEP_RESULTS}; --demo: {demo_sizes[0]}"
            window_shown = f"{DEFAULT_CONTEXT_WINDOW}; --demo: {demo_sizes[1]}"
        self.options = (
            count_option(
                "--keep-results",
                keep_default,
                "Send a long tool result whole in this many requests, then as a short stub.",
                shown=keep_shown,
            ),
            count_option(
                "--context-window",
                window_default,
                "The model's context window, in tokens.",
                least=MIN_WINDOW,
                shown=window_shown,
            ),
            click.Option(
                ["--compact-at"],
                type=click.FloatRange(min=0, max=1, min_open=True),
                default=DEFAULT_COMPACT_AT,
                show_default=True,
                help="Compact the history before a request above this share of the window.",
            ),
        )

    def sizes(self, setup: Setup) -> tuple[int, int]:
        """The stubs' requests and the window of this command."""
        demo = self.demo_sizes if setup.demo and self.demo_sizes else None
        keep = setup.option("keep_results") or (demo[0] if demo else DEFAULT_KEEP_RESULTS)
        window = setup.option("context_window") or (demo[1] if demo else DEFAULT_CONTEXT_WINDOW)
        return keep, window

    def setup(self, setup: Setup) -> None:
        keep, window = self.sizes(setup)
        at = setup.option("compact_at")
        setup.add_banner(
            "context",
            lambda: f"context: {window:,} tokens, compact at {at:.0%}",
            before=["offload"],
        )
        setup.add_banner("context", lambda: f"stubs after {keep} requests", after=["offload"])

    def contribute(self, build: Build) -> None:
        from chapters.ch08.compaction import Compactor
        from chapters.ch08.old_results import OldResults
        from chapters.ch08.view import context_gauge

        if build.child:
            return
        keep, window = self.sizes(build.setup)
        at = build.setup.option("compact_at")
        compactor = build.later(
            lambda: Compactor(build.get(TRANSCRIPT), window=window, compact_at=at)
        )
        old_results = build.later(
            lambda: OldResults(build.get(OFFLOADER), build.get(TRANSCRIPT), keep=keep)
        )
        build.provide(COMPACTOR, compactor)
        build.add(FEATURES, old_results, phase=Phase.LAST, label="OldResults")
        build.add(FEATURES, compactor, phase=Phase.LAST, label="Compactor")
        build.add(
            VIEWS,
            lambda: context_gauge(compactor().meter, compactor().window, at),
            label="context_gauge",
        )


class TranscriptPart(Part):
    """Every message of the run, on disk, as it enters the history."""

    name = "transcript"
    summary = "every message of the run on disk: .tutorial/transcripts/<run id>.jsonl"

    def setup(self, setup: Setup) -> None:
        from chapters.ch08.transcript import TRANSCRIPTS_FOLDER, new_run_id

        if not setup.has(RUN_ID):
            setup.provide(RUN_ID, new_run_id)

        def shown() -> str:
            return (TRANSCRIPTS_FOLDER / f"{setup.get(RUN_ID)}.jsonl").as_posix()

        setup.add_banner("context", lambda: f"transcript: {shown()}", after=["context"])

    def contribute(self, build: Build) -> None:
        from chapters.ch08.transcript import Transcript

        if build.child:
            return
        given = build.find(TRANSCRIPT, None)
        transcript = given or build.later(
            lambda: Transcript(build.get(WORKSPACE).root, build.setup.get(RUN_ID))
        )
        build.provide(TRANSCRIPT, transcript)
        build.add(FEATURES, transcript, before=["plan"], label="Transcript")

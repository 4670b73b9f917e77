"""Chapter 8's agent: chapter 7's, with a context that never overflows.

    offload     the last finisher saves a big result whole on disk; the shell keeps up
                to 1 MB of each stream, since big output is now saved, not cut
    transcript  the run's messages on disk, before the plan's reminder
    context     old results as stubs, then compaction, last of the features; the
                context gauge under the spinner. `--demo` runs in a window of 4,500
                tokens and stubs after 2 requests unless they are given
    prompt      chapter 7's, plus where saved, stubbed and summarised text is
                (chapters/ch08/prompt.py)

Children get none of these (chapters/ch08/parts.py). The budget counts the loop's
requests; a compaction's summary request is the harness's, not the agent's.

Extends: chapters/ch07/agent.py
"""

from __future__ import annotations

from chapters.ch01.parts import FixedPrompt
from chapters.ch07.agent import RECIPE as CHAPTER_7
from chapters.ch07.parts import streamed_demo
from chapters.ch08.demo import (
    DEMO_CONTEXT_WINDOW,
    DEMO_KEEP_RESULTS,
    DEMO_PROMPT,
    demo_model,
    make_demo_workspace,
)
from chapters.ch08.parts import Context, Offload, TranscriptPart
from chapters.ch08.prompt import SYSTEM_PROMPT

RECIPE = CHAPTER_7.extend(
    chapter=8,
    help=(
        "Chapter 8: big tool output is saved to disk, old results become stubs, and the "
        "context is compacted before it overflows."
    ),
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace),
    replace={"prompt": FixedPrompt(SYSTEM_PROMPT, "chapters/ch08/prompt.py")},
    add=[Offload(), TranscriptPart(), Context(demo_sizes=(DEMO_KEEP_RESULTS, DEMO_CONTEXT_WINDOW))],
)

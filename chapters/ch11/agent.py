"""Chapter 11's agent: chapter 10's, which recovers where recovering is safe, and says so.

    recovery     each model in its own RetryingModel (the one owner of every retry), the
                 two in a FallbackModel, and outside them CompactOnOverflow, wired to
                 chapter 8's compactor; the pipeline inside GuardedCalls; the reply check
                 ContinueAfterLength; CurrentRun first and ReportAtEnd last of the
                 features; the recovery console, with each wait counted down
    tool-choice  --tools: only the chosen tools, for the agent and its children; without
                 task there are no children

Children recover as the parent does: they keep its wrapped model, its reply check and
its guarded pipeline, and write to the same RecoveryLog. A child does not compact.

Extends: chapters/ch10/agent.py
"""

from __future__ import annotations

from chapters.ch07.parts import streamed_demo
from chapters.ch10.agent import RECIPE as CHAPTER_10
from chapters.ch11.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch11.parts import Recovery, ToolChoice

RECIPE = CHAPTER_10.extend(
    chapter=11,
    help=(
        "Chapter 11: chapter 10's agent, which retries what passes, continues a cut answer, "
        "falls back to OPENAI_FALLBACK_MODEL, and notices when it repeats itself."
    ),
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace),
    add=[Recovery(), ToolChoice()],
)

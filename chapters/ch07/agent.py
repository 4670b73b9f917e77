"""Chapter 7's agent: chapter 6's, streaming its replies and running safe calls side by side.

streaming  the streaming model and console; --no-stream: chapter 1's plain model
parallel   the parallel pipeline with every part's authorizers and finishers:
           consecutive concurrency-safe calls run side by side, at most
           `max_parallel` at once; every other call is a barrier
budget     chapter 6's, counted under a lock (children side by side ask at once)
task       chapter 6's, safe when its agent has only safe tools
prompt     chapter 6's, plus: independent calls go in one reply (chapters/ch07/prompt.py)

Extends: chapters/ch06/agent.py
"""

from __future__ import annotations

from chapters.ch01.parts import FixedPrompt
from chapters.ch06.agent import RECIPE as CHAPTER_6
from chapters.ch07.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch07.parts import LockedBudget, Parallel, SideBySideTask, Streaming, streamed_demo
from chapters.ch07.prompt import SYSTEM_PROMPT

RECIPE = CHAPTER_6.extend(
    chapter=7,
    help="Chapter 7: the reply streams as it arrives; calls that only read run side by side.",
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace),
    replace={
        "prompt": FixedPrompt(SYSTEM_PROMPT, "chapters/ch07/prompt.py"),
        "budget": LockedBudget(),
        "task": SideBySideTask(),
    },
    add=[Streaming(), Parallel()],
)

"""Chapter 9's agent: chapter 8's, in a session that can be resumed, with notes that outlive it.

    sessions  the session log in the transcript's place, last of the features; a
              resumed session compacted first if it is longer than the window;
              --resume, `sessions`
    memory    memory_read (a read: nobody is asked) and memory_write (a write like any
              other: the gate judges it, the audit records it); the index after the
              system prompt, read once per run
    context   chapter 8's, at its real sizes in the demo too

`--demo` is three runs in one new folder (chapters/ch09/demo.py): a preference
saved as a memory, a new session that uses it, and that session resumed.

Extends: chapters/ch08/agent.py
"""

from __future__ import annotations

from chapters.ch07.parts import streamed_demo
from chapters.ch08.agent import RECIPE as CHAPTER_8
from chapters.ch08.parts import Context
from chapters.ch09.demo import DEMO_PROMPT, demo_model, make_demo_workspace, run_demo
from chapters.ch09.parts import Memory, Sessions

RECIPE = CHAPTER_8.extend(
    chapter=9,
    help=(
        "Chapter 9: every run is a session you can resume, and memories saved in one "
        "session are there in the next."
    ),
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace, script=run_demo),
    remove=["transcript"],
    replace={"context": Context()},
    add=[Sessions(), Memory()],
)

"""Chapter 10's agent: chapter 9's, with a system prompt assembled for where it runs, and skills.

    skills            load_skill, after chapter 9's tools (a read: nobody is asked); the
                      skills folders protected like the settings files
    assembled-prompt  the system prompt, assembled once per run from files, the tools'
                      names and the machine, chapter 9's memory index one of its sections;
                      `python -m tutorial prompt` prints it
    memory            chapter 9's tools, its index now a section of the assembled prompt

Children: as in chapter 9, no memory tools and no load_skill, since a child's prompt is
its definition's, with no skills index.

Extends: chapters/ch09/agent.py
"""

from __future__ import annotations

from chapters.ch07.parts import streamed_demo
from chapters.ch09.agent import RECIPE as CHAPTER_9
from chapters.ch09.parts import Memory
from chapters.ch10.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch10.parts import AssembledPrompt, Skills

RECIPE = CHAPTER_9.extend(
    chapter=10,
    help=(
        "Chapter 10: the system prompt is assembled for this folder (AGENTS.md, skills, "
        "memory, environment), and skills load when a task needs them."
    ),
    demo=streamed_demo(DEMO_PROMPT, demo_model, make_demo_workspace),
    replace={"memory": Memory(index_in_prompt=False)},
    add=[Skills(), AssembledPrompt()],
)

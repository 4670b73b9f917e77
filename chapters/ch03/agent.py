"""Chapter 3's agent: chapter 2's, with a permission policy in step 4 instead of asking always.

policy  --mode, --allow, --deny over the settings files; glob and grep skip what
        a read deny rule covers; `permissions check` (chapters/ch03/parts.py)
gate    replaces chapter 1's ask-human: the policy decides, every decision is
        audited, only "ask" reaches the human (chapters/ch03/gate.py); the
        outcome of each call that ran is audited too

Extends: chapters/ch02/agent.py
"""

from __future__ import annotations

from chapters.ch02.agent import RECIPE as CHAPTER_2
from chapters.ch03.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch03.parts import Gate, PolicyPart
from shared.recipe import Demo

RECIPE = CHAPTER_2.extend(
    chapter=3,
    help="Chapter 3: a permission policy decides; only its 'ask' reaches you; all is audited.",
    demo=Demo(DEMO_PROMPT, lambda setup: demo_model(), make_demo_workspace),
    replace={"ask-human": Gate()},
    add=[PolicyPart()],
)

"""Chapter 4's agent: chapter 3's, with the user's hooks at four of the loop's seams.

hooks  UserPromptSubmit and Stop hooks as features (chapters/ch04/loop_hooks.py);
       PreToolUse hooks before the gate, their say inside its policy; PostToolUse
       hooks after the call ran (chapters/ch04/tool_hooks.py); the programs they
       run protected like the settings files (chapters/ch04/parts.py)

Extends: chapters/ch03/agent.py
"""

from __future__ import annotations

from chapters.ch03.agent import RECIPE as CHAPTER_3
from chapters.ch04.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch04.parts import HooksPart
from shared.recipe import Demo

RECIPE = CHAPTER_3.extend(
    chapter=4,
    help="Chapter 4: your own programs (hooks) at the loop's seams, around chapter 3's policy.",
    demo=Demo(DEMO_PROMPT, lambda setup: demo_model(), make_demo_workspace),
    add=[HooksPart()],
)

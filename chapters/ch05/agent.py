"""Chapter 5's agent: chapter 4's, plus a plan the model keeps and the harness watches.

plan    todo_write on one `TodoPlan`, after chapter 2's tools; the plan's reminder
        and its note on open items after chapter 4's hooks, the Stop event now
        carrying the plan; the plan under the spinner (chapters/ch05/parts.py)
prompt  chapter 2's, plus when to keep a plan (chapters/ch05/prompt.py)
demo    paced in a terminal, so that the plan can be watched

Extends: chapters/ch04/agent.py
"""

from __future__ import annotations

import sys

from chapters.ch01.parts import FixedPrompt
from chapters.ch04.agent import RECIPE as CHAPTER_4
from chapters.ch05.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch05.parts import PlanPart
from chapters.ch05.prompt import SYSTEM_PROMPT
from shared.console import is_terminal
from shared.recipe import Demo
from shared.scripted import ScriptedModel

DEMO_PAUSE = 0.8  # seconds per scripted reply in a terminal, to watch the plan under the spinner


def paced_demo_model() -> ScriptedModel:
    return demo_model(pause=DEMO_PAUSE if is_terminal(sys.stderr) else 0.0)


RECIPE = CHAPTER_4.extend(
    chapter=5,
    help="Chapter 5: the agent keeps a todo plan (todo_write); you watch it under the spinner.",
    demo=Demo(DEMO_PROMPT, lambda setup: paced_demo_model(), make_demo_workspace),
    replace={"prompt": FixedPrompt(SYSTEM_PROMPT, "chapters/ch05/prompt.py")},
    add=[PlanPart()],
)

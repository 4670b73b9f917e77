"""Chapter 6's agent: chapter 5's, plus a `task` tool that runs a sub-agent in a fresh context.

agents    the definitions the task tool can start (chapters/ch06/definitions.py)
budget    one request budget for the agent and all its children, their first feature
task      task, last of the tools; each agent's name first in the Stop event
children  made from this recipe (`contribute` again, for the child): the same model
          and call pipeline (policy, hooks, audit, human); their own history,
          max_turns (never more than the parent's), and what the parts give a
          child: chapter 2's tools with a ledger of their own, todo_write on a
          fresh plan, never task; the budget and the Stop hooks
prompt    chapter 5's, plus when to hand a side task to a sub-agent (chapters/ch06/prompt.py)

Extends: chapters/ch05/agent.py
"""

from __future__ import annotations

from chapters.ch01.parts import FixedPrompt
from chapters.ch05.agent import RECIPE as CHAPTER_5
from chapters.ch06.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch06.parts import AgentsPart, BudgetPart, TaskPart
from chapters.ch06.prompt import SYSTEM_PROMPT
from shared.recipe import Demo

RECIPE = CHAPTER_5.extend(
    chapter=6,
    help="Chapter 6: the task tool runs a sub-agent in a fresh context; only its answer returns.",
    demo=Demo(DEMO_PROMPT, lambda setup: demo_model(), make_demo_workspace),
    replace={"prompt": FixedPrompt(SYSTEM_PROMPT, "chapters/ch06/prompt.py")},
    add=[AgentsPart(), BudgetPart(), TaskPart()],
)

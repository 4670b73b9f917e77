"""Chapter 1's agent, as a recipe: the loop's parts, each from the module that defines it.

    folder     the current folder: where commands run
    shell      the one tool (chapters/ch01/shell_tool.py)
    ask-human  step 4: ask the human about every call with a side effect
               (chapters/ch01/approve.py)
    prompt     what this loop is, in a few lines (chapters/ch01/prompt.py)
    loop       a task is one run of the loop (chapters/ch01/loop.py)

The parts are in chapters/ch01/parts.py; shared/recipe.py makes the command and
the `AgentSpec` from them. Every later chapter's recipe is this one, extended:
`python -m tutorial recipe --chapter N` prints what it resolves to.
"""

from __future__ import annotations

from chapters.ch01.demo import DEMO_PROMPT, demo_model
from chapters.ch01.parts import AskHumanPart, FixedPrompt, Folder, Loop, ShellTool
from chapters.ch01.prompt import SYSTEM_PROMPT
from shared.recipe import Demo, Recipe

RECIPE = Recipe(
    chapter=1,
    help="Chapter 1: the agent loop with one tool, shell.",
    demo=Demo(DEMO_PROMPT, lambda setup: demo_model()),
    parts=(
        Folder(),
        ShellTool(),
        AskHumanPart(),
        FixedPrompt(SYSTEM_PROMPT, "chapters/ch01/prompt.py"),
        Loop(),
    ),
)

"""Chapter 2's agent: chapter 1's, with five file tools that cannot leave the workspace.

workspace   replaces chapter 1's folder: --workspace, else the current folder
file-tools  read_file, write_file, edit_file, glob, grep, before chapter 1's shell,
            all bound to one `Workspace` (chapters/ch02/parts.py)
prompt      chapter 1's rules plus how to use the file tools (chapters/ch02/prompt.py)

Extends: chapters/ch01/agent.py
"""

from __future__ import annotations

from chapters.ch01.agent import RECIPE as CHAPTER_1
from chapters.ch01.parts import FixedPrompt
from chapters.ch02.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch02.parts import FileTools, WorkspacePart
from chapters.ch02.prompt import SYSTEM_PROMPT
from shared.recipe import Demo

RECIPE = CHAPTER_1.extend(
    chapter=2,
    help="Chapter 2: file tools that cannot leave the workspace, plus the shell.",
    demo=Demo(DEMO_PROMPT, lambda setup: demo_model(), make_demo_workspace),
    replace={
        "folder": WorkspacePart(),
        "prompt": FixedPrompt(SYSTEM_PROMPT, "chapters/ch02/prompt.py"),
    },
    add=[FileTools()],
)

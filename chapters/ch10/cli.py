"""The command line of chapter 10, so far: `python -m tutorial prompt --chapter 10`.

`chapter_prompt` builds the prompt the way a run will: skills loaded once,
then the sections for the tools the agent has. Those tools are, for now,
chapter 6's (the last composed chapter's) plus load_skill, and there is no
memory index yet; the chapter's composition module takes both over.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from chapters.ch02.workspace import Workspace
from chapters.ch06.agent import chapter_tools as delegating_tools
from chapters.ch10.prompt import read_system_prompt
from chapters.ch10.sections import SystemPrompt
from chapters.ch10.show_prompt import make_prompt_command
from chapters.ch10.skill_tool import LOAD_SKILL
from chapters.ch10.skills import load_skills


def chapter_prompt(workspace: Workspace, home: Path, today: date) -> SystemPrompt:
    """The system prompt of a run in `workspace`: the same function the run calls."""
    skills = load_skills(workspace.root, home)
    tools = (*delegating_tools(workspace).names, LOAD_SKILL)
    return read_system_prompt(workspace.root, home, today, tools=tools, skills=skills)


prompt_command = make_prompt_command(chapter_prompt)

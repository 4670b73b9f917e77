"""Helpers for chapter 10's tests: skills and instruction files on disk, a memory double,
and the prompt built the way a run builds it, for a date the test chooses."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from chapters.ch10.environment import read_environment
from chapters.ch10.prompt import read_system_prompt
from chapters.ch10.sections import SystemPrompt
from chapters.ch10.skills import SKILLS_FOLDER, load_skills

TODAY = date(2026, 5, 1)
TOOLS = (
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "shell",
    "todo_write",
    "task",
    "load_skill",
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")  # exactly these bytes, on any OS
    return path


def skill_text(
    name: str, description: str = "Does one thing. Use when asked to.", body: str = "Do it."
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def project_skill(workspace: Path, name: str, text: str | None = None) -> Path:
    """A skill in the workspace's `.tutorial/skills/<name>/SKILL.md`; its folder."""
    write(workspace / SKILLS_FOLDER / name / "SKILL.md", text or skill_text(name))
    return workspace / SKILLS_FOLDER / name


def user_skill(home: Path, name: str, text: str | None = None) -> Path:
    write(home / SKILLS_FOLDER / name / "SKILL.md", text or skill_text(name))
    return home / SKILLS_FOLDER / name


@dataclass
class FixedMemory:
    """Stands in for chapter 9's memory index: a source, a text, and how often it was asked."""

    index: str = "- tabs: the user wants tabs, not spaces, in Python files"
    source: str = ".tutorial/memory/MEMORY.md"
    asked: int = 0

    def text(self) -> str:
        self.asked += 1
        return self.index


def build(
    workspace: Path,
    home: Path,
    today: date = TODAY,
    *,
    memory: FixedMemory | None = None,
    tools: Collection[str] = TOOLS,
) -> SystemPrompt:
    """The prompt a run in `workspace` would send on `today`: everything read afresh."""
    skills = load_skills(workspace, home)
    environment = read_environment(workspace, today)
    return read_system_prompt(
        workspace, home, environment, tools=tools, skills=skills, memory=memory
    )


@dataclass
class Folders:
    workspace: Path
    home: Path


def folders(tmp_path: Path) -> Folders:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home").mkdir(parents=True, exist_ok=True)
    return Folders(tmp_path / "ws", tmp_path / "home")

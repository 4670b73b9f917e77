"""The chapters of the tutorial: what each teaches, and which ones exist yet.

Only this table knows where a chapter lives; the dispatcher imports a chapter
when it is run, so `python -m tutorial --help` loads no chapter at all.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from shared.parts import Subcommand
    from shared.recipe import Recipe

CHAPTERS_ROOT = Path(__file__).resolve().parent.parent / "chapters"
COMMANDS = "commands"  # the listing's section that names the dispatcher subcommands
# One row of it: the words, the part that brings them (its chapter), the help line.
_COMMAND_ROW = re.compile(r"  (?P<words>\S+(?: \S+)*) {2,}\S+ \(ch\d\d\)  (?P<help>.+)")


@dataclass(frozen=True)
class ListedCommand:
    """A dispatcher subcommand as a chapter's recipe listing names it: read, not imported."""

    words: str  # after `python -m tutorial`: "agents", "permissions check"; "permissions": a group
    chapter: int  # the chapter whose listing names it
    help: str


@dataclass(frozen=True)
class Chapter:
    number: int
    title: str
    title_zh: str
    ready: bool = False

    @property
    def package(self) -> str:
        return f"chapters.ch{self.number:02d}"

    @property
    def folder(self) -> Path:
        return CHAPTERS_ROOT / f"ch{self.number:02d}"

    @property
    def listing(self) -> Path:
        """The recipe's listing, checked in beside it (scripts/write_recipes.py writes it,
        tests/test_recipe_listing.py fails when it is not what the recipe resolves to)."""
        return self.folder / "recipe.txt"

    def recipe(self) -> Recipe:
        """The chapter's recipe (chapters/chNN/agent.py), imported only now."""
        recipe: Recipe = importlib.import_module(f"{self.package}.agent").RECIPE
        return recipe

    def command(self, words: str = "") -> click.Command | None:
        """The chapter's command, or the subcommand its parts bring under `words`
        ("agents", "permissions check"): None if it has none."""
        recipe = self.recipe()
        return recipe.subcommands().get(words) if words else recipe.command()

    def subcommand(self, words: str) -> Subcommand | None:
        """What the part that brings `words` declares of it (its messages), or None."""
        found = None
        for part in self.recipe().parts:
            found = part.commands().get(words, found)  # the last part's, as `subcommands()`
        return found

    def listed_commands(self) -> list[ListedCommand]:
        """The dispatcher subcommands its parts bring (and their groups), as its checked-in
        listing names them: nothing is imported."""
        if not self.listing.is_file():
            return []
        lines = self.listing.read_text(encoding="utf-8").splitlines()
        if COMMANDS not in lines:
            return []
        found = []
        for line in lines[lines.index(COMMANDS) + 1 :]:
            row = _COMMAND_ROW.fullmatch(line)
            if row is None:  # the next section
                break
            found.append(ListedCommand(row["words"], self.number, row["help"]))
        return found


CHAPTERS = (
    Chapter(1, "the agent loop", "智能体循环", ready=True),
    Chapter(2, "file tools and a path boundary", "文件工具与路径边界", ready=True),
    Chapter(
        3, "permission policy, audit, four-state decisions", "权限策略、审计与四态决策", ready=True
    ),
    Chapter(4, "hooks", "钩子", ready=True),
    Chapter(5, "a todo plan", "待办计划", ready=True),
    Chapter(6, "sub-agents", "子智能体", ready=True),
    Chapter(7, "streaming and parallel tool calls", "流式输出与并行工具调用", ready=True),
    Chapter(8, "compaction and offloading big output", "上下文压缩与大输出落盘", ready=True),
    Chapter(9, "memory across sessions", "跨会话记忆", ready=True),
    Chapter(10, "system prompt assembly and skills", "系统提示词组装与技能", ready=True),
    Chapter(11, "error recovery", "错误恢复", ready=True),
    Chapter(12, "a persistent task graph", "持久化任务图", ready=True),
    Chapter(13, "background tasks", "后台任务", ready=True),
    Chapter(14, "scheduling", "调度", ready=True),
    Chapter(15, "agent teams", "智能体团队", ready=True),
    Chapter(16, "team protocols", "团队协议", ready=True),
    Chapter(17, "autonomous agents", "自主智能体"),
    Chapter(18, "worktree isolation", "工作树隔离"),
    Chapter(19, "MCP tool pools", "MCP 工具池"),
    Chapter(20, "the capstone: one agent composing them all", "终章：组合一切的智能体"),
)


def listed_commands() -> dict[str, ListedCommand]:
    """Every dispatcher subcommand (and group) the ready chapters' parts bring, by its words:
    as the first ready chapter whose listing names it names it, in the order they come."""
    found: dict[str, ListedCommand] = {}
    for chapter in CHAPTERS:
        if chapter.ready:
            for listed in chapter.listed_commands():
                found.setdefault(listed.words, listed)
    return found


class UnknownChapterError(click.UsageError):
    pass


def find_chapter(number: int) -> Chapter:
    """The chapter, or a usage error that says which chapters can run."""
    ready = ", ".join(str(c.number) for c in CHAPTERS if c.ready)
    for chapter in CHAPTERS:
        if chapter.number == number:
            if not chapter.ready:
                raise UnknownChapterError(
                    f"Chapter {number} ({chapter.title}) is planned but not written yet. "
                    f"Chapters you can run: {ready}"
                )
            return chapter
    raise UnknownChapterError(
        f"Unknown chapter: {number}. The tutorial has chapters 1-{len(CHAPTERS)}; "
        f"chapters you can run: {ready}"
    )

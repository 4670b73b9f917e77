"""Chapter 10's parts: a system prompt assembled for where it runs, and skills.

skills           load_skill: a skill's instructions when the task needs them
                 (chapters/ch10/skill_tool.py), a read; the skills folders become
                 control files
assembled-prompt the system prompt, assembled once per run from sections in a fixed
                 order (chapters/ch10/prompt.py): identity; a line per tool the agent
                 has; AGENTS.md or CLAUDE.md and ~/.tutorial/AGENTS.md; the skills
                 index; chapter 9's memory index; the environment and `today` last.
                 `python -m tutorial prompt` prints it. What could not be read is one
                 notice each, and the run goes on
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from chapters.ch02.parts import WORKSPACE
from chapters.ch03.parts import POLICY
from chapters.ch09.parts import MEMORY
from shared.parts import Build, Part, Setup, Subcommand
from shared.recipe import HOME, PROMPT, TOOLS, home_folder, listed_tools
from shared.slots import Key

if TYPE_CHECKING:
    from chapters.ch02.workspace import Workspace
    from chapters.ch10.environment import Environment
    from chapters.ch10.sections import SystemPrompt
    from chapters.ch10.skills import SkillCatalog
    from shared.recipe import Recipe

SKILLS: Key[SkillCatalog] = Key("the skills")
TODAY: Key[date] = Key("today")
ENVIRONMENT: Key[Environment] = Key("what the prompt says of this machine, folder and day")


class Skills(Part):
    """Skills: an index in the prompt, the instructions on demand."""

    name = "skills"
    summary = "load_skill: a skill's instructions when the task needs them"

    def setup(self, setup: Setup) -> None:
        from chapters.ch10.skills import load_skills, skill_folders

        def root() -> Path:
            return setup.get(WORKSPACE).root

        setup.provide(SKILLS, lambda: load_skills(root(), home_folder(setup)))
        setup.decorate(POLICY, lambda p: p.protecting(skill_folders(root(), home_folder(setup))))

    def contribute(self, build: Build) -> None:
        from chapters.ch10.skill_tool import make_load_skill_tool
        from chapters.ch10.skills import SkillCatalog

        skills = SkillCatalog({}) if build.listing else build.get(SKILLS)
        build.add(TOOLS, make_load_skill_tool(skills, build.get(WORKSPACE)))


class AssembledPrompt(Part):
    """The system prompt, read once per run from the files and the machine."""

    name = "assembled-prompt"
    summary = "the system prompt, assembled once per run from files and the machine"

    def setup(self, setup: Setup) -> None:
        from chapters.ch10.environment import read_environment

        today = setup.get(TODAY) if setup.has(TODAY) else date.today()
        setup.provide(ENVIRONMENT, lambda: read_environment(setup.get(WORKSPACE).root, today))

    def contribute(self, build: Build) -> None:
        from chapters.ch10.show_prompt import summary

        if build.child:
            return

        def prompt(names: Collection[str]) -> str:  # once, before the first request
            console = build.run_console
            made = assembled(build.setup, names)
            console.info(summary(made))
            for warning in made.warnings:
                console.notice(f"harness: {warning}")
            return made.text

        build.add(PROMPT, prompt, label="chapters/ch10/prompt.py")

    def commands(self) -> Mapping[str, Subcommand]:
        return {
            "prompt": Subcommand(
                prompt_command,
                help="Print the system prompt a chapter's run would send from here; nothing runs.",
                absent="Chapter {n} sends a fixed prompt; it is assembled from chapter 10 on",
            )
        }


def assembled(setup: Setup, tools: Collection[str]) -> SystemPrompt:
    """The run's system prompt, read now, with chapter 9's memory index as its memory section.

    What could not be read is in `warnings`: the prompt's own (a skill left out, an
    unreadable AGENTS.md) and the memory files the index left out.
    """
    from chapters.ch09.memory import MemoryIndex
    from chapters.ch10.prompt import read_system_prompt

    index = MemoryIndex(setup.get(MEMORY))
    prompt = read_system_prompt(
        setup.get(WORKSPACE).root,
        home_folder(setup),
        setup.get(ENVIRONMENT),
        tools=tools,
        skills=setup.get(SKILLS),
        memory=index,
    )
    return replace(prompt, warnings=(*prompt.warnings, *index.warnings))


def prompt_command(recipe: Recipe) -> click.Command:
    """`prompt`: the prompt a run with these options would send from here; nothing runs.
    Options of parts that change the prompt (`changes_prompt`) are the command's too."""
    from chapters.ch10.show_prompt import make_prompt_command

    changing = [p for p in recipe.parts if getattr(p, "changes_prompt", False)]

    def prompt_for(workspace: Workspace, home: Path, today: date, **chosen: Any) -> SystemPrompt:
        options = {"workspace": workspace.root, **chosen}
        setup = recipe.setup(options, {HOME: home, TODAY: today})
        return assembled(setup, listed_tools(setup, filtered=True).names)

    decorators = [_as_decorator(o) for p in changing for o in p.options]
    return make_prompt_command(prompt_for, options=decorators)


def _as_decorator(option: click.Parameter) -> Callable[[Any], Any]:
    def decorate(function: Any) -> Any:
        function.__click_params__ = [*getattr(function, "__click_params__", []), option]
        return function

    return decorate

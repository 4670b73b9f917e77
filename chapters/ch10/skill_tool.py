"""load_skill: a skill's instructions, on demand, and the names of the files beside them.

The system prompt carries only each skill's name and description; this tool is
the second step of the disclosure. It returns the body of the skill's
SKILL.md and lists the other files in its folder, which the model opens with
read_file only if the instructions send it there (the third step). It reads
and changes nothing, so nobody is asked and it may run beside other reads.
An unknown name is a failed result that lists the skills there are, so the
model can correct itself in one more call.

A skill of yours (~/.tutorial/skills/) is outside the workspace, and the
workspace boundary keeps read_file out of it; its files are listed with that
said, rather than as paths that would be refused.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch02.path_text import printable
from chapters.ch02.workspace import Workspace
from chapters.ch10.sections import cut
from chapters.ch10.skills import SKILL_FILE, Skill, SkillCatalog
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

LOAD_SKILL = "load_skill"
INSTRUCTIONS_CAP = 20_000  # characters of a SKILL.md body returned; the rest is cut with a note
MAX_FILES = 50  # other files listed; more are counted


class LoadSkillArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, description="The skill's name, as listed under Skills.")


def make_load_skill_tool(catalog: SkillCatalog, workspace: Workspace) -> PydanticTool:
    """`load_skill {name}` over the skills found when the run started."""

    def load(args: LoadSkillArgs) -> ToolResult:
        skill = catalog.get(args.name)
        if skill is None:
            there = ", ".join(catalog.names) or "none (no skill was found)"
            return ToolResult.failed(
                "unknown_skill",
                f"there is no skill named {args.name!r}. The skills are: {there}.",
            )
        return ToolResult.success(describe(skill, workspace))

    return PydanticTool(
        name=LOAD_SKILL,
        description=(
            "Load a skill: the instructions for one kind of task, listed under Skills in the "
            "system prompt. Returns the instructions and the other files in the skill's folder."
        ),
        args_model=LoadSkillArgs,
        side_effect=SideEffect.READ,
        run=load,
        key=KeyArgument("name", KeyKind.TEXT),  # a rule such as load_skill(deploy) matches it
        concurrency_safe=True,
    )


def describe(skill: Skill, workspace: Workspace) -> str:
    """The result: which skill, its instructions, then its other files."""
    instructions = cut(skill.instructions, INSTRUCTIONS_CAP, SKILL_FILE)
    return (
        f"ok: skill {skill.name} ({skill.source}). Follow these instructions:\n\n"
        f"{instructions}\n\n{other_files(skill, workspace)}"
    )


def other_files(skill: Skill, workspace: Workspace) -> str:
    """The files beside SKILL.md, as paths read_file takes when it can reach them."""
    try:
        folder = Workspace(skill.folder)  # walk: no VCS folders, no links that lead out
        files = [printable(shown) for _, shown in folder.walk(folder.root) if shown != SKILL_FILE]
    except OSError as error:
        return f"Its other files could not be listed ({error})."
    if not files:
        return "The skill has no other files."
    more = len(files) - MAX_FILES
    if workspace.contains(folder.root):
        prefix = workspace.relative(folder.root) + "/"
        lines = [f"- {prefix}{shown}" for shown in files[:MAX_FILES]]
        head = "Other files in its folder (open one with read_file when the instructions say so):"
    else:
        lines = [f"- {shown}" for shown in files[:MAX_FILES]]
        where = skill.source.removesuffix(SKILL_FILE)
        head = (
            f"Other files in its folder, {where}, which is outside the workspace: read_file "
            "cannot open them, so ask the user if the instructions need one:"
        )
    if more > 0:
        lines.append(f"- ... and {more} more")
    return "\n".join([head, *lines])

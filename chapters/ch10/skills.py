"""Skills: instructions for one kind of task, which the model loads only when a task needs them.

A skill is a folder with a `SKILL.md`, in the Agent Skills format that Claude
Code and other agents read:

    .tutorial/skills/conventional-commit/
        SKILL.md          front matter, then the instructions:
                              ---
                              name: conventional-commit       the folder's name
                              description: What it does, and when to use it.
                              ---
                              # Writing a conventional commit message ...
        examples.md       any other files: the instructions may point at them

    .tutorial/skills/<name>/      in the workspace: the project's skills
    ~/.tutorial/skills/<name>/    in your home folder: yours, for every project

A SKILL.md is read as read_file would read it: a link that leads out of the
workspace (for yours, out of the home folder) is refused, so load_skill never
returns what read_file would not; so is anything but a regular file, and a file
over `MAX_SKILL_BYTES`. Each is one warning; the other skills go on.

The project's skill wins on a name clash. What costs what (progressive
disclosure): every request carries each skill's name and description (the
index, `SkillCatalog.index`); `load_skill` returns the instructions when the
model asks for them; the other files are read only if the instructions send
the model to them.

The rules (`skill_from`), each broken one named in the warning:

    name          1 to 64 characters: lowercase letters, digits and hyphens, not
                  at the start or the end, never two in a row; equal to the folder's name
    description   1 to 1,024 characters
    instructions  some text below the closing --- line

The format allows other fields (`license`, `compatibility`, `metadata`,
`allowed-tools`), and other agents add their own. None of them is read here,
whatever its shape (a `metadata:` map, a `license: >` folded over two lines):
`read_fields` blanks their lines, and chapter 6's parser
(chapters/ch06/frontmatter.py) reads what is left, `name` and `description`,
with its limits: one line each, no `>` folded description. A line number in a
warning is still the file's. A skill that breaks a rule is left out with one
warning naming its file and the rule; the other skills and the run go on. A
broken skill should cost its author a warning, not cost every user the agent.

A skill's instructions are followed as the user's own, so both skills folders
are control files of the harness (chapters/ch03/control.py): the agent writes
into them only with a human's yes (`skill_folders`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chapters.ch03.control import ControlFile, in_workspace_and_home
from chapters.ch06.frontmatter import FENCE, FrontMatterError, Value, parse_front_matter
from chapters.ch06.written_files import (
    WORKSPACE,
    YOUR_HOME,
    UnreadableFile,
    as_text,
    read_written_file,
    real_inside,
    too_large,
)

SKILLS_FOLDER = Path(".tutorial") / "skills"  # below the workspace, and below your home folder
SKILL_FILE = "SKILL.md"
SOURCE = f"~/{SKILLS_FOLDER.as_posix()}/ and {SKILLS_FOLDER.as_posix()}/"  # both, always looked in
MAX_NAME = 64
MAX_DESCRIPTION = 1024
# Of a SKILL.md read: its front matter and the 20,000 characters load_skill returns fit in
# 128 KB even in 4-byte characters; a bigger file is left out with a warning, unread.
MAX_SKILL_BYTES = 128 * 1024
_NAME_CHARACTERS = re.compile(r"[a-z0-9-]+")
READ_FIELDS = ("name", "description")  # all a run needs of SKILL.md's front matter
_TOP_LEVEL_KEY = re.compile(r"(?P<key>[A-Za-z_][\w-]*):(?:\s|$)")
HEADING = "# Skills"
INTRO = (
    "A skill holds instructions for one kind of task. When the task matches a skill's "
    "description, call load_skill with its name before you start, and follow what it returns."
)


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    instructions: str  # the body of SKILL.md: what load_skill returns
    folder: Path  # where its other files are
    source: str  # its SKILL.md as people write it: ".tutorial/skills/x/SKILL.md", "~/..."


@dataclass(frozen=True)
class SkillCatalog:
    """The skills a run can load, by name in name order; the ones hidden; what was wrong."""

    skills: Mapping[str, Skill]
    hidden: tuple[Skill, ...] = ()  # a skill of yours whose name a project skill took
    warnings: tuple[str, ...] = ()  # one per skill left out: its file and the broken rule

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.skills)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def index(self) -> str:
        """The section's text: how to use skills, then `- name: description` per skill."""
        if not self.skills:
            return ""
        lines = [f"- {skill.name}: {skill.description}" for skill in self.skills.values()]
        return "\n".join([HEADING, INTRO, *lines])


def skill_folders(workspace: Path, home: Path) -> list[ControlFile]:
    """Where skills are loaded from, for the policy's control files."""
    return in_workspace_and_home(workspace, home, SKILLS_FOLDER, folder=True)


def load_skills(workspace: Path, home: Path) -> SkillCatalog:
    """Your skills, then the project's; the project's wins a name both use."""
    by_name: dict[str, Skill] = {}
    hidden: list[Skill] = []
    warnings: list[str] = []
    seen: set[Path] = set()
    for base, prefix, where in [(home, "~/", YOUR_HOME), (workspace, "", WORKSPACE)]:
        folder = base / SKILLS_FOLDER
        if not folder.is_dir() or folder.resolve() in seen:  # run in your home: one folder
            continue
        seen.add(folder.resolve())
        shown = prefix + SKILLS_FOLDER.as_posix()
        try:
            real_inside(base, SKILLS_FOLDER, where=where)
        except UnreadableFile as error:
            warnings.append(f"{shown}: cannot be read ({error}); its skills are left out")
            continue
        skills, problems = read_skills_folder(folder, shown, base=base, where=where)
        warnings += problems
        for skill in skills:
            if skill.name in by_name:
                hidden.append(by_name[skill.name])
            by_name[skill.name] = skill
    ordered = {name: by_name[name] for name in sorted(by_name)}  # the same bytes on every OS
    return SkillCatalog(ordered, tuple(hidden), tuple(warnings))


def read_skills_folder(
    folder: Path, shown: str, *, base: Path | None = None, where: str = "its folder"
) -> tuple[list[Skill], list[str]]:
    """Every skill directly in `folder`, and one warning per entry that is not a good one.

    A SKILL.md is read only if its real path is inside `base` (by default `folder`
    itself), which `where` names in the warning: "the workspace".
    """
    skills: list[Skill] = []
    warnings: list[str] = []
    try:
        entries = sorted(folder.iterdir(), key=lambda path: path.name)
    except OSError as error:
        return [], [f"{shown}: cannot be read ({error}); its skills are left out"]
    for entry in entries:
        if entry.name.startswith("."):
            continue  # .DS_Store, .git: not skills, not mistakes
        if not entry.is_dir():
            if entry.suffix.lower() == ".md":
                warnings.append(
                    f"{shown}/{entry.name}: a skill is a folder with a {SKILL_FILE}, "
                    f"not a single file; try {shown}/{entry.stem}/{SKILL_FILE}"
                )
            continue
        skill = read_skill(
            entry, f"{shown}/{entry.name}/{SKILL_FILE}", base=base or folder, where=where
        )
        if isinstance(skill, str):
            warnings.append(skill)
        else:
            skills.append(skill)
    return skills, warnings


def read_skill(
    folder: Path, shown: str, *, base: Path | None = None, where: str = "its folder"
) -> Skill | str:
    """The skill in `folder`, or one warning: its file, the rule broken, and that it is left out.

    SKILL.md is read as read_file would read it (chapters/ch06/written_files.py): only
    if its real path is inside `base` (by default `folder`), only a regular file, and
    no more than `MAX_SKILL_BYTES` of it.
    """
    base = base or folder
    try:
        names = {path.name for path in folder.iterdir()}
        if SKILL_FILE not in names:  # compared exactly, so skill.md fails on every system alike
            return f"{shown}: missing (a skill folder needs a {SKILL_FILE}); the skill is left out"
        relative = (folder / SKILL_FILE).relative_to(base)
        data = read_written_file(base, relative, limit=MAX_SKILL_BYTES, where=where)
        if len(data) > MAX_SKILL_BYTES:
            raise too_large(MAX_SKILL_BYTES, f"a {SKILL_FILE}")
        parsed = parse_front_matter(read_fields(as_text(data)))
        return skill_from(parsed.fields, parsed.body, folder, shown)
    except (OSError, UnicodeDecodeError, UnreadableFile) as error:
        return f"{shown}: cannot be read ({error}); the skill is left out"
    except (FrontMatterError, SkillError) as error:
        return f"{shown}: {error}; the skill is left out"


def read_fields(text: str) -> str:
    """SKILL.md with the lines of every front-matter field but `READ_FIELDS` made blank.

    A field is its `key:` line at the left margin and the lines below it that are
    indented, list items, comments or blank. The lines stay, empty, so that the
    parser's line numbers are the file's. A text without a closed front matter is
    returned as it is, for the parser to say what is wrong with it.
    """
    lines = text.splitlines(keepends=True)  # as the parser splits them
    content = [line.rstrip("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029") for line in lines]
    if not content or content[0].removeprefix("\ufeff").rstrip() != FENCE:
        return text
    close = next((i for i, line in enumerate(content[1:], 1) if line.rstrip() == FENCE), None)
    if close is None:
        return text
    skipping = False  # inside a field that is not read
    for number in range(1, close):
        line = content[number]
        key = _TOP_LEVEL_KEY.match(line)
        if key is not None:
            skipping = key["key"] not in READ_FIELDS
        elif not (line[:1].isspace() or line[:1] in ("-", "#") or not line.strip()):
            skipping = False  # not part of a field: the parser names the line
        if skipping:
            lines[number] = lines[number][len(line) :]  # its line ending only
    return "".join(lines)


class SkillError(ValueError):
    """The front matter parsed, but breaks a rule of the format; the message names the rule."""


def skill_from(fields: Mapping[str, Value], body: str, folder: Path, source: str) -> Skill:
    name = _text(fields, "name")
    if len(name) > MAX_NAME:
        raise SkillError(f"name is {len(name)} characters; at most {MAX_NAME}")
    if not _NAME_CHARACTERS.fullmatch(name):
        raise SkillError(f"name {name!r} may hold only lowercase letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        raise SkillError(f"name {name!r} must not start or end with a hyphen")
    if "--" in name:
        raise SkillError(f"name {name!r} must not have two hyphens in a row")
    if name != folder.name:
        raise SkillError(f"name {name!r} must equal the name of its folder, {folder.name!r}")
    description = _text(fields, "description")
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(
            f"description is {len(description):,} characters; at most {MAX_DESCRIPTION:,}"
        )
    if not body:
        raise SkillError("no instructions: write them below the closing --- line")
    return Skill(name, description, body, folder, source)


def _text(fields: Mapping[str, Value], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise SkillError(f"{key} is missing; a skill needs a name and a description")
    if not isinstance(value, str):
        raise SkillError(f"{key} must be one line of text, not a list")
    if not value.strip():
        raise SkillError(f"{key} has no value")
    return value.strip()

"""Skills: every rule of the format (one warning naming the file and the rule, the rest go
on), where skills come from and which one wins, what the index holds, and the two
skills the chapter ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch10.skills import SKILLS_FOLDER, load_skills, read_skills_folder
from chapters.ch10.tests.support import build, folders, project_skill, skill_text, user_skill, write
from chapters.ch10.tokens import estimate_tokens

EXAMPLES = Path(__file__).resolve().parent.parent / "skills"
SHOWN = ".tutorial/skills/bad/SKILL.md"


def front(*lines: str, body: str = "Do it.") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + f"---\n{body}\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: bad\n", "line 1: the file must start with a --- line (the front matter)"),
        (front("description: d"), "name is missing; a skill needs a name and a description"),
        (front("name:", "description: d"), "name has no value"),
        (front("name: [bad]", "description: d"), "name must be one line of text, not a list"),
        (front("name: Bad", "description: d"), "name 'Bad' may hold only lowercase letters"),
        (front("name: b_ad", "description: d"), "name 'b_ad' may hold only lowercase letters"),
        (front("name: bäd", "description: d"), "name 'bäd' may hold only lowercase letters"),
        (front(f"name: {'b' * 65}", "description: d"), "name is 65 characters; at most 64"),
        (front("name: -bad", "description: d"), "name '-bad' must not start or end with a hyphen"),
        (front("name: bad-", "description: d"), "name 'bad-' must not start or end with a hyphen"),
        (front("name: b--ad", "description: d"), "name 'b--ad' must not have two hyphens in a row"),
        (
            front("name: good", "description: d"),
            "name 'good' must equal the name of its folder, 'bad'",
        ),
        (front("name: bad"), "description is missing"),
        (front("name: bad", "description: ''"), "description has no value"),
        (front("name: bad", "description: [a, b]"), "description must be one line of text"),
        (
            front("name: bad", f"description: {'d' * 1025}"),
            "description is 1,025 characters; at most 1,024",
        ),
        (front("name: bad", "description: d", body=""), "no instructions: write them below"),
        (front("name: bad", "description: >", "  folded"), "line 3: multi-line values"),
        (
            front("metadata:", "  author: me", "name: bad", "description: d", "  more"),
            "line 6: an indented line that is not a list item",  # the file's line number
        ),
    ],
)
def test_a_skill_that_breaks_a_rule_is_left_out_with_one_warning_naming_file_and_rule(
    tmp_path: Path, text: str, problem: str
) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "bad", text)
    project_skill(where.workspace, "fine")
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ("fine",)  # the others go on
    (warning,) = catalog.warnings
    assert warning.startswith(f"{SHOWN}: {problem}")
    assert warning.endswith("; the skill is left out")


def test_the_limits_themselves_are_allowed_and_other_fields_are_ignored(tmp_path: Path) -> None:
    where = folders(tmp_path)
    longest = "a" * 64
    text = front(
        f"name: {longest}",
        f"description: {'d' * 1024}",
        "license: MIT",
        "allowed-tools: [read_file, grep]",
    )
    project_skill(where.workspace, longest, text)
    project_skill(where.workspace, "py3-lint-2")
    project_skill(where.workspace, "x")
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == (longest, "py3-lint-2", "x")
    assert catalog.warnings == ()


def test_fields_a_skill_does_not_read_are_ignored_whatever_their_shape(tmp_path: Path) -> None:
    """The Agent Skills format allows license, compatibility, metadata and allowed-tools; other
    agents add fields of their own. A map, a folded text or a list must not cost the skill."""
    where = folders(tmp_path)
    text = front(
        "license: >",
        "  Apache-2.0; see",
        "  LICENSE.txt",
        "metadata:",
        "  author: someone",
        "  version: '1.0'",
        "# a comment inside the front matter",
        "name: mapped",
        "compatibility: needs git and network access",
        "allowed-tools:",
        "- read_file",
        "- grep",
        "x-vendor: {nested: [1, 2]}",
        "description: Does one thing. Use when asked to.",
    )
    project_skill(where.workspace, "mapped", text.replace("\n", "\r\n"))  # Windows endings too
    catalog = load_skills(where.workspace, where.home)
    assert catalog.warnings == ()
    skill = catalog.skills["mapped"]
    assert (skill.description, skill.instructions) == (
        "Does one thing. Use when asked to.",
        "Do it.",
    )


def test_a_folder_without_skill_md_and_a_lone_markdown_file_are_each_one_warning(
    tmp_path: Path,
) -> None:
    where = folders(tmp_path)
    skills = where.workspace / SKILLS_FOLDER
    write(skills / "lower" / "skill.md", skill_text("lower"))  # the name is case-sensitive
    write(skills / "loose.md", skill_text("loose"))
    write(skills / ".DS_Store", "")
    write(skills / "notes.txt", "")
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ()
    assert catalog.warnings == (
        ".tutorial/skills/loose.md: a skill is a folder with a SKILL.md, not a single file; "
        "try .tutorial/skills/loose/SKILL.md",
        ".tutorial/skills/lower/SKILL.md: missing (a skill folder needs a SKILL.md); "
        "the skill is left out",
    )


def test_a_skill_md_that_is_not_utf8_is_one_warning(tmp_path: Path) -> None:
    where = folders(tmp_path)
    write(where.workspace / SKILLS_FOLDER / "bad" / "SKILL.md", b"---\nname: b\xe9\n---\n")
    (warning,) = load_skills(where.workspace, where.home).warnings
    assert warning.startswith(f"{SHOWN}: cannot be read (")


def test_the_warnings_reach_the_prompt_and_the_run_goes_on(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "bad", front("name: Bad", "description: d"))
    prompt = build(where.workspace, where.home)
    assert prompt.warnings == (
        f"{SHOWN}: name 'Bad' may hold only lowercase letters, digits and hyphens; "
        "the skill is left out",
    )
    assert "Bad" not in prompt.text and prompt.section("skills").text == ""


def test_the_projects_skill_wins_a_name_clash_with_yours(tmp_path: Path) -> None:
    where = folders(tmp_path)
    user_skill(where.home, "deploy", skill_text("deploy", "Mine."))
    user_skill(where.home, "only-mine", skill_text("only-mine", "Also mine."))
    project_skill(where.workspace, "deploy", skill_text("deploy", "The project's."))
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ("deploy", "only-mine")
    deploy = catalog.skills["deploy"]
    assert (deploy.description, deploy.source) == (
        "The project's.",
        ".tutorial/skills/deploy/SKILL.md",
    )
    assert catalog.skills["only-mine"].source == "~/.tutorial/skills/only-mine/SKILL.md"
    assert [(s.name, s.source) for s in catalog.hidden] == [
        ("deploy", "~/.tutorial/skills/deploy/SKILL.md")
    ]


def test_run_in_your_home_folder_your_skills_are_read_once(tmp_path: Path) -> None:
    where = folders(tmp_path)
    user_skill(where.home, "deploy")
    catalog = load_skills(where.home, where.home)
    assert catalog.names == ("deploy",) and catalog.hidden == ()


def test_only_names_and_descriptions_go_into_the_prompt(tmp_path: Path) -> None:
    where = folders(tmp_path)
    text = skill_text("deploy", "Ship a release. Use when asked to deploy.", "SECRET STEPS")
    project_skill(where.workspace, "deploy", text)
    write(where.workspace / SKILLS_FOLDER / "deploy" / "steps.md", "MORE STEPS")
    prompt = build(where.workspace, where.home)
    assert prompt.section("skills").text == (
        "# Skills\n"
        "A skill holds instructions for one kind of task. When the task matches a skill's "
        "description, call load_skill with its name before you start, and follow what it "
        "returns.\n"
        "- deploy: Ship a release. Use when asked to deploy."
    )
    assert "SECRET" not in prompt.text and "MORE STEPS" not in prompt.text


def test_the_skills_the_chapter_ships_follow_every_rule() -> None:
    skills, warnings = read_skills_folder(EXAMPLES, "chapters/ch10/skills")
    assert warnings == []
    assert [s.name for s in skills] == ["conventional-commit", "python-diff-review"]
    for skill in skills:
        index_line = f"- {skill.name}: {skill.description}"
        # progressive disclosure pays: the line every request carries is a small part of the body
        assert estimate_tokens(index_line) * 4 < estimate_tokens(skill.instructions)
    assert (EXAMPLES / "python-diff-review" / "checklist.md").is_file()

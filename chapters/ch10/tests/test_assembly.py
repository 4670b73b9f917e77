"""The assembled prompt: sections in their fixed order, each capped; the same bytes for two
builds in one folder on one day; a new day changes only the last line; the memory section
takes any provider; one run sends one prompt."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner, ScriptedApprover, plain_console
from chapters.ch06.prompt import SYSTEM_PROMPT as CH06_PROMPT
from chapters.ch09.prompt import SYSTEM_PROMPT as CH09_PROMPT
from chapters.ch10.environment import Environment
from chapters.ch10.instructions import Instructions
from chapters.ch10.prompt import CAPS, ORDER, build_system_prompt, tools_text
from chapters.ch10.sections import MIN_CAP, Section, cut
from chapters.ch10.skills import SkillCatalog, load_skills
from chapters.ch10.tests.support import (
    TODAY,
    TOOLS,
    FixedMemory,
    build,
    folders,
    project_skill,
    skill_text,
    user_skill,
    write,
)
from chapters.testing import agent_of
from shared.scripted import ScriptedModel, response, tool_call

HEADINGS = [
    "You are a coding agent",
    "# Using the tools",
    "# Project instructions",
    "# Skills",
    "# Memory",
    "# Environment",
]


def furnished(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with every kind of source: AGENTS.md, yours, skills of both kinds."""
    where = folders(tmp_path)
    write(where.workspace / "AGENTS.md", "Run the tests with `make test`.\n")
    write(where.home / ".tutorial" / "AGENTS.md", "Answer briefly.\n")
    project_skill(where.workspace, "zeta-release")
    project_skill(where.workspace, "alpha-lint")
    user_skill(where.home, "mid-notes")
    return where.workspace, where.home


def test_the_sections_come_in_their_fixed_order_with_the_environment_last(
    tmp_path: Path,
) -> None:
    workspace, home = furnished(tmp_path)
    prompt = build(workspace, home, memory=FixedMemory())
    assert prompt.names == ORDER
    assert ORDER == (
        "identity",
        "tools",
        "project instructions",
        "skills",
        "memory",
        "environment",
    )
    places = [prompt.text.index(heading) for heading in HEADINGS]
    assert places == sorted(places) and places[0] == 0
    assert prompt.text.endswith(f"- Today's date: {TODAY.isoformat()}")  # what changes: last
    assert prompt.text == "\n\n".join(s.text for s in prompt.sections)


def test_each_section_says_where_its_text_comes_from(tmp_path: Path) -> None:
    workspace, home = furnished(tmp_path)
    prompt = build(workspace, home, memory=FixedMemory())
    assert {s.name: s.source for s in prompt.sections} == {
        "identity": "chapters/ch10/prompt.py",
        "tools": "chapters/ch10/prompt.py, for 9 tools",
        "project instructions": "~/.tutorial/AGENTS.md + AGENTS.md",
        "skills": "~/.tutorial/skills/ and .tutorial/skills/",
        "memory": ".tutorial/memory/MEMORY.md",
        "environment": "this machine, .git/HEAD and today's date",
    }
    assert {s.name: s.cap for s in prompt.sections} == dict(CAPS)


def test_every_section_stays_within_its_cap_and_says_when_it_was_cut(tmp_path: Path) -> None:
    where = folders(tmp_path)
    for number in range(40):
        project_skill(where.workspace, f"skill-{number:02d}", skill_text(f"skill-{number:02d}"))
    skills = load_skills(where.workspace, where.home)
    full = len(skills.index())
    prompt = build_system_prompt(
        tools=("shell",),
        instructions=Instructions(()),
        skills=skills,
        environment=Environment("Linux", "bash", where.workspace, "not a git repository", TODAY),
        caps={**CAPS, "skills": 500},
    )
    section = prompt.section("skills")
    assert section.was_cut and section.full_size == full > 500
    assert len(section.text) <= 500
    assert section.text.startswith("# Skills\n")
    assert section.text.endswith(
        f"\n[cut: the skills section is {full:,} characters, over its cap of 500; "
        "the rest is left out]"
    )
    assert section.text.splitlines()[-2].startswith("- skill-")  # whole lines kept
    assert not prompt.section("tools").was_cut


def test_a_cut_keeps_whole_lines_unless_that_loses_half_the_room() -> None:
    assert cut("short", 10, "x") == "short"
    lines = "\n".join(f"line {n:03d}" for n in range(100))
    kept = cut(lines, 200, "the file")
    assert kept.endswith(
        "[cut: the file is 899 characters, over its cap of 200; the rest is left out]"
    )
    assert len(kept) <= 200 and kept.splitlines()[-2] == "line 012"
    one_long_line = "x" * 1000
    assert cut(one_long_line, 200, "it").startswith("x" * 100)  # no line break: a hard cut


def test_a_cap_too_small_for_its_note_is_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        Section.capped("tools", "here", MIN_CAP - 1, "text")


def test_two_builds_in_one_folder_on_one_day_are_byte_identical(tmp_path: Path) -> None:
    workspace, home = furnished(tmp_path)
    first = build(workspace, home, memory=FixedMemory())
    second = build(workspace, home, memory=FixedMemory())
    assert first.text.encode("utf-8") == second.text.encode("utf-8")
    assert first == second


def test_the_skills_index_is_in_name_order_whatever_the_folder_listing_says(
    tmp_path: Path,
) -> None:
    workspace, home = furnished(tmp_path)
    index = build(workspace, home).section("skills").text
    names = [line.split(":")[0] for line in index.splitlines() if line.startswith("- ")]
    assert names == ["- alpha-lint", "- mid-notes", "- zeta-release"]


def test_the_next_day_changes_only_the_last_line(tmp_path: Path) -> None:
    workspace, home = furnished(tmp_path)
    today = build(workspace, home, memory=FixedMemory()).text
    tomorrow = build(workspace, home, TODAY + timedelta(days=1), memory=FixedMemory()).text
    assert today != tomorrow
    assert today.rsplit("\n", 1)[0] == tomorrow.rsplit("\n", 1)[0]  # the prefix a cache keeps


def test_the_memory_section_shows_what_any_provider_gives_under_its_heading(
    tmp_path: Path,
) -> None:
    where = folders(tmp_path)
    memory = FixedMemory()
    prompt = build(where.workspace, where.home, memory=memory)
    section = prompt.section("memory")
    assert section.text == "# Memory\n- tabs: the user wants tabs, not spaces, in Python files"
    assert section.source == ".tutorial/memory/MEMORY.md"
    assert memory.asked == 1  # asked once per build, never per request


def test_no_memory_or_an_empty_index_leaves_the_section_out(tmp_path: Path) -> None:
    where = folders(tmp_path)
    assert build(where.workspace, where.home).section("memory").text == ""
    empty = build(where.workspace, where.home, memory=FixedMemory(index="  \n"))
    assert empty.section("memory").text == "" and "# Memory" not in empty.text


def test_a_memory_provider_that_breaks_leaves_the_section_out_with_a_warning(
    tmp_path: Path,
) -> None:
    class Broken(FixedMemory):
        def text(self) -> str:
            raise OSError("MEMORY.md vanished")

    where = folders(tmp_path)
    prompt = build(where.workspace, where.home, memory=Broken())
    assert prompt.section("memory").text == ""
    assert prompt.warnings == (
        "the memory index could not be read (OSError: MEMORY.md vanished); left out",
    )


def test_the_tools_section_has_a_line_only_for_the_tools_the_agent_has() -> None:
    only_shell = tools_text(("shell",))
    assert only_shell.splitlines() == [
        "# Using the tools",
        "- shell runs one command in the shell named under Environment. Do not guess what a "
        "command would print: run it, and read its exit code and output before you say it "
        "worked.",
    ]
    assert "edit_file" not in tools_text(("read_file", "glob", "grep"))
    assert "edit_file's old_string" in tools_text(("read_file", "edit_file"))
    assert tools_text(()) == ""


def test_the_prompt_tells_the_model_to_look_before_it_acts(tmp_path: Path) -> None:
    """What a small model skipped: it wrote an answer into a file it never read and created
    src/Parser.py beside the class it was asked to change. Each rule is said once, concretely,
    in the section of the prompt where its tools are."""
    where = folders(tmp_path)
    prompt = build(where.workspace, where.home)
    identity, tools = prompt.section("identity"), prompt.section("tools")
    assert "Look before you act:" in identity.text and "never on a guess" in identity.text
    for rule in [
        "Read a file before you change it, even to replace it whole",
        "Before you create a file, a class or a function, search for it with grep or glob",
        "read its exit code and output before you say it worked",
    ]:
        assert tools.text.count(rule) == 1, rule
        assert prompt.text.count(rule) == 1, rule
    assert not identity.was_cut and not tools.was_cut  # every line of guidance within its cap


def test_the_tools_section_keeps_what_chapters_7_to_9_told_the_model(tmp_path: Path) -> None:
    """Chapter 10's agent streams, runs reads side by side, saves big results and has memory, as
    chapters 7 to 9 did; what their constant prompts added about it is still said, word for
    word."""
    added = CH09_PROMPT.removeprefix(CH06_PROMPT).strip().split("\n- ")
    assert len(added) == 4
    prompt = build(tmp_path, tmp_path, tools=(*TOOLS, "memory_read", "memory_write"))
    tools = prompt.section("tools").text
    for line in added:
        assert f"- {line.removeprefix('- ')}" in tools.splitlines()


def test_one_run_sends_the_same_prompt_with_every_request(tmp_path: Path) -> None:
    """Built once, before the run: the prompt is a string in the agent spec, not a function."""
    workspace, home = furnished(tmp_path)
    memory = FixedMemory()
    prompt = build(workspace, home, memory=memory)
    model = ScriptedModel(
        [response(None, [tool_call("c1", "shell", '{"command": "ls"}')]), response("done")]
    )
    agent = agent_of(
        1,
        model=model,
        console=plain_console(),
        approver=ScriptedApprover.always(True),
        cwd=workspace,
        runner=FakeRunner(),
    )
    assert run_agent("go", replace(agent, system_prompt=prompt.text)) == "done"
    sent = [request["messages"][0] for request in model.requests]
    assert sent == [{"role": "system", "content": prompt.text}] * 2
    assert memory.asked == 1


def test_an_empty_catalog_and_no_instructions_leave_their_sections_out() -> None:
    prompt = build_system_prompt(
        tools=(),
        instructions=Instructions(()),
        skills=SkillCatalog({}),
        environment=Environment("Linux", "bash", Path("/w"), "not a git repository", TODAY),
    )
    assert [s.name for s in prompt.sections if s.text] == ["identity", "environment"]
    assert prompt.section("skills").source == "~/.tutorial/skills/ and .tutorial/skills/"

"""load_skill: the instructions and the other files in the skill's folder, as paths read_file
opens; an unknown name lists the skills there are; a read that nobody is asked about."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner, ScriptedApprover, plain_console, result_of
from chapters.ch02.ledger import ReadLedger
from chapters.ch02.reading import ReadFileArgs, make_read_file_tool
from chapters.ch02.workspace import Workspace
from chapters.ch03.tests.support import link
from chapters.ch10.skill_tool import INSTRUCTIONS_CAP, MAX_FILES, make_load_skill_tool
from chapters.ch10.skills import SKILLS_FOLDER, load_skills
from chapters.ch10.tests.support import folders, project_skill, skill_text, user_skill, write
from chapters.testing import agent_of
from shared.messages import FunctionCall, Message, ToolCall
from shared.scripted import ScriptedModel, response, tool_call
from shared.tools import KeyArgument, KeyKind, SideEffect, Status, ToolRegistry, ToolResult


def load(workspace: Path, home: Path, name: str) -> ToolResult:
    tool = make_load_skill_tool(load_skills(workspace, home), Workspace(workspace))
    call = ToolCall(
        id="c1", function=FunctionCall(name="load_skill", arguments=json.dumps({"name": name}))
    )
    prepared = ToolRegistry([tool]).snapshot().prepare(call)
    assert not isinstance(prepared, ToolResult), prepared
    return prepared.invoke()


def test_it_returns_the_instructions_and_lists_the_other_files(tmp_path: Path) -> None:
    where = folders(tmp_path)
    folder = project_skill(
        where.workspace, "review", skill_text("review", body="Read checklist.md, then report.")
    )
    write(folder / "checklist.md", "- mutable defaults")
    write(folder / "examples" / "good.md", "fine")
    result = load(where.workspace, where.home, "review")
    assert result.status is Status.OK
    assert result.content == (
        "ok: skill review (.tutorial/skills/review/SKILL.md). Follow these instructions:\n\n"
        "Read checklist.md, then report.\n\n"
        "Other files in its folder (open one with read_file when the instructions say so):\n"
        "- .tutorial/skills/review/checklist.md\n"
        "- .tutorial/skills/review/examples/good.md"
    )


def test_a_listed_path_is_one_read_file_opens(tmp_path: Path) -> None:
    where = folders(tmp_path)
    folder = project_skill(where.workspace, "review")
    write(folder / "checklist.md", "- mutable defaults\n")
    listed = load(where.workspace, where.home, "review").content.splitlines()[-1].removeprefix("- ")
    read_file = make_read_file_tool(Workspace(where.workspace), ReadLedger())
    result = read_file.run(ReadFileArgs(path=listed))
    assert result.ok and "mutable defaults" in result.content


@pytest.mark.skipif(sys.platform == "win32", reason="Windows file names cannot hold a newline")
def test_a_file_name_with_a_newline_is_listed_escaped_on_one_line(tmp_path: Path) -> None:
    where = folders(tmp_path)
    folder = project_skill(where.workspace, "review")
    write(folder / "notes\n.." / "outside.md", "x")
    lines = load(where.workspace, where.home, "review").content.splitlines()
    assert lines[-1] == "- .tutorial/skills/review/notes\\n../outside.md"
    assert not any(line.startswith("..") for line in lines)


def test_a_skill_with_no_other_files_says_so(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "lonely")
    assert load(where.workspace, where.home, "lonely").content.endswith(
        "Do it.\n\nThe skill has no other files."
    )


def test_your_skills_files_are_listed_as_outside_the_workspace(tmp_path: Path) -> None:
    where = folders(tmp_path)
    folder = user_skill(where.home, "mine")
    write(folder / "notes.md", "x")
    content = load(where.workspace, where.home, "mine").content
    assert content.startswith("ok: skill mine (~/.tutorial/skills/mine/SKILL.md).")
    assert content.endswith(
        "Other files in its folder, ~/.tutorial/skills/mine/, which is outside the workspace: "
        "read_file cannot open them, so ask the user if the instructions need one:\n"
        "- notes.md"
    )


def test_an_unknown_name_is_a_failure_that_lists_the_skills_there_are(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "review")
    user_skill(where.home, "commit")
    result = load(where.workspace, where.home, "reveiw")
    assert (result.status, result.keyword) == (Status.FAILED, "unknown_skill")
    assert result.content == (
        "unknown_skill: there is no skill named 'reveiw'. The skills are: commit, review."
    )
    empty = folders(tmp_path / "empty")
    assert load(empty.workspace, empty.home, "x").content.endswith(
        "The skills are: none (no skill was found)."
    )


def test_long_instructions_are_cut_and_many_files_are_counted(tmp_path: Path) -> None:
    where = folders(tmp_path)
    body = "\n".join(f"step {n}" for n in range(5000))
    folder = project_skill(where.workspace, "big", skill_text("big", body=body))
    for number in range(MAX_FILES + 3):
        write(folder / f"f{number:03d}.md", "")
    content = load(where.workspace, where.home, "big").content
    assert (
        f"[cut: SKILL.md is {len(body):,} characters, over its cap of {INSTRUCTIONS_CAP:,}; "
        "the rest is left out]"
    ) in content
    assert content.endswith(f"- .tutorial/skills/big/f{MAX_FILES - 1:03d}.md\n- ... and 3 more")


def test_it_is_a_concurrency_safe_read_with_a_name_rules_can_match(tmp_path: Path) -> None:
    where = folders(tmp_path)
    tool = make_load_skill_tool(
        load_skills(where.workspace, where.home), Workspace(where.workspace)
    )
    assert tool.side_effect is SideEffect.READ and not tool.side_effect.needs_approval
    assert tool.concurrency_safe
    assert tool.key == KeyArgument("name", KeyKind.TEXT)
    assert tool.parameters["required"] == ["name"]
    assert isinstance(tool.validate({"name": "x", "file": "y"}), str)
    assert isinstance(tool.validate({"name": "  "}), str)


def test_in_a_run_the_model_loads_a_skill_without_anyone_being_asked(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(where.workspace, "review", skill_text("review", body="Report file:line."))
    workspace = Workspace(where.workspace)
    agent = agent_of(
        1,
        model=ScriptedModel(
            [
                response(None, [tool_call("c1", "load_skill", '{"name": "review"}')]),
                response("done"),
            ]
        ),
        console=plain_console(),
        approver=ScriptedApprover([]),  # no answers: a question would fail the test
        cwd=where.workspace,
        runner=FakeRunner(),
    )
    tools = ToolRegistry([make_load_skill_tool(load_skills(workspace.root, where.home), workspace)])
    history: list[Message] = []
    assert run_agent("review my change", replace(agent, tools=tools), history=history) == "done"
    assert "Report file:line." in result_of(history, "c1")


def test_a_skill_folder_never_lists_what_a_symlink_leads_out_to(tmp_path: Path) -> None:
    where = folders(tmp_path)
    folder = project_skill(where.workspace, "review")
    write(tmp_path / "outside" / "secret.md", "secret")
    try:
        (folder / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    except OSError:  # Windows without the right to make links: nothing to check
        return
    assert "secret" not in load(where.workspace, where.home, "review").content
    assert (where.workspace / SKILLS_FOLDER / "review" / "link").is_dir()


def test_a_skill_md_that_links_outside_the_workspace_is_never_loaded(tmp_path: Path) -> None:
    where = folders(tmp_path)
    secret = write(tmp_path / "outside" / "SKILL.md", skill_text("leak", body="SECRET STEPS"))
    link(where.workspace / SKILLS_FOLDER / "leak" / "SKILL.md", secret)
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ()
    assert catalog.warnings == (
        ".tutorial/skills/leak/SKILL.md: cannot be read (it leads outside the workspace); "
        "the skill is left out",
    )
    assert "SECRET" not in load(where.workspace, where.home, "leak").content


def test_a_skills_folder_that_links_outside_the_workspace_is_not_read(tmp_path: Path) -> None:
    where = folders(tmp_path)
    project_skill(tmp_path / "outside", "leak", skill_text("leak", body="SECRET STEPS"))
    link(where.workspace / SKILLS_FOLDER, tmp_path / "outside" / SKILLS_FOLDER)
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ()
    assert catalog.warnings == (
        ".tutorial/skills: cannot be read (it leads outside the workspace); its skills are "
        "left out",
    )


def test_your_skill_may_link_within_your_home_folder_but_not_out_of_it(tmp_path: Path) -> None:
    where = folders(tmp_path)
    kept = write(where.home / "dotfiles" / "mine.md", skill_text("mine", body="My steps."))
    link(where.home / SKILLS_FOLDER / "mine" / "SKILL.md", kept)
    away = write(tmp_path / "elsewhere.md", skill_text("away", body="SECRET STEPS"))
    link(where.home / SKILLS_FOLDER / "away" / "SKILL.md", away)
    catalog = load_skills(where.workspace, where.home)
    assert catalog.names == ("mine",)
    assert catalog.warnings == (
        "~/.tutorial/skills/away/SKILL.md: cannot be read (it leads outside your home "
        "folder); the skill is left out",
    )

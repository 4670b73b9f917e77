"""`python -m tutorial prompt`: every section with its source and its size in characters and
estimated tokens; `--raw` exactly what is sent; warnings on stderr; and the token estimate."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from chapters.ch02.workspace import Workspace
from chapters.ch03.tests.support import tutorial
from chapters.ch10.environment import read_environment
from chapters.ch10.instructions import read_instructions
from chapters.ch10.parts import assembled
from chapters.ch10.prompt import CAPS, build_system_prompt, read_system_prompt
from chapters.ch10.sections import SystemPrompt
from chapters.ch10.show_prompt import make_prompt_command
from chapters.ch10.skills import load_skills
from chapters.ch10.tests.support import (
    TODAY,
    TOOLS,
    FixedMemory,
    project_skill,
    skill_text,
    write,
)
from chapters.ch10.tokens import HOW, estimate_tokens
from chapters.testing import setup_of
from shared.recipe import listed_tools

pytestmark = pytest.mark.usefixtures("isolated")  # cwd: an empty tmp_path; HOME: tmp_path/home


def prompt_here(workspace: Workspace, home: Path, today: date) -> SystemPrompt:
    """What the command under test builds: the test's tools and a memory double."""
    skills = load_skills(workspace.root, home)
    environment = read_environment(workspace.root, today)
    return read_system_prompt(
        workspace.root, home, environment, tools=TOOLS, skills=skills, memory=FixedMemory()
    )


def show(*args: str) -> Result:
    command = make_prompt_command(prompt_here, today=lambda: TODAY)
    return CliRunner().invoke(command, list(args), prog_name="prompt")


def furnish(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Run the tests with `make test`. 用中文回答。\n")
    project_skill(tmp_path, "review", skill_text("review", "Review a diff. Use when asked."))


def test_each_section_is_shown_with_its_source_and_its_sizes(tmp_path: Path) -> None:
    furnish(tmp_path)
    result = show()
    assert result.exit_code == 0, result.output
    prompt = prompt_here(Workspace(tmp_path), Path.home(), TODAY)
    out = result.stdout
    assert out.startswith(
        f"The system prompt a run in {tmp_path.resolve()} would send, in 6 sections.\n"
        f"Sizes are characters; tokens are {HOW}.\n\n"
    )
    headers = re.findall(r"--- (\d)/6 (.+) ---\nsource: (.+)\nsize: (.+)", out)
    assert [(n, name) for n, name, _, _ in headers] == [
        ("1", "identity"),
        ("2", "tools"),
        ("3", "project instructions"),
        ("4", "skills"),
        ("5", "memory"),
        ("6", "environment"),
    ]
    for (_, _, source, size), section in zip(headers, prompt.sections, strict=True):
        assert source == section.source
        assert size == (
            f"{len(section.text):,} characters, ~{estimate_tokens(section.text):,} tokens "
            f"(cap {section.cap:,})"
        )
        assert f"size: {size}\n{section.text}\n" in out + "\n"  # each text exactly as sent
    assert out.endswith(
        f"--- total ---\n6 of 6 sections sent: {len(prompt.text):,} characters, "
        f"~{estimate_tokens(prompt.text):,} tokens (with the blank lines between sections)\n"
    )
    assert result.stderr == ""


def test_raw_prints_exactly_what_is_sent_and_nothing_else(tmp_path: Path) -> None:
    furnish(tmp_path)
    result = show("--raw")
    assert result.exit_code == 0
    expected = prompt_here(Workspace(tmp_path), Path.home(), TODAY).text
    assert result.stdout_bytes == expected.encode("utf-8")


def test_an_empty_section_and_a_cut_one_say_so(tmp_path: Path) -> None:
    def small(workspace: Workspace, home: Path, today: date) -> SystemPrompt:
        return build_system_prompt(
            tools=("shell",),
            instructions=read_instructions(workspace.root, home),
            skills=load_skills(workspace.root, home),
            environment=read_environment(workspace.root, today),
            caps={**CAPS, "project instructions": 200},
        )

    write(tmp_path / "AGENTS.md", "x" * 500)
    result = CliRunner().invoke(make_prompt_command(small, today=lambda: TODAY), [])
    full = len(read_instructions(tmp_path, Path.home()).text())
    assert (
        "--- 3/6 project instructions ---\nsource: AGENTS.md\n"
        f"size: 200 characters, ~{estimate_tokens(small_text(result.stdout)):,} tokens "
        f"(cap 200; cut from {full:,})\n"
    ) in result.stdout
    assert "--- 4/6 skills ---\nsource: ~/.tutorial/skills/ and .tutorial/skills/\n" in (
        result.stdout
    )
    assert "size: empty, left out of the prompt\n\n--- 5/6 memory" in result.stdout


def small_text(out: str) -> str:
    """The text of section 3 as the report printed it."""
    return (
        out.split("--- 3/6 project instructions ---\n", 1)[1]
        .split("\n", 2)[2]
        .split("\n\n--- 4/6", 1)[0]
    )


def test_warnings_go_to_stderr_so_raw_stays_exact(tmp_path: Path) -> None:
    project_skill(tmp_path, "Bad", skill_text("Bad"))
    result = show("--raw")
    assert result.stderr == (
        "warning: .tutorial/skills/Bad/SKILL.md: name 'Bad' may hold only lowercase letters, "
        "digits and hyphens; the skill is left out\n"
    )
    assert "Bad" not in result.stdout


def test_workspace_chooses_the_folder(tmp_path: Path) -> None:
    write(tmp_path / "other" / "AGENTS.md", "Other rules.")
    result = show("--workspace", str(tmp_path / "other"))
    assert "## AGENTS.md (this project's)\nOther rules." in result.stdout


def test_the_dispatcher_runs_a_chapters_prompt_command(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Be brief.")
    result = tutorial("prompt", "--chapter", "10")
    assert result.exit_code == 0, result.output
    assert "--- 3/6 project instructions ---\nsource: AGENTS.md\n" in result.stdout
    raw = tutorial("prompt", "--chapter", "10", "--raw")
    setup = setup_of(10, workspace=Workspace(tmp_path), home=Path.home(), today=TODAY)
    expected = assembled(setup, listed_tools(setup, filtered=True).names).text
    sent, date_line = raw.stdout.rsplit("\n", 1)  # the command reads the real clock
    assert sent == expected.rsplit("\n", 1)[0]
    assert re.fullmatch(r"- Today's date: \d{4}-\d\d-\d\d", date_line)


def test_the_texts_experiment_a_skill_in_a_folder_of_another_name(tmp_path: Path) -> None:
    """docs/ch10-prompt-assembly.md, experiment 3: the warning it quotes, then the fix."""
    skill = skill_text("changelog", "Write a changelog entry. Use when asked for one.", "Steps.")
    write(tmp_path / ".tutorial" / "skills" / "Changelog" / "SKILL.md", skill)
    wrong = tutorial("prompt", "--chapter", "10")
    assert wrong.exit_code == 0, wrong.output
    assert wrong.stderr == (
        "warning: .tutorial/skills/Changelog/SKILL.md: name 'changelog' must equal the name "
        "of its folder, 'Changelog'; the skill is left out\n"
    )
    assert "--- 4/6 skills ---\nsource: ~/.tutorial/skills/ and .tutorial/skills/\nsize: empty" in (
        wrong.stdout
    )
    (tmp_path / ".tutorial" / "skills" / "Changelog").rename(
        tmp_path / ".tutorial" / "skills" / "changelog"
    )
    right = tutorial("prompt", "--chapter", "10")
    assert right.stderr == ""
    assert "\n- changelog: Write a changelog entry. Use when asked for one.\n" in right.stdout


def test_the_dispatcher_says_which_chapters_have_a_prompt_to_show() -> None:
    earlier = tutorial("prompt", "--chapter", "6")
    assert earlier.exit_code == 2
    assert "Chapter 6 sends a fixed prompt; it is assembled from chapter 10 on" in earlier.output
    missing = tutorial("prompt")
    assert missing.exit_code == 2 and "--chapter is required" in missing.output


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abcd", 1),
        ("abcde", 2),
        ("中文", 2),
        ("中文ab", 3),
        ("，。「」", 4),
        ("한국어 カタカナ", 8),  # 7 CJK characters; the space is a quarter token, rounded up
    ],
)
def test_the_token_estimate(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens

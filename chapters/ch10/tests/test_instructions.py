"""Project instructions: AGENTS.md, CLAUDE.md when there is no AGENTS.md, yours from
~/.tutorial/AGENTS.md first; each file capped; a file that cannot be read is a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch10.instructions import FILE_CAP, read_instructions
from chapters.ch10.tests.support import build, folders, write


def test_the_projects_agents_md_is_read_from_the_workspace_root(tmp_path: Path) -> None:
    where = folders(tmp_path)
    write(where.workspace / "AGENTS.md", "Use tabs.\n\n")
    write(where.workspace / "sub" / "AGENTS.md", "Not this one.")
    section = build(where.workspace, where.home).section("project instructions")
    assert section.source == "AGENTS.md"
    assert section.text == (
        "# Project instructions\n"
        "The user and the project wrote these instructions for agents that work here. Follow "
        "them; when they conflict with what the user asks in this conversation, the user wins."
        "\n\n## AGENTS.md (this project's)\nUse tabs."
    )


def test_claude_md_is_read_only_when_there_is_no_agents_md(tmp_path: Path) -> None:
    where = folders(tmp_path)
    write(where.workspace / "CLAUDE.md", "From CLAUDE.md.")
    alone = read_instructions(where.workspace, where.home)
    assert [(f.shown, f.text) for f in alone.files] == [("CLAUDE.md", "From CLAUDE.md.")]
    write(where.workspace / "AGENTS.md", "From AGENTS.md.")
    both = read_instructions(where.workspace, where.home)
    assert [(f.shown, f.text) for f in both.files] == [("AGENTS.md", "From AGENTS.md.")]


def test_yours_comes_first_and_the_projects_nearer_the_conversation(tmp_path: Path) -> None:
    where = folders(tmp_path)
    write(where.workspace / "AGENTS.md", "Project rule.")
    write(where.home / ".tutorial" / "AGENTS.md", "My rule.")
    instructions = read_instructions(where.workspace, where.home)
    assert instructions.source == "~/.tutorial/AGENTS.md + AGENTS.md"
    text = instructions.text()
    assert text.index("## ~/.tutorial/AGENTS.md (yours, for every project)\nMy rule.") < text.index(
        "## AGENTS.md (this project's)\nProject rule."
    )


def test_your_file_alone_is_enough_and_no_file_leaves_the_section_out(tmp_path: Path) -> None:
    where = folders(tmp_path)
    assert build(where.workspace, where.home).section("project instructions").text == ""
    assert read_instructions(where.workspace, where.home).source == (
        "none: no AGENTS.md, CLAUDE.md or ~/.tutorial/AGENTS.md"
    )
    write(where.home / ".tutorial" / "AGENTS.md", "Mine.")
    assert read_instructions(where.workspace, where.home).source == "~/.tutorial/AGENTS.md"


def test_a_file_over_its_cap_is_cut_with_a_note_naming_it(tmp_path: Path) -> None:
    where = folders(tmp_path)
    long = "\n".join(f"- rule {n}" for n in range(2000))
    write(where.workspace / "AGENTS.md", long)
    (kept,) = read_instructions(where.workspace, where.home).files
    assert len(kept.text) <= FILE_CAP
    assert kept.text.endswith(
        f"[cut: AGENTS.md is {len(long):,} characters, over its cap of {FILE_CAP:,}; "
        "the rest is left out]"
    )
    assert kept.text.startswith("- rule 0\n- rule 1\n")


def test_windows_line_ends_and_a_bom_read_as_the_same_text(tmp_path: Path) -> None:
    """The same file checked out on Windows gives the same prompt, byte for byte."""
    unix, windows = folders(tmp_path / "unix"), folders(tmp_path / "windows")
    write(unix.workspace / "AGENTS.md", "One.\nTwo.\n")
    write(windows.workspace / "AGENTS.md", b"\xef\xbb\xbfOne.\r\nTwo.\r\n")
    assert read_instructions(unix.workspace, unix.home) == read_instructions(
        windows.workspace, windows.home
    )


def test_a_file_that_cannot_be_read_is_left_out_with_a_warning(tmp_path: Path) -> None:
    where = folders(tmp_path)
    write(where.workspace / "AGENTS.md", b"caf\xe9 in latin-1")
    write(where.home / ".tutorial" / "AGENTS.md", "Mine still counts.")
    prompt = build(where.workspace, where.home)
    assert prompt.section("project instructions").source == "~/.tutorial/AGENTS.md"
    (warning,) = prompt.warnings
    assert warning.startswith("AGENTS.md cannot be read (")
    assert warning.endswith("); it is left out of the prompt")


def test_home_is_the_folder_passed_in_not_the_one_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = folders(tmp_path)
    write(tmp_path / "elsewhere" / ".tutorial" / "AGENTS.md", "Not mine.")
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "elsewhere"))
    assert read_instructions(where.workspace, where.home).files == ()

"""The environment section: the shell the shell tool runs, on Windows and elsewhere (the
platform simulated where shared/process.py looks), the git branch, no repository, and a
repository that cannot be read, which never stops a run."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from chapters.ch01.shell_tool import make_shell_tool
from chapters.ch10.environment import git_state, read_environment
from chapters.ch10.tests.support import TODAY, build, folders, write
from shared import process


def simulate(
    monkeypatch: pytest.MonkeyPatch, *, windows: bool, installed: dict[str, str], system: str = ""
) -> None:
    """This machine as shared/process.py sees it: the platform, and what `which` finds."""
    which: Callable[[str], str | None] = installed.get
    monkeypatch.setattr(process, "IS_WINDOWS", windows)
    monkeypatch.setattr("shared.process.shutil.which", which)
    if system:
        monkeypatch.setattr("chapters.ch10.environment.platform.system", lambda: system)


@pytest.mark.parametrize(
    ("windows", "installed", "system", "shown_system", "shown_shell"),
    [
        (True, {"pwsh": "C:/pwsh/pwsh.exe"}, "", "Windows", "PowerShell (pwsh)"),
        (True, {}, "", "Windows", "Windows PowerShell (powershell.exe)"),
        (False, {"bash": "/usr/bin/bash"}, "Linux", "Linux", "bash"),
        (False, {"bash": "/bin/bash"}, "Darwin", "macOS", "bash"),
        (False, {}, "Linux", "Linux", "sh"),
    ],
)
def test_the_environment_names_the_shell_the_shell_tool_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    windows: bool,
    installed: dict[str, str],
    system: str,
    shown_system: str,
    shown_shell: str,
) -> None:
    simulate(monkeypatch, windows=windows, installed=installed, system=system)
    environment = read_environment(tmp_path, TODAY, git_ceiling=tmp_path)
    assert (environment.system, environment.shell) == (shown_system, shown_shell)
    assert f"- Operating system: {shown_system}\n" in environment.text()
    assert f"- Shell: {shown_shell} (the shell tool runs each command in it)\n" in (
        environment.text()
    )
    tool = make_shell_tool(tmp_path)  # asked on the same simulated machine: they agree
    assert tool.description.startswith(f"Run one command in {shown_shell} ")


def test_the_environment_lines_in_order_with_the_date_last(tmp_path: Path) -> None:
    environment = read_environment(tmp_path, TODAY, git_ceiling=tmp_path)
    assert environment.text().splitlines() == [
        "# Environment",
        f"- Operating system: {environment.system}",
        f"- Shell: {environment.shell} (the shell tool runs each command in it)",
        f"- Working folder: {tmp_path} (the workspace; file paths are relative to it)",
        "- Git: not a git repository",
        "- Today's date: 2026-05-01",
    ]


def test_the_environment_is_read_when_the_prompt_is_built_not_at_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = folders(tmp_path)
    simulate(monkeypatch, windows=True, installed={"pwsh": "pwsh.exe"})
    text = build(where.workspace, where.home).section("environment").text
    assert "- Operating system: Windows\n- Shell: PowerShell (pwsh) (" in text


def test_a_branch_is_read_from_head_in_the_folder_or_above_it(tmp_path: Path) -> None:
    write(tmp_path / "repo" / ".git" / "HEAD", "ref: refs/heads/feature/login\n")
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    assert git_state(tmp_path / "repo") == "a repository, on branch feature/login"
    assert git_state(tmp_path / "repo" / "src" / "deep", ceiling=tmp_path) == (
        "a repository, on branch feature/login"
    )


def test_a_detached_head_names_its_commit(tmp_path: Path) -> None:
    write(tmp_path / ".git" / "HEAD", "3f786850e387550fdab836ed7e6dc881de23001b\n")
    assert git_state(tmp_path) == "a repository, detached HEAD at commit 3f78685"


def test_a_worktree_follows_its_git_file_to_the_real_head(tmp_path: Path) -> None:
    write(tmp_path / "main" / ".git" / "worktrees" / "wt" / "HEAD", "ref: refs/heads/ch10\n")
    write(tmp_path / "wt" / ".git", "gitdir: ../main/.git/worktrees/wt\n")
    assert git_state(tmp_path / "wt", ceiling=tmp_path) == "a repository, on branch ch10"
    absolute = tmp_path / "main" / ".git" / "worktrees" / "wt"
    write(tmp_path / "wt" / ".git", f"gitdir: {absolute}\n")
    assert git_state(tmp_path / "wt", ceiling=tmp_path) == "a repository, on branch ch10"


def test_no_repository_says_so(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert git_state(tmp_path / "plain", ceiling=tmp_path) == "not a git repository"


def test_the_search_stops_at_the_ceiling(tmp_path: Path) -> None:
    """What keeps a test's temporary folder from belonging to a repository above it."""
    write(tmp_path / ".git" / "HEAD", "ref: refs/heads/main\n")
    (tmp_path / "plain").mkdir()
    assert git_state(tmp_path / "plain", ceiling=tmp_path / "plain") == "not a git repository"


@pytest.mark.parametrize(
    ("dot_git", "starts"),
    [
        ("a file that points nowhere\n", "unknown (a .git was found but could not be read: "),
        ("gitdir: missing/folder\n", "unknown (a .git was found but could not be read: "),
    ],
)
def test_a_repository_that_cannot_be_read_is_said_and_never_raises(
    tmp_path: Path, dot_git: str, starts: str
) -> None:
    write(tmp_path / ".git", dot_git)
    assert git_state(tmp_path, ceiling=tmp_path).startswith(starts)


def test_a_head_of_another_shape_is_shown_as_it_is(tmp_path: Path) -> None:
    write(tmp_path / ".git" / "HEAD", "ref: refs/remotes/origin/main\n")
    assert git_state(tmp_path) == "a repository, HEAD is 'ref: refs/remotes/origin/main'"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_repository_made_by_git_itself_reads_the_same(tmp_path: Path) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=trunk", "init", "-q", str(tmp_path)],
        check=True,
        timeout=30,
    )
    assert git_state(tmp_path) == "a repository, on branch trunk"

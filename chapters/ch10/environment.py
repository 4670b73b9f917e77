"""The environment section: where this run happens, in the few facts the model acts on.

    Operating system   Windows, macOS or Linux
    Shell              the one the shell tool runs its commands in; shared/process.py
                       decides (PowerShell on Windows, bash elsewhere), so the prompt
                       and the tool can never disagree
    Working folder     the workspace
    Git                whether the folder is in a repository, and on which branch
    Today's date       from the clock the caller passes in

It is the last section because it is the one that changes: a new day changes
only the last line of the prompt, and everything before it is the same bytes
as yesterday's, which a provider's prefix cache can reuse.

Git is read from files, not by running git: `.git/HEAD` names the branch in one
line, so there is no program to install, no process to start and nothing that
can hang. A worktree's or submodule's `.git` is a file that points at the real
folder. Each is read as the file tools read (regular files only, so a named
pipe cannot hang the start; a few kilobytes at most, so a link to /dev/zero
cannot fill the memory). Anything unexpected is said in the line itself
("unknown (...)"): the environment never stops a run. Left out on purpose:
`git status` and recent commits. They change while the agent works, and a
prompt built once per run would be out of date by the second request.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from chapters.ch02.text_files import NotRegularFile, read_regular_file
from shared import process

_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories
_BRANCH = "ref: refs/heads/"
GIT_FILE_BYTES = 4_096  # of HEAD, or of a .git file: one line naming a branch or a folder


@dataclass(frozen=True)
class Environment:
    system: str
    shell: str
    folder: Path
    git: str
    today: date

    def text(self) -> str:
        return "\n".join(
            [
                "# Environment",
                f"- Operating system: {self.system}",
                f"- Shell: {self.shell} (the shell tool runs each command in it)",
                f"- Working folder: {self.folder} (the workspace; file paths are relative to it)",
                f"- Git: {self.git}",
                f"- Today's date: {self.today.isoformat()}",
            ]
        )


def read_environment(folder: Path, today: date, *, git_ceiling: Path | None = None) -> Environment:
    """The facts for `folder` on `today`. Asks the machine now, never at import.

    `git_ceiling`: look for a repository no higher than this folder (tests use it
    so that a temporary folder is never taken for part of a repository above it).
    """
    return Environment(
        system=operating_system(),
        shell=process.detect_shell().name,
        folder=folder,
        git=git_state(folder, ceiling=git_ceiling),
        today=today,
    )


def operating_system() -> str:
    """Windows exactly when the shell module thinks so; the shell line depends on the same."""
    if process.IS_WINDOWS:
        return "Windows"
    name = platform.system()
    return {"Darwin": "macOS", "": "unknown"}.get(name, name)


def git_state(folder: Path, *, ceiling: Path | None = None) -> str:
    """One line about the repository `folder` is in; never raises."""
    try:
        git_dir = find_git_dir(folder, ceiling)
        if git_dir is None:
            return "not a git repository"
        head = _small_text(git_dir / "HEAD").strip()
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return f"unknown (a .git was found but could not be read: {error})"
    if head.startswith(_BRANCH):
        return f"a repository, on branch {head.removeprefix(_BRANCH)}"
    if _SHA.fullmatch(head):
        return f"a repository, detached HEAD at commit {head[:7]}"
    return f"a repository, HEAD is {head[:80]!r}"


def find_git_dir(folder: Path, ceiling: Path | None = None) -> Path | None:
    """The repository folder for `folder` or the nearest folder above it that has `.git`.

    `.git` is the folder itself, or a file `gitdir: <path>` (a worktree, a submodule)
    whose path may be relative to the folder the file is in.
    """
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.exists():  # a file, or something that has no business being there
            pointer = _small_text(dot_git).strip()
            if not pointer.startswith("gitdir:"):
                raise ValueError(f"{dot_git} is a file that does not start with gitdir:")
            return candidate / pointer.removeprefix("gitdir:").strip()  # an absolute one wins
        if candidate == ceiling:
            return None
    return None


def _small_text(path: Path) -> str:
    """A git file of one line, read as the file tools read (chapters/ch02/text_files.py): a
    regular file only, never more than `GIT_FILE_BYTES`; ValueError otherwise."""
    try:
        data = read_regular_file(path, GIT_FILE_BYTES + 1)
    except NotRegularFile as error:
        raise ValueError(f"{path} is {error}, not a regular file") from None
    if len(data) > GIT_FILE_BYTES:
        raise ValueError(f"{path} is more than {GIT_FILE_BYTES:,} bytes, more than git writes")
    return data.decode("utf-8")

"""The harness's own files: opened so that a planted link cannot send a write somewhere else.

The harness keeps files of its own in folders below the workspace (the audit
log in `.tutorial/`) or the home folder. Anyone who can write in the workspace,
a cloned repository or the model through the shell, can put a link there:
`.tutorial -> /somewhere/else`, `audit.jsonl -> ~/.bashrc`. Followed, the
harness would write where the link points. So every harness file is opened here:

    the folder   resolved one part at a time (chapter 2's `real_path`); it must stay
                 inside the base folder (the workspace, or the home folder), or the
                 file is refused; folders that are missing are made only after that
                 check, so a link that leads out never gets a folder made at its end
    the file     opened with O_NOFOLLOW: a file that is a link is refused, wherever it
                 points (Windows has no O_NOFOLLOW: there, `lstat` is asked just
                 before opening, the best a path can do); opened without blocking,
                 and refused unless it is a regular file, so a named pipe in its place
                 never stops a run

A refusal is an `UnsafeHarnessFile`, an OSError: whoever writes the file already
handles failing to write it, and keeps its own rule for what follows (the audit
log denies the call it could not record).

The check of the folder and the opening of the file are two steps; a link put
in between them is not noticed. O_NOFOLLOW closes that gap for the file itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from chapters.ch02.text_files import NotRegularFile, refuse_unless_regular
from chapters.ch02.workspace import Workspace, is_link, real_path

APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT  # a log: made if missing, written at its end
CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL  # a new file; FileExistsError if name taken
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # 0 on Windows: there, lstat checks instead
_ALWAYS = NO_FOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_LINK_ERRORS = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)}  # O_NOFOLLOW on a link


class UnsafeHarnessFile(OSError):
    """A harness file the harness will not open: `shown` names it, `reason` says why."""

    def __init__(self, shown: str, reason: str) -> None:
        super().__init__(f"{shown} {reason}")
        self.shown, self.reason = shown, reason


def reason(error: OSError, shown: str) -> str:
    """`error` for a message that already names the file `shown`: "it is a link: ..."."""
    if isinstance(error, UnsafeHarnessFile) and error.shown == shown:
        return f"it {error.reason}"
    return str(error)


class LeadsOutside(Exception):
    """A path that resolves, through its links, to `real`: outside the folder it must stay in."""

    def __init__(self, real: Path) -> None:
        super().__init__(f"it leads outside, to {real}")
        self.real = real


def inside_folder(root: Workspace, relative: Path) -> Path:
    """The real path of `relative` below `root`, if it stays inside `root`, else `LeadsOutside`.

    The one check behind every file the harness opens or reads by a trusted name. OSError,
    RuntimeError or ValueError: it cannot be resolved (a link loop, a link to nothing).
    """
    real = real_path(root.root / relative)
    if not root.contains(real):
        raise LeadsOutside(real)
    return real


def harness_folder(base: Path, folder: Path, *, create: bool = False) -> Path:
    """The real path of `base / folder`, checked to be inside `base`; made when `create`.

    `base` is trusted (the caller names the workspace or the home folder); `folder`,
    relative to it, is not. Raises `UnsafeHarnessFile` if the folder leads outside
    `base` or cannot be resolved (a link loop, a link to nothing).
    """
    if create:
        base.mkdir(parents=True, exist_ok=True)
    root = Workspace(base)
    shown = folder.as_posix()
    try:
        real = inside_folder(root, folder)
    except LeadsOutside as error:
        raise UnsafeHarnessFile(
            shown,
            f"leads outside {root.root} (to {error.real}): the harness keeps its files inside "
            "it and does not follow links out",
        ) from None
    except (OSError, RuntimeError, ValueError) as error:
        raise UnsafeHarnessFile(shown, f"cannot be resolved ({error})") from None
    if create:
        real.mkdir(parents=True, exist_ok=True)
    return real


def open_harness_file(base: Path, relative: Path, flags: int, mode: int = 0o666) -> int:
    """A descriptor for the regular file `base / relative`, opened with `flags`, never through
    a link; its folder made first if `flags` has O_CREAT. Raises OSError (an
    `UnsafeHarnessFile` for a link, a folder that leads out, or a file of another kind)."""
    folder = harness_folder(base, relative.parent, create=bool(flags & os.O_CREAT))
    path = folder / relative.name
    shown = relative.as_posix()
    if flags & CREATE_NEW != CREATE_NEW:  # O_EXCL: whatever holds the name, the open fails
        _refuse_unless_plain(path, shown)  # a clear reason on every system, before opening
    try:
        descriptor = os.open(path, flags | _ALWAYS, mode)
    except OSError as error:
        if error.errno in _LINK_ERRORS and is_link(path):  # made a link since the check
            raise _a_link(shown) from None
        raise
    try:
        _refuse_unless_regular(os.fstat(descriptor).st_mode, shown)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _refuse_unless_plain(path: Path, shown: str) -> None:
    """Refuse a link, or a file of another kind than regular, if `path` exists."""
    if is_link(path):
        raise _a_link(shown)
    with contextlib.suppress(FileNotFoundError):
        _refuse_unless_regular(os.stat(path).st_mode, shown)


def _refuse_unless_regular(mode: int, shown: str) -> None:
    try:
        refuse_unless_regular(mode)
    except NotRegularFile as error:
        raise UnsafeHarnessFile(shown, f"is {error}, not a regular file") from None


def _a_link(shown: str) -> UnsafeHarnessFile:
    return UnsafeHarnessFile(
        shown, "is a link: the harness does not open its own files through links"
    )

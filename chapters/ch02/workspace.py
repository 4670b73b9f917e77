"""The workspace boundary: the only way a model-given path becomes a real path.

Every file tool asks `Workspace.resolve`; none of them opens a path the model
wrote. The check is done on the *resolved* path (symlinks followed, `..`
collapsed), because a string check is bypassed by spelling: `src/../../etc`,
a symlink named `docs` that points at `/`, `C:foo`, `\\\\server\\share`.

What is refused, on every platform (a path that means something odd on one
system is refused on all, so a chapter behaves the same for every reader):
    - anything that resolves outside the root (`..` climbs, absolute paths
      elsewhere, symlinks inside the root that point outside);
    - `~` (no home expansion), NUL bytes;
    - Windows drive-relative paths (`C:foo`), drive paths outside the root,
      UNC paths (`\\\\server\\share`, `//server/share`) and device names
      (`CON`, `NUL`, `COM1`, `LPT1`, ...) in any component.

The walking tools use `walk`, which never descends into a symlinked folder and
never yields a file whose real path is outside the root. The shell still has
no boundary at all; chapter 3 adds the policy that governs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$", re.I)
_DRIVE = re.compile(r"^[A-Za-z]:")


class PathOutsideWorkspace(ValueError):
    """A model-given path that the workspace refuses; the message says why."""


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"workspace is not a folder: {root}")

    def resolve(self, raw: str) -> Path:
        """The real path for `raw`, or `PathOutsideWorkspace`. The path need not exist yet."""
        _refuse_by_spelling(raw)
        candidate = Path(raw.replace("\\", "/"))
        real = (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        if not self.contains(real):
            raise PathOutsideWorkspace(f"{raw!r} resolves outside the workspace")
        return real

    def contains(self, real: Path) -> bool:
        """Whether an already resolved path is the root or below it."""
        root, path = os.path.normcase(self.root), os.path.normcase(real)
        return path == root or path.startswith(root.rstrip(os.sep) + os.sep)

    def relative(self, real: Path) -> str:
        """How the model should write this path: relative to the root, with `/`."""
        return real.relative_to(self.root).as_posix() or "."

    def walk(self, start: Path) -> Iterator[Path]:
        """Every file below `start`: no VCS folders, no symlinked folders, nothing outside."""
        for folder, dirs, files in os.walk(start, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in VCS_FOLDERS)
            for name in sorted(files):
                path = Path(folder, name)
                if path.is_symlink() and not self.contains(path.resolve()):
                    continue  # a link that leads out of the workspace is not followed
                yield path


def _refuse_by_spelling(raw: str) -> None:
    """Refuse what must never reach the file system, before any resolving."""
    if not raw or not raw.strip():
        raise PathOutsideWorkspace("the path is empty")
    if "\0" in raw:
        raise PathOutsideWorkspace("the path contains a NUL byte")
    if raw.startswith("~"):
        raise PathOutsideWorkspace(f"{raw!r} starts with ~; home folders are not expanded")
    unified = raw.replace("\\", "/")
    if unified.startswith("//"):
        raise PathOutsideWorkspace(f"{raw!r} is a UNC or network path")
    if _DRIVE.match(unified) and os.name != "nt":
        raise PathOutsideWorkspace(f"{raw!r} is a Windows drive path")
    if _DRIVE.match(unified) and not unified[2:3] == "/":
        raise PathOutsideWorkspace(f"{raw!r} is drive-relative (C:foo means 'C:, current folder')")
    for part in unified.split("/"):
        if _DEVICE.match(part.rstrip(" .")):
            raise PathOutsideWorkspace(f"{raw!r} names a Windows device ({part})")

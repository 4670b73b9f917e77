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
      (`CON`, `NUL`, `COM1`, `LPT1`, ...) in any component;
    - control characters and line breaks, and paths too deep (path_text.py):
      the tools' arguments are typed `PathText`, so these are refused as
      `invalid_arguments` while a call is validated, before anything else.

The walking tools use `walk`, which never descends into a symlinked folder and
never yields a file whose real path is outside the root; it passes over what is
not the project's (the agent's own `HARNESS_FOLDER`, what `.gitignore` ignores),
and a listing shows each name through `path_text.printable`, one per line. A path
that cannot be resolved at all is refused too: a symlink loop anywhere in it
(even one that a later `..` seems to cancel), a dangling symlink, a folder that
cannot be looked into, an unencodable name. Resolving goes one part at a time (`real_path`), not
through `os.path.realpath`, which before Python 3.13 stops at a loop and treats
the rest as text. The shell still has no boundary at all: nothing in this module
governs what a command does.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from chapters.ch02.ignore_files import IgnoreRules
from chapters.ch02.path_text import path_problem

HARNESS_FOLDER = ".tutorial"  # the agent's own files (settings, logs): not the project's
VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$", re.I)
_DRIVE = re.compile(r"^[A-Za-z]:")
_JUNCTION = 0xA0000003  # IO_REPARSE_TAG_MOUNT_POINT: a Windows junction, followed like a link


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
        try:
            real = real_path(candidate if candidate.is_absolute() else self.root / candidate)
        except (OSError, RuntimeError, ValueError) as error:  # a symlink loop, a lone surrogate
            raise PathOutsideWorkspace(f"{raw!r} cannot be resolved ({error})") from None
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

    def walk(self, start: Path, *, everything: bool = False) -> Iterator[tuple[str, str]]:
        """(path, root-relative path) of every file below `start`, in name order.

        No VCS folders; a symlinked folder is never entered; a symlinked file is
        listed only if its target is inside the root. Unless `everything`, what is
        not the project's is passed over too: folders named `HARNESS_FOLDER` (the
        agent's own files) and what the `.gitignore` files ignore. `start` itself is
        always walked, so naming such a folder is how to search it. `os.scandir`
        answers the type questions from the directory listing itself, without a stat
        per file, which keeps grep near `grep -rn` (scripts/bench_file_tools.py).
        """
        top = self.relative(start)
        passed_over = VCS_FOLDERS if everything else VCS_FOLDERS | {HARNESS_FOLDER}
        rules = IgnoreRules() if everything else self._rules_above(start)
        stack = [(str(start), "" if top == "." else top + "/", rules)]
        while stack:
            folder, prefix, rules = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
            except OSError:
                continue  # unreadable folders are skipped, like grep -s
            if not everything:
                rules = rules.below(prefix, entries)
            folders = []
            for entry in entries:
                relative = prefix + entry.name  # str: a Path per file costs
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in passed_over and not rules.ignores(relative, True):
                        folders.append((entry.path, relative + "/", rules))
                elif (
                    entry.is_file(follow_symlinks=False) or self._file_link_inside(entry)
                ) and not rules.ignores(relative, False):
                    yield entry.path, relative
            stack.extend(reversed(folders))

    def _rules_above(self, start: Path) -> IgnoreRules:
        """The `.gitignore` rules in force where a walk starts below the root.

        Those of the folders above it, as git reads them; but a folder that they
        ignore is searched when it is named, so from there on only its own rules
        and those below it count.
        """
        rules, prefix, folder = IgnoreRules(), "", self.root
        for part in start.relative_to(self.root).parts:
            with contextlib.suppress(OSError):  # a folder that cannot be listed: no rules
                rules = rules.below(prefix, list(os.scandir(folder)))
            prefix, folder = f"{prefix}{part}/", folder / part
            if rules.ignores(prefix.removesuffix("/"), True):
                rules = IgnoreRules()
        return rules

    def _file_link_inside(self, entry: os.DirEntry[str]) -> bool:
        """A symlink to a file whose target is inside the root (loops and the rest: no)."""
        if not entry.is_symlink():
            return False
        try:
            return entry.is_file() and self.contains(
                Path(os.path.realpath(entry.path, strict=True))
            )
        except (OSError, RuntimeError, ValueError):
            return False


def real_path(path: Path) -> Path:
    """`path` (absolute) with every symlink followed and every `..` applied, one part at a time.

    Why not `Path.resolve()`: before Python 3.13, `os.path.realpath` (which it uses)
    stops at a symlink loop and returns the rest as text, normalised, so in
    `loop/../out/s.txt` the `..` cancels `loop` on paper and the link `out` is
    followed later, by whoever opens the path. Here each existing part is looked at
    with `lstat`; a link is resolved at once, strictly (a loop or a dangling target
    raises), before any `..` after it is applied. A part that does not exist yet
    (a file to be created, its new folders) is kept as written, and the parts after
    it are still checked, so `new/../out` cannot smuggle a link through either.
    """
    real = Path(path.anchor)
    for part in path.parts[1:]:  # pathlib has already dropped "." and empty parts
        if part == "..":
            real = real.parent
            continue
        real = real / part
        if is_link(real):
            real = Path(os.path.realpath(real, strict=True))  # ELOOP / not found: raises
    return real


def is_link(path: Path) -> bool:
    """Whether `path` is a symlink (or, on Windows, a junction); False if it does not exist.

    Any other failure to look (no permission on a folder, a name too long) raises:
    a part the boundary cannot see is a part it cannot vouch for.
    """
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False  # not there (yet): nothing to follow
    if stat.S_ISLNK(info.st_mode):
        return True
    return bool(getattr(info, "st_reparse_tag", 0) == _JUNCTION)  # st_reparse_tag: Windows only


def _refuse_by_spelling(raw: str) -> None:
    """Refuse what must never reach the file system, before any resolving."""
    if not raw or not raw.strip():
        raise PathOutsideWorkspace("the path is empty")
    if "\0" in raw:
        raise PathOutsideWorkspace("the path contains a NUL byte")
    if problem := path_problem(raw):  # the tools' arguments refused it already: for callers
        raise PathOutsideWorkspace(problem)
    if raw.startswith("~"):
        raise PathOutsideWorkspace(f"{raw!r} starts with ~; home folders are not expanded")
    unified = raw.replace("\\", "/")
    if unified.startswith("//"):
        raise PathOutsideWorkspace(f"{raw!r} is a UNC or network path")
    if _DRIVE.match(unified) and os.name != "nt":
        raise PathOutsideWorkspace(f"{raw!r} is a Windows drive path")
    if _DRIVE.match(unified) and not unified[2:3] == "/":
        raise PathOutsideWorkspace(
            f"{raw!r} is drive-relative (a drive letter without a slash means that drive's "
            "current folder)"
        )
    for part in unified.split("/"):
        if _DEVICE.match(part.rstrip(" .")):
            raise PathOutsideWorkspace(f"{raw!r} names a Windows device ({part})")

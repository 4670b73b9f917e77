"""The harness's control files: what it obeys and what it keeps, written only with a human's yes.

A settings file decides what the next run may do: its allow rules, its
defaultMode, whatever else the harness reads from it. The audit log is the
record of what this run did. If the agent could write them, one write in
accept-edits mode would grant the next run anything, in any mode. So a call
that writes one of these files, or a command whose text names one, is asked
about every time (the policy's "control files" layer): no mode, no allow rule
and no earlier "always" answer lets it through, and with nobody to ask it is
denied. Deny rules and plan mode are heard first and still deny.

Chapter 3 protects what it reads and writes:

    .tutorial/settings.json, .tutorial/settings.local.json    in the workspace
    ~/.tutorial/settings.json, ~/.tutorial/settings.local.json  in your home folder
    .tutorial/audit.jsonl                                      the audit log

Whatever else a harness comes to obey (programs its settings name, folders
of definitions it loads) is added where it is wired: `Policy.protecting`.

How a call is matched:

    a path      the file it resolves to (through links, and Windows' short names) and
                the name as written, compared without case: a control file, or anything
                in a control folder
    a command   its text, quotes and escapes removed, compared without case: it names
                a control file, its name, or the folder it is in (`.tutorial`), or a
                glob in it that starts with a dot would match one of those (`.tut*`); in
                PowerShell, whose `*` matches dot names too, any glob that would (`*\\s*`)

The command check reads text. A command that builds a name as it runs (a
variable's value, a program that writes the file) is beyond what text shows:
that is what an allow rule on an interpreter, or bypass mode, still hands over.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chapters.ch03.audit import AUDIT_FILE
from shared.process import IS_WINDOWS

HARNESS_FOLDER = Path(".tutorial")  # below the workspace, and below your home folder
SETTINGS_FILES = (HARNESS_FOLDER / "settings.json", HARNESS_FOLDER / "settings.local.json")
_NAME_CHARACTERS = r"[\w.-]"  # what a name may touch on either side and still be another name
# A path component that starts with a dot and holds a glob (`.tut*`) or a brace expansion
# (`.tu{t,}orial`, which bash expands before it runs anything): a shell matches a name that
# starts with a dot only with a pattern that does, so `*` alone never reaches `.tutorial`.
_COMPONENT = r"[^\s/;&|<>()=:,]"
_BRACES = re.compile(r"\{[^{}\s]*\}")  # compared as `*`: it may expand to anything
_PART = rf"(?:{_COMPONENT}|{_BRACES.pattern})"
_DOT_GLOB = re.compile(rf"(?<!{_COMPONENT})\.{_PART}*(?:[*?\[]|{_BRACES.pattern}){_PART}*")
# PowerShell, the shell on Windows (shared/process.py), matches `*` against names that start
# with a dot as well: there any glob in a component may reach `.tutorial`.
GLOBS_MATCH_DOT_NAMES = IS_WINDOWS
_ANY_GLOB = re.compile(rf"(?<!{_COMPONENT}){_PART}*(?:[*?\[]|{_BRACES.pattern}){_PART}*")


@dataclass(frozen=True)
class ControlFile:
    """One protected file, or folder (everything below it)."""

    path: Path  # absolute
    shown: str  # how people write it: ".tutorial/settings.json", "~/.tutorial/settings.json"
    folder: bool = False
    # What a command must mention to be taken as touching it, the most telling first:
    # its path as shown, its name, and the folder it is in below the workspace or home
    # folder (`.tutorial`); without case.
    names: tuple[str, ...] = ()
    _forms: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        forms = {_comparable(self.path), _comparable(Path(os.path.realpath(self.path)))}
        object.__setattr__(self, "_forms", tuple(sorted(forms)))

    def holds(self, path: Path) -> bool:
        """Whether writing `path` (absolute) writes this file, or into this folder.

        `path` is also compared as the system names it (`os.path.realpath`): on Windows
        that turns a short name (`TUTORI~1`, which 8.3 names give `.tutorial`) into the
        long one, which no text comparison would.
        """
        candidates = {_comparable(path), _comparable(Path(os.path.realpath(path)))}
        return any(
            candidate == form or (self.folder and candidate.startswith(form.rstrip("/") + "/"))
            for candidate in candidates
            for form in self._forms
        )


def control_file(
    root: Path, relative: Path, shown_root: str = "", folder: bool = False
) -> ControlFile:
    """`relative` below `root` (the workspace, or the home folder shown as "~/")."""
    shown = shown_root + relative.as_posix() + ("/" if folder else "")
    spelled = (shown.rstrip("/"), relative.name, relative.parts[0])
    names = tuple(dict.fromkeys(name.casefold() for name in spelled if name))
    return ControlFile(root / relative, shown, folder, names)


def in_workspace_and_home(
    workspace: Path, home: Path, relative: Path, *, folder: bool = False
) -> list[ControlFile]:
    """The same file (or folder) in both places the harness reads it from."""
    return [
        control_file(workspace, relative, folder=folder),
        control_file(home, relative, "~/", folder=folder),
    ]


def harness_files(workspace: Path, home: Path) -> list[ControlFile]:
    """What chapter 3 protects: both settings files in both places, and the audit log."""
    files = [
        f for relative in SETTINGS_FILES for f in in_workspace_and_home(workspace, home, relative)
    ]
    return [*files, control_file(workspace, AUDIT_FILE)]


@dataclass(frozen=True)
class ControlFiles:
    files: tuple[ControlFile, ...] = ()

    def adding(self, files: Iterable[ControlFile]) -> ControlFiles:
        return ControlFiles((*self.files, *files))

    def written(self, path: Path) -> ControlFile | None:
        """The control file that a write to `path` (absolute) would change, if any."""
        return next((f for f in self.files if f.holds(path)), None)

    def named_in(self, command: str) -> ControlFile | None:
        """The control file a command's text names, if any (see the module docstring)."""
        texts = _readings(command)
        # The most telling name first: a whole path before a file's name before its folder,
        # and the longer of two paths (`~/.tutorial/settings.json` holds `.tutorial/settings.json`).
        named = [
            (rank, -len(n), i, n)
            for i, f in enumerate(self.files)
            for rank, n in enumerate(f.names)
        ]
        for _, _, i, name in sorted(named):
            pattern = rf"(?<!{_NAME_CHARACTERS}){re.escape(name)}(?!{_NAME_CHARACTERS})"
            if any(re.search(pattern, text) for text in texts):
                return self.files[i]
        globbing = _ANY_GLOB if GLOBS_MATCH_DOT_NAMES else _DOT_GLOB
        globs = {_BRACES.sub("*", glob) for text in texts for glob in globbing.findall(text)}
        for file in self.files:
            if any(fnmatch.fnmatchcase(name, glob) for glob in globs for name in file.names):
                return file
        return None


def _readings(command: str) -> tuple[str, ...]:
    """The command as a shell might read the names in it: without case, with backslashes as
    path separators (Windows), and with quotes and escapes dropped (`.tut''orial`)."""
    text = command.casefold()
    return (text.replace("\\", "/"), re.sub(r"[\"'`\\]", "", text))


def _comparable(path: Path) -> str:
    """A path as compared with a control file: without case, as posix, and without what
    Windows ignores at the end of a name (trailing dots and spaces) or reads as a stream of
    it, in any part: `settings.json::$DATA` is the file, `.tutorial::$INDEX_ALLOCATION` the
    folder. (A drive's `c:` loses its colon too, in both paths compared.)"""
    parts = [part.split(":", 1)[0] for part in path.as_posix().casefold().split("/")]
    return "/".join(p.rstrip(". ") if p not in (".", "..") else p for p in parts)

"""What the project's `.gitignore` files keep out of a search.

A search from the root should find the project, not its build output or a
virtual environment of ten thousand files. git already knows which files those
are: the `.gitignore` files. Each one is read once, when the walk enters its
folder, and applies to what is below that folder; a deeper file has the last
word (`!keep.log` below overrides `*.log` above), as in git. Patterns are
matched by `pathspec`'s gitignore implementation: hand-written glob rules always
differ from git's somewhere.

Not read: `.git/info/exclude` and your global excludes (they are yours, not the
project's), and a `.gitignore` that is a link or larger than
`MAX_IGNORE_FILE_BYTES` (its rules are not applied, so nothing is hidden by it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chapters.ch02.text_files import READ_FLAGS

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".gitignore"
MAX_IGNORE_FILE_BYTES = 256 * 1024
_GROUP_NAME = re.compile(r"\(\?P<\w+>")  # the rules' named groups clash once joined


@dataclass(frozen=True)
class Rules:
    """One `.gitignore`: its folder (root-relative, `""` or `"src/"`; its patterns are
    relative to it), its rules, and one regex that matches whatever any rule matches."""

    prefix: str
    spec: GitIgnoreSpec
    any_rule: re.Pattern[str]


@dataclass(frozen=True)
class IgnoreRules:
    """The `.gitignore` files that apply in one folder of a walk, outermost first."""

    files: tuple[Rules, ...] = ()

    def ignores(self, relative: str, is_dir: bool) -> bool:
        """Whether the entry at root-relative `relative` is ignored (the deepest rule decides).

        Most entries match no rule at all: one search of the combined regex says so,
        instead of one per rule; only a hit asks pathspec which rule wins.
        """
        for rules in reversed(self.files):
            name = relative[len(rules.prefix) :] + ("/" if is_dir else "")
            if rules.any_rule.search(name) is None:
                continue
            result = rules.spec.check_file(name)
            if result.include is not None:
                return bool(result.include)
        return False

    def below(self, prefix: str, entries: Iterable[os.DirEntry[str]]) -> IgnoreRules:
        """The rules inside the folder whose root-relative `prefix` and listing are given:
        these, and those of its own `.gitignore` if it has one (a regular file, not a link)."""
        for entry in entries:
            if entry.name == IGNORE_FILE and entry.is_file(follow_symlinks=False):
                rules = compile_rules(prefix, read_ignore_file(entry.path))
                return IgnoreRules((*self.files, rules)) if rules is not None else self
        return self


def read_ignore_file(path: str) -> list[str]:
    """The lines of one `.gitignore`: none if it cannot be read or is over the bound."""
    try:
        descriptor = os.open(path, READ_FLAGS)
    except OSError:
        return []
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IGNORE_FILE_BYTES:
            return []
        data = os.read(descriptor, MAX_IGNORE_FILE_BYTES + 1)
    except OSError:
        return []
    finally:
        os.close(descriptor)
    return data.decode("utf-8", errors="replace").splitlines()


def compile_rules(prefix: str, lines: Iterable[str]) -> Rules | None:
    """The rules of these lines (a line git would reject is left out); None if there are none."""
    from pathspec import GitIgnoreSpec, RegexPattern  # only when a project has a .gitignore

    kept = []
    for line in lines:
        try:
            GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        kept.append(line)
    spec = GitIgnoreSpec.from_lines(kept)
    regexes = [
        _GROUP_NAME.sub("(?:", pattern.regex.pattern)
        for pattern in spec.patterns
        if pattern.include is not None and isinstance(pattern, RegexPattern) and pattern.regex
    ]
    if not regexes:
        return None
    return Rules(prefix, spec, re.compile("|".join(f"(?:{regex})" for regex in regexes)))

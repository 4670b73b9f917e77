"""`python -m tutorial diff --chapter N`: what chapter N adds.

A chapter imports what it keeps and writes only what it changes, so its own
folder *is* what it adds. Each of its files is either new, and shown whole, or
declares in its module docstring the earlier file it grows from:

    Extends: chapters/ch04/agent.py

and is shown as a unified diff against exactly that file (a composition
module against the previous chapter's, say). A file is never compared with
an unrelated one that happens to share its name. Tests are listed, not shown:
they are how the chapter proves its promises, not what it teaches.

After the files comes what they add up to: the chapter's recipe listing
(tutorial/recipe_listing.py) against the one of the recipe it extends, since a
part added in one file and ordered before another's shows only there.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from tutorial.catalog import CHAPTERS_ROOT, Chapter

REPOSITORY = CHAPTERS_ROOT.parent
EXTENDS = re.compile(r"^Extends: (chapters/ch(\d\d)/\S+\.py)\s*$", re.M)


class DeclarationError(ValueError):
    """A file declares a base that does not exist or is not in an earlier chapter."""


@dataclass(frozen=True)
class ChapterFile:
    path: Path
    base: Path | None  # the earlier file it extends; None: new

    @property
    def name(self) -> str:
        return self.path.relative_to(REPOSITORY).as_posix()

    def diff(self) -> str:
        old = _lines(self.base) if self.base else []
        from_name = self.base.relative_to(REPOSITORY).as_posix() if self.base else "/dev/null"
        return "".join(difflib.unified_diff(old, _lines(self.path), from_name, self.name))

    def counts(self) -> tuple[int, int]:
        """Lines added and removed against the base (all lines, for a new file)."""
        added = removed = 0
        for line in self.diff().splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed


def chapter_files(chapter: Chapter) -> tuple[list[ChapterFile], list[Path]]:
    """The chapter's source files with what each extends, and its test files."""
    files = sorted(p for p in chapter.folder.rglob("*.py") if "__pycache__" not in p.parts)
    tests = [p for p in files if "tests" in p.relative_to(chapter.folder).parts]
    sources = [ChapterFile(p, declared_base(p, chapter.number)) for p in files if p not in tests]
    return sources, tests


def declared_base(path: Path, number: int) -> Path | None:
    """The file named by `Extends:` in the module docstring, checked to be earlier."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    match = EXTENDS.search(docstring)
    if match is None:
        return None
    base = REPOSITORY / match[1]
    if int(match[2]) >= number or not base.is_file():
        raise DeclarationError(
            f"{path.as_posix()} extends {match[1]}, which is not a file of an earlier chapter"
        )
    return base


def chapter_diff(chapter: Chapter) -> str:
    sources, tests = chapter_files(chapter)
    parts = [_summary(chapter, sources, tests)]
    parts += [source.diff() for source in sources]
    parts.append(recipe_diff(chapter))
    return "\n".join(part for part in parts if part)


def recipe_diff(chapter: Chapter) -> str:
    """The chapter's recipe listing against its base's; the first recipe's, whole.
    Empty for a chapter whose agent.py has no recipe yet."""
    listings = _listings(chapter)
    if listings is None:
        return ""
    base, (old, new) = listings
    if base is None:
        return f"# recipe of chapter {chapter.number} (python -m tutorial recipe)\n{new}"
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"recipe of chapter {base}",
            f"recipe of chapter {chapter.number}",
        )
    )


def recipe_stat(chapter: Chapter) -> str:
    """`--stat`'s line for the recipe listing; empty without a recipe."""
    listings = _listings(chapter)
    if listings is None:
        return ""
    base, (old, new) = listings
    if base is None:
        return f"recipe: +{len(new.splitlines())} lines (the first recipe)"
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"recipe: +{added} -{removed} lines against chapter {base}'s"


def _listings(chapter: Chapter) -> tuple[int | None, tuple[str, str]] | None:
    """The chapter its recipe extends (None: none) and both listings ("" for none), read
    from the checked-in files, so that `diff` imports no chapter; None without a listing."""
    if not chapter.listing.exists():
        return None
    new = chapter.listing.read_text(encoding="utf-8")
    extending = re.search(r"extending chapter (\d+)'s", new.partition("\n")[0])
    if extending is None:
        return None, ("", new)
    base = int(extending.group(1))
    old = Chapter(base, "", "").listing.read_text(encoding="utf-8")
    return base, (old, new)


def chapter_stat(chapter: Chapter) -> str:
    """One line per file: new or what it extends, and the lines it adds and removes."""
    sources, tests = chapter_files(chapter)
    width = max((len(source.name) for source in sources), default=0)
    rows, total_added, total_removed = [], 0, 0
    for source in sources:
        added, removed = source.counts()
        total_added, total_removed = total_added + added, total_removed + removed
        how = f"extends {source.base.relative_to(REPOSITORY).as_posix()}" if source.base else "new"
        change = f"+{added}" + (f" -{removed}" if source.base else "")
        rows.append(f"{source.name:<{width}}  {change:>9}  {how}")
    rows.append(recipe_stat(chapter))  # before the total, which counts the files' lines
    new = sum(source.base is None for source in sources)
    rows.append(
        f"{len(sources)} files ({new} new, {len(sources) - new} extending), "
        f"+{total_added} -{total_removed} lines; {len(tests)} test files"
    )
    return "\n".join(row for row in rows if row)


def _summary(chapter: Chapter, sources: list[ChapterFile], tests: list[Path]) -> str:
    lines = sum(len(_lines(source.path)) for source in sources)
    extending = [
        f"{s.path.name} extends {s.base.relative_to(REPOSITORY).as_posix()}"
        for s in sources
        if s.base
    ]
    test_names = ", ".join(p.name for p in tests if p.name != "__init__.py")
    return (
        f"# Chapter {chapter.number} ({chapter.title}): {len(sources)} files, {lines} lines; "
        f"{'; '.join(extending) if extending else 'every file is new'}\n"
        f"# tests (run: pytest chapters/{chapter.folder.name}): {test_names or 'none'}\n"
    )


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return text.splitlines(keepends=True) if text else []

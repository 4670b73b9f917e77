"""`python -m tutorial diff --chapter N`: what chapter N adds to chapter N-1.

A chapter imports what it keeps and writes only what it changes, so its own
folder *is* what it adds. A file with the same name in an earlier chapter (the
nearest one that has it: usually the loop, shown whole again on purpose) is
shown as a unified diff against it; every other file is new and shown in full. Tests are listed, not
shown: they are how the chapter proves its promises, not what it teaches.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from tutorial.catalog import CHAPTERS, Chapter


def chapter_diff(chapter: Chapter) -> str:
    previous = next((c for c in CHAPTERS if c.number == chapter.number - 1), None)
    sources, tests = _chapter_files(chapter.folder)
    parts = [_summary(chapter, previous, sources, tests)]
    for path in sources:
        relative = path.relative_to(chapter.folder)
        before = _latest_earlier(chapter, relative)
        old_lines, from_name = [], "/dev/null"
        if before is not None:
            old_lines = _lines(before)
            from_name = f"chapters/{before.parent.name}/{relative.as_posix()}"
        to_name = f"chapters/{chapter.folder.name}/{relative.as_posix()}"
        parts.append("".join(difflib.unified_diff(old_lines, _lines(path), from_name, to_name)))
    return "\n".join(part for part in parts if part)


def _latest_earlier(chapter: Chapter, relative: Path) -> Path | None:
    """The same file in the nearest earlier chapter that has one (the loop skips chapters)."""
    earlier = sorted((c for c in CHAPTERS if c.number < chapter.number), key=lambda c: -c.number)
    for candidate in (c.folder / relative for c in earlier):
        if candidate.is_file():
            return candidate
    return None


def _chapter_files(folder: Path) -> tuple[list[Path], list[Path]]:
    files = sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
    tests = [p for p in files if "tests" in p.relative_to(folder).parts]
    return [p for p in files if p not in tests], tests


def _summary(
    chapter: Chapter, previous: Chapter | None, sources: list[Path], tests: list[Path]
) -> str:
    base = f"chapter {previous.number}" if previous else "nothing (the first chapter)"
    lines = sum(len(_lines(p)) for p in sources)
    test_names = ", ".join(p.name for p in tests if p.name != "__init__.py")
    return (
        f"# Chapter {chapter.number} ({chapter.title}) against {base}: "
        f"{len(sources)} files, {lines} lines\n"
        f"# tests (run: pytest chapters/{chapter.folder.name}): {test_names or 'none'}\n"
    )


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return text.splitlines(keepends=True) if text else []

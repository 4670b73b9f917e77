"""Build the course site into site/: the chapter texts, every chapter's code, each chapter's diff.

    python scripts/with_venv.py --site python scripts/build_site.py

The texts in docs/ stay plain Markdown that reads well on any viewer, so this
script stages a copy of them in build/site-src/ together with pages it
generates, then runs `mkdocs build --strict` (Material theme) on that copy:

- every file under chapters/, shared/ and tutorial/ becomes a highlighted page
  (`chapters/ch01/loop.py` -> `chapters/ch01/loop.py/`) with an anchor per line
  (`#L12`) and per top-level function, class, method and assignment
  (`#run_agent`, `#Workspace.resolve`, `#SYSTEM_PROMPT`);
- each chapter gets a page listing its files and a page with its
  `python -m tutorial diff` output;
- each chapter page (text, code, diff) shows the chapter's English abstract
  from the README's "Chapters" table and links to the previous and next chapter;
- a link in a text that leaves docs/ (`../chapters/ch01/loop.py#run_agent`) is
  rewritten to the generated page, and the build fails if the file or the
  anchor does not exist (docs/CONTRIBUTING.md has the scheme).

Warnings are errors, nothing is fetched from the network, and the result
loads nothing from any other host.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import html
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pygments import highlight  # noqa: E402
from pygments.formatters import HtmlFormatter  # noqa: E402
from pygments.lexer import Lexer  # noqa: E402
from pygments.lexers import get_lexer_for_filename  # noqa: E402
from pygments.lexers.special import TextLexer  # noqa: E402
from pygments.util import ClassNotFound  # noqa: E402

from tutorial.catalog import CHAPTERS, Chapter, find_chapter  # noqa: E402
from tutorial.diff import chapter_diff  # noqa: E402

DOCS = ROOT / "docs"
README = ROOT / "README.md"
CONFIG = ROOT / "mkdocs.yml"
ASSETS = ROOT / "scripts" / "site"
BUILD = ROOT / "build"
STAGE = BUILD / "site-src"
GENERATED_CONFIG = BUILD / "mkdocs.yml"
SITE = ROOT / "site"
CODE_ROOTS = ("chapters", "shared", "tutorial")
SKIPPED_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}

LINE_ANCHOR = re.compile(r"L(\d+)(?:-L(\d+))?")
TEXT_NAME = re.compile(r"ch(\d\d)-[\w-]+\.md")
# Markdown link targets: [text](target "title"), ![alt](target), [id]: target, href/src="..."
INLINE_LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\]\()(<[^>]*>|[^()\s]*(?:\([^()\s]*\))?)")
REFERENCE_LINK = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*)(<[^>]*>|\S+)", re.MULTILINE)
HTML_LINK = re.compile(r"""(<(?:a|img|source)\b[^>]*?\b(?:href|src)=)("[^"]*"|'[^']*')""")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:[^\n]|\n(?![ \t]*\n))*?(?<!`)\1(?!`)")  # not past a blank line
DETAILS = re.compile(r"<details(?![^>]*\bmarkdown=)([^>]*)>")
REMOTE_ASSET = re.compile(
    r"""<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc=["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref=["']?(?:https?:)?//|@import\s+url\(["']?(?:https?:)?//""",
    re.IGNORECASE,
)


class SiteError(Exception):
    """Something in the repository keeps the site from being built; the message says what."""


# --- the code pages ------------------------------------------------------------------


@dataclass
class CodeFile:
    """One file of chapters/, shared/ or tutorial/, and the page that shows it."""

    path: str  # repository-relative, with slashes: chapters/ch01/loop.py
    text: str
    symbols: dict[str, int] = field(default_factory=dict)  # anchor name -> line

    @property
    def page(self) -> str:
        return self.path + ".md"

    @property
    def line_count(self) -> int:
        return len(self.text.splitlines())

    @property
    def is_test(self) -> bool:
        return "tests" in self.path.split("/")[:-1]

    def anchor_error(self, anchor: str) -> str | None:
        """Why `#anchor` does not exist on this file's page, or None when it does."""
        if anchor in self.symbols:
            return None
        lines = LINE_ANCHOR.fullmatch(anchor)
        if lines:
            numbers = [int(n) for n in lines.groups() if n is not None]
            bad = [n for n in numbers if not 1 <= n <= self.line_count]
            if bad:
                return f"{self.path} has lines 1-{self.line_count}"
            return None if numbers == sorted(numbers) else f"the range {anchor} runs backwards"
        near = difflib.get_close_matches(anchor, self.symbols, n=3)
        hint = f"; did you mean {', '.join('#' + n for n in near)}?" if near else ""
        return f"{self.path} has no line or top-level name '{anchor}'{hint}"


def collect_code() -> dict[str, CodeFile]:
    files: dict[str, CodeFile] = {}
    for root in CODE_ROOTS:
        for path in sorted((ROOT / root).rglob("*")):
            relative = path.relative_to(ROOT)
            if not path.is_file() or SKIPPED_PARTS.intersection(relative.parts):
                continue
            if root == "chapters" and len(relative.parts) < 3:
                continue  # chapters/__init__.py: nothing to read
            if path.suffix in (".pyc", ".pyo") or path.name.startswith("."):
                continue
            text = path.read_text(encoding="utf-8")
            code = CodeFile(relative.as_posix(), text)
            if path.suffix == ".py":
                code.symbols = python_symbols(text, code.path)
            files[code.path] = code
    return files


def python_symbols(text: str, name: str) -> dict[str, int]:
    """Top-level functions, classes (and their methods, nested classes) and assigned names.

    A decorated definition is anchored at its first decorator, so the reader
    who follows a link sees the decorators too.
    """
    symbols: dict[str, int] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                symbols.setdefault(prefix + node.name, line)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")
            elif not prefix and isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        symbols.setdefault(target.id, node.lineno)

    visit(ast.parse(text, filename=name).body, "")
    return symbols


def highlighted_lines(code: CodeFile) -> list[str]:
    """The file as HTML, one string per source line, every <span> closed on its line."""
    lexer: Lexer
    try:
        lexer = get_lexer_for_filename(code.path, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    if not code.text:
        return []
    rendered = str(highlight(code.text, lexer, HtmlFormatter(nowrap=True)))
    lines = rendered.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != code.line_count:  # a lexer that merged or split lines
        lines = [html.escape(line) for line in code.text.splitlines()]
    return lines


def code_page(code: CodeFile, box: str) -> str:
    by_line: dict[int, list[str]] = {}
    for symbol, number in code.symbols.items():
        by_line.setdefault(number, []).append(symbol)
    rows = []
    for number, line in enumerate(highlighted_lines(code), start=1):
        anchors = "".join(f'<span class="sym" id="{n}"></span>' for n in by_line.get(number, []))
        rows.append(
            f'<span class="ln" id="L{number}">{anchors}'
            f'<a class="ln-n" href="#L{number}" data-n="{number}"></a>{line}</span>'
        )
    names = " · ".join(f"[`{name}`](#{name})" for name in code.symbols if "." not in name)
    parts = [
        front_matter(code.path, exclude_from_search=code.is_test, hide_toc=True),
        f"# {code.path}\n",
        box,
        f"{code.line_count} 行 lines" + (f" · {names}" if names else ""),
        "",
        '<div class="highlight code-page"><pre><code>' + "\n".join(rows) + "</code></pre></div>",
        "",
    ]
    return "\n".join(parts)


def front_matter(title: str, exclude_from_search: bool = False, hide_toc: bool = False) -> str:
    lines = ["---", f"title: {quote_yaml(title)}"]
    if exclude_from_search:
        lines += ["search:", "  exclude: true"]
    if hide_toc:
        lines += ["hide:", "  - toc"]
    return "\n".join([*lines, "---", ""])


def quote_yaml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- the chapters --------------------------------------------------------------------


@dataclass
class ChapterPages:
    chapter: Chapter
    text: str  # docs/chNN-....md
    title: str  # from the README's Chapters table
    abstract: str  # the rest of the README's row, Markdown

    @property
    def folder(self) -> str:
        return f"chapters/ch{self.chapter.number:02d}"

    @property
    def label(self) -> str:
        return f"第 {self.chapter.number} 章 {self.chapter.title_zh}"


def collect_chapters() -> list[ChapterPages]:
    """The ready chapters: each has exactly one text in docs/ and a row in the README."""
    rows = readme_rows()
    texts: dict[int, list[str]] = {}
    for path in sorted(DOCS.glob("ch*.md")):
        match = TEXT_NAME.fullmatch(path.name)
        if match:
            texts.setdefault(int(match.group(1)), []).append(f"docs/{path.name}")
    pages = []
    for chapter in (c for c in CHAPTERS if c.ready):
        found = texts.pop(chapter.number, [])
        if len(found) != 1:
            raise SiteError(
                f"chapter {chapter.number} is ready, so docs/ needs exactly one "
                f"ch{chapter.number:02d}-NAME.md; found {found or 'none'}"
            )
        if found[0] not in rows:
            raise SiteError(f"README.md's Chapters table has no row that links to {found[0]}")
        title, abstract = rows[found[0]]
        pages.append(ChapterPages(chapter, found[0], title, abstract))
    for number, found in texts.items():
        raise SiteError(f"{found[0]} is the text of chapter {number}, which is not ready")
    return pages


def readme_rows() -> dict[str, tuple[str, str]]:
    """README "Chapters" rows that link a text: docs path -> (title, abstract)."""
    rows: dict[str, tuple[str, str]] = {}
    row = re.compile(r"^\|\s*\d+\s*\|\s*\[([^\]]+)\]\((docs/[^)\s]+)\):?\s*(.*?)\s*\|[^|]*\|\s*$")
    for line in README.read_text(encoding="utf-8").splitlines():
        match = row.match(line)
        if match:
            title, target, abstract = match.groups()
            rows[target] = (title, abstract)
    return rows


def chapter_box(pages: ChapterPages, chapters: list[ChapterPages], at: str) -> str:
    """The chapter's English abstract and its links, for every page of the chapter."""
    index = chapters.index(pages)

    def link(target: str) -> str:
        return relative_link(at, target)

    links = [
        f"[{name}]({link(target)})"
        for name, target in (
            ("讲义 Text", stage_path(pages.text)),
            ("代码 Code", pages.folder + "/index.md"),
            ("差异 Diff", pages.folder + "/diff.md"),
        )
        if target != at
    ]
    if index > 0:
        before = chapters[index - 1]
        links.insert(0, f"[← {before.label}]({link(stage_path(before.text))})")
    if index + 1 < len(chapters):
        after = chapters[index + 1]
        links.append(f"[{after.label} →]({link(stage_path(after.text))})")
    title = f"Chapter {pages.chapter.number} · {pages.title}"
    body = pages.abstract[:1].upper() + pages.abstract[1:]
    return (
        f'!!! abstract "{title}"\n\n'
        f"    {body}\n\n"
        f'    <span class="chapter-links">{" · ".join(links)}</span>\n'
    )


def readme_layout() -> dict[str, str]:
    """README "Layout" rows: folder (`shared`) -> what is there."""
    row = re.compile(r"^\|\s*`([\w-]+)/`\s*\|\s*(.*?)\s*\|\s*$")
    lines = README.read_text(encoding="utf-8").splitlines()
    return {m.group(1): m.group(2) for m in map(row.match, lines) if m}


def shared_box(folder: str, at: str) -> str:
    about = readme_layout().get(folder, "")
    return (
        f'!!! info "{folder}/"\n\n'
        f"    {about}\n\n"
        f"    [所有文件 All files]({relative_link(at, folder + '/index.md')})\n"
    )


def files_table(files: list[CodeFile], folder: str, at: str) -> str:
    lines = ["| 文件 File | 行数 Lines | 顶层名字 Top-level names |", "|---|---:|---|"]
    for code in files:
        page = relative_link(at, code.page)
        names = ", ".join(f"[`{n}`]({page}#{n})" for n in code.symbols if "." not in n)
        shown = code.path.removeprefix(folder + "/")
        lines.append(f"| [`{shown}`]({page}) | {code.line_count} | {names or '—'} |")
    return "\n".join(lines) + "\n"


def chapter_index_page(pages: ChapterPages, files: list[CodeFile], box: str) -> str:
    at = pages.folder + "/index.md"
    sources = [f for f in files if not f.is_test]
    tests = [f for f in files if f.is_test]
    parts = [
        front_matter(f"{pages.label} · 代码 Code"),
        f"# {pages.label} · 代码\n",
        box,
        f"`{pages.folder}/`: {len(sources)} files, {sum(f.line_count for f in sources)} lines. "
        f"What it adds to the previous chapter: [差异 Diff](diff.md).\n",
        files_table(sources, pages.folder, at),
    ]
    if tests:
        parts += [
            "## 测试 Tests\n",
            f"Run them with `python -m pytest {pages.folder}`.\n",
            files_table(tests, pages.folder, at),
        ]
    return "\n".join(parts)


def diff_page(pages: ChapterPages, code: dict[str, CodeFile], box: str) -> str:
    """`python -m tutorial diff --chapter N`, one section per file it shows."""
    at = pages.folder + "/diff.md"
    text = chapter_diff(find_chapter(pages.chapter.number))
    parts = [
        front_matter(f"{pages.label} · 差异 Diff"),
        f"# {pages.label} · 差异\n",
        box,
        f"`python -m tutorial diff --chapter {pages.chapter.number}`:\n",
    ]
    for heading, body in split_diff(text):
        if heading is not None:
            old, new = heading
            target = code.get(new)
            name = f"[`{new}`]({relative_link(at, target.page)})" if target else f"`{new}`"
            against = "new file" if old == "/dev/null" else f"against `{old}`"
            parts.append(f"### {name}\n\n{against}\n")
        parts.append(fenced(body, "diff" if heading else "text"))
    return "\n".join(parts)


def split_diff(text: str) -> list[tuple[tuple[str, str] | None, str]]:
    """The diff's preamble, then (old name, new name) and the hunks of each file.

    Anything this does not recognise stays in the section before it, so a
    change in the diff's format shows as less structure, never as lost text.
    """
    sections: list[tuple[tuple[str, str] | None, list[str]]] = [(None, [])]
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = line[4:].split("\t")[0].strip()
            new = lines[i + 1][4:].split("\t")[0].strip()
            sections.append(((old, new), [line, lines[i + 1]]))
            i += 2
            continue
        sections[-1][1].append(line)
        i += 1
    return [(head, "\n".join(body)) for head, body in sections if any(s.strip() for s in body)]


def fenced(body: str, language: str) -> str:
    runs = [len(m) for m in re.findall(r"`{3,}", body)]
    fence = "`" * max([3, *(n + 1 for n in runs)])
    return f"{fence}{language}\n{body}\n{fence}\n"


# --- the texts and their links -------------------------------------------------------


def stage_path(repo_path: str) -> str:
    """Where a repository file's page is in the staged tree (and so on the site)."""
    if repo_path == "README.md":
        return "index.md"
    if repo_path.startswith("docs/"):
        inside = repo_path.removeprefix("docs/")
        if TEXT_NAME.fullmatch(inside):
            return inside.removesuffix(".md") + "/index.md"
        return inside
    return repo_path + ".md"


def relative_link(from_page: str, to_page: str) -> str:
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


@dataclass
class Links:
    """Rewrites the links of one text (a repository file) for its staged copy."""

    source: str  # repository path of the text: docs/ch01-agent-loop.md
    code: dict[str, CodeFile]
    folders: set[str]  # folders that have an index page
    errors: list[str] = field(default_factory=list)

    def rewrite(self, markdown: str) -> str:
        return "".join(
            part if is_code else self._rewrite_prose(part) for is_code, part in split_code(markdown)
        )

    def _rewrite_prose(self, prose: str) -> str:
        def link(m: re.Match[str]) -> str:
            return m.group(1) + self.target(m.group(2))

        def html_attribute(m: re.Match[str]) -> str:
            quote, value = m.group(2)[0], m.group(2)[1:-1]
            return m.group(1) + quote + self.target(value) + quote

        prose = sub_outside_code_spans(INLINE_LINK, link, prose)
        prose = sub_outside_code_spans(REFERENCE_LINK, link, prose)
        return sub_outside_code_spans(HTML_LINK, html_attribute, prose)

    def target(self, raw: str) -> str:
        bracketed = raw.startswith("<") and raw.endswith(">")
        url = raw[1:-1] if bracketed else raw
        new = self._map(url)
        return f"<{new}>" if bracketed else new

    def _map(self, url: str) -> str:
        if not url or url.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
            return url  # same page, site-absolute or another scheme: MkDocs checks what it can
        path, _, anchor = url.partition("#")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(self.source), path))
        if joined.startswith("docs/") or joined == "README.md":
            if not (ROOT / joined).is_file():
                self.errors.append(f"{self.source}: link {url}: {joined} does not exist")
                return url
            new = stage_path(joined)  # MkDocs checks the anchor: it knows the headings' ids
        elif joined in self.code:
            problem = self.code[joined].anchor_error(anchor) if anchor else None
            if problem:
                self.errors.append(f"{self.source}: link {url}: {problem}")
            anchor = anchor.split("-")[0] if LINE_ANCHOR.fullmatch(anchor) else anchor
            new = stage_path(joined)
        elif joined.rstrip("/") in self.folders:
            new = joined.rstrip("/") + "/index.md"
        else:
            where = "does not exist" if not (ROOT / joined).exists() else "has no page on the site"
            self.errors.append(
                f"{self.source}: link {url}: {joined} {where} "
                f"(the site has pages for docs/, README.md and the files under "
                f"{', '.join(r + '/' for r in CODE_ROOTS)})"
            )
            return url
        link = relative_link(stage_path(self.source), new)
        return link + (f"#{anchor}" if anchor else "")


def sub_outside_code_spans(
    pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str], prose: str
) -> str:
    """pattern.sub, except for matches that start inside a code span.

    A link's text may hold code spans ([`loop.py` · `run_agent`](...)), so the
    spans are skipped by position, not cut out of the prose.
    """
    spans = [m.span() for m in CODE_SPAN.finditer(prose)]

    def outside(m: re.Match[str]) -> str:
        return m.group(0) if any(a <= m.start() < b for a, b in spans) else replace(m)

    return pattern.sub(outside, prose)


def split_code(markdown: str) -> Iterator[tuple[bool, str]]:
    """The text in pieces, (True, a fenced code block) or (False, the prose between them)."""
    lines = markdown.splitlines(keepends=True)
    prose: list[str] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            prose.append(lines[i])
            i += 1
            continue
        yield False, "".join(prose)
        prose = []
        mark = opening.group(1)
        block = [lines[i]]
        i += 1
        while i < len(lines):
            block.append(lines[i])
            closing = FENCE.match(lines[i])
            i += 1
            if (
                closing
                and closing.group(1)[0] == mark[0]
                and len(closing.group(1)) >= len(mark)
                and not lines[i - 1].strip().lstrip(mark[0])
            ):
                break
        yield True, "".join(block)
    yield False, "".join(prose)


def markdown_inside(m: re.Match[str]) -> str:
    return f'<details markdown="1"{m.group(1)}>'


def stage_text(markdown: str, links: Links, box: str | None) -> str:
    markdown = links.rewrite(markdown)
    # Markdown inside <details> renders on GitHub; Python-Markdown needs to be told.
    markdown = "".join(
        part if is_code else sub_outside_code_spans(DETAILS, markdown_inside, part)
        for is_code, part in split_code(markdown)
    )
    if box is None:
        return markdown
    # The box goes under the title: the first line, when it is a level-1 heading.
    title, newline, rest = markdown.partition("\n")
    if title.startswith("# "):
        return f"{title}{newline}\n{box}\n{rest}"
    return f"{box}\n{markdown}"


# --- the whole site ------------------------------------------------------------------


@dataclass
class Stage:
    """build/site-src/: what MkDocs builds the site from, and the navigation to it."""

    code: dict[str, CodeFile]
    chapters: list[ChapterPages]
    nav: list[object] = field(default_factory=list)

    def write(self, page: str, text: str) -> None:
        target = STAGE / page
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def copy(self, source: Path, page: str) -> None:
        target = STAGE / page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)

    def files_in(self, folder: str) -> list[CodeFile]:
        return [c for p, c in self.code.items() if p.startswith(folder + "/")]

    def texts(self) -> list[str]:
        """docs/ and the README; returns the docs pages that are not chapter texts."""
        folders = {c.folder for c in self.chapters} | {r for r in CODE_ROOTS if r != "chapters"}
        chapter_of_text = {c.text: c for c in self.chapters}
        errors: list[str] = []
        others: list[str] = []
        for source in [README, *sorted(DOCS.rglob("*"))]:
            repo_path = source.relative_to(ROOT).as_posix()
            if not source.is_file():
                continue
            if source.suffix != ".md":  # images and the like
                self.copy(source, stage_path(repo_path))
                continue
            pages = chapter_of_text.get(repo_path)
            at = stage_path(repo_path)
            box = chapter_box(pages, self.chapters, at) if pages else None
            links = Links(repo_path, self.code, folders)
            self.write(at, stage_text(source.read_text(encoding="utf-8"), links, box))
            errors += links.errors
            if pages is None and source != README:
                others.append(repo_path)
        if errors:
            raise SiteError(
                "links that leave docs/ must reach a file and anchor:\n  " + "\n  ".join(errors)
            )
        return others

    def chapter(self, pages: ChapterPages) -> None:
        files = self.files_in(pages.folder)
        for item in files:
            self.write(item.page, code_page(item, chapter_box(pages, self.chapters, item.page)))
        index, diff = pages.folder + "/index.md", pages.folder + "/diff.md"
        box = chapter_box(pages, self.chapters, index)
        self.write(index, chapter_index_page(pages, files, box))
        self.write(diff, diff_page(pages, self.code, chapter_box(pages, self.chapters, diff)))
        # The text is the section's index page (navigation.indexes), titled by its heading.
        section = [
            stage_path(pages.text),
            {"差异 Diff": diff},
            {"代码 Code": code_nav(pages.folder, files)},
        ]
        self.nav.append({pages.label: section})

    def folder(self, root: str) -> None:
        files = self.files_in(root)
        for item in files:
            self.write(item.page, code_page(item, shared_box(root, item.page)))
        self.write(f"{root}/index.md", folder_index_page(root, files))
        self.nav.append({f"{root}/": code_nav(root, files)})


def stage() -> list[object]:
    """Write build/site-src/ and return the site's navigation."""
    chapters = collect_chapters()
    ready = tuple(c.folder + "/" for c in chapters)
    code = {
        path: item
        for path, item in collect_code().items()
        if not path.startswith("chapters/") or path.startswith(ready)
    }
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    site = Stage(code, chapters)
    others = site.texts()
    site.nav.append({"首页 Home": "index.md"})
    for pages in chapters:
        site.chapter(pages)
    for root in CODE_ROOTS:
        if root != "chapters":
            site.folder(root)
    for repo_path in others:
        site.nav.append({title_of(ROOT / repo_path): stage_path(repo_path)})
    for asset in sorted(ASSETS.glob("*.css")):
        site.copy(asset, "assets/" + asset.name)
    return site.nav


def folder_index_page(root: str, files: list[CodeFile]) -> str:
    at = f"{root}/index.md"
    parts = [front_matter(f"{root}/"), f"# {root}/\n", shared_box(root, at)]
    return "\n".join([*parts, files_table(files, root, at)])


def code_nav(folder: str, files: list[CodeFile]) -> list[object]:
    items: list[object] = [folder + "/index.md"]
    tests: list[object] = []
    for code in files:
        name = code.path.removeprefix(folder + "/")
        (tests if code.is_test else items).append({name: code.page})
    if tests:
        items.append({"测试 Tests": tests})
    return items


def title_of(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def write_config(nav: list[object]) -> None:
    """build/mkdocs.yml: the committed mkdocs.yml plus what only this script knows."""
    import yaml  # from the site's requirements, like mkdocs itself

    child = {
        "INHERIT": relative_link(GENERATED_CONFIG.relative_to(ROOT).as_posix(), CONFIG.name),
        "docs_dir": STAGE.name,
        "site_dir": relative_link(GENERATED_CONFIG.relative_to(ROOT).as_posix(), SITE.name),
        "nav": nav,
    }
    GENERATED_CONFIG.write_text(
        "# Written by scripts/build_site.py; edit mkdocs.yml instead.\n"
        + yaml.safe_dump(child, allow_unicode=True, sort_keys=False),
        encoding="utf-8",
    )


def check_no_remote_assets() -> None:
    """Nothing in the built site may load from another host (fonts, scripts, diagrams)."""
    found = []
    for path in sorted(SITE.rglob("*")):
        if path.suffix in (".html", ".css") and REMOTE_ASSET.search(path.read_text("utf-8")):
            found.append(path.relative_to(SITE).as_posix())
    if found:
        raise SiteError("these files load something from another host: " + ", ".join(found))


def build() -> None:
    started = time.perf_counter()
    nav = stage()
    write_config(nav)
    environment = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--clean",
            "-f",
            str(GENERATED_CONFIG),
        ],
        cwd=ROOT,
        env=environment,
        check=False,
    )
    if done.returncode != 0:
        raise SiteError(f"mkdocs build --strict failed (exit {done.returncode}); see above")
    check_no_remote_assets()
    pages = sum(1 for _ in SITE.rglob("*.html"))
    print(f"site/: {pages} pages in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    try:
        build()
    except SiteError as error:
        print(f"site build failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

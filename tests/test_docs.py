"""The README and the chapter texts tell the truth: their commands parse, their JSON is current."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tutorial.catalog import find_chapter, listed_commands
from tutorial.cli import cli

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("ch*.md"))]
COMMAND = re.compile(r"python -m (?:tutorial|chapters\.ch\d\d)\b[^`\n]*")


def commands_in(path: Path) -> list[str]:
    # "--chapter N" in a table means any chapter; the one that exists stands in for it.
    text = path.read_text(encoding="utf-8").replace("--chapter N", "--chapter 1")
    return sorted(set(COMMAND.findall(text)))


def parse(command: str) -> None:
    """Parse a documented command exactly as the CLI would, without running it."""
    _, _, module, *args = shlex.split(command)
    if module.startswith("chapters."):
        _parse_chapter(int(module.removeprefix("chapters.ch")), args)
        return
    if not args or args == ["--help"]:
        return  # the dispatcher has no options of its own
    command: click.Command = cli
    at = 0  # the words of `args` that name the command: "run", "permissions check"
    while isinstance(command, click.Group) and at < len(args) and not args[at].startswith("-"):
        found = command.get_command(click.Context(command), args[at])
        if found is None:
            raise click.UsageError(f"no command {args[at]!r}")
        command, at = found, at + 1
    words, rest = " ".join(args[:at]), args[at:]
    sub = command.make_context(words, rest)
    if words in listed_commands() and not isinstance(command, click.Group):  # a part's: agents
        recipe = find_chapter(sub.params["chapter"]).recipe()
        chapter = recipe.subcommands().get(words)  # what the chapter's parts bring
        assert chapter is not None, f"chapter {sub.params['chapter']} has no {words}"
        chapter.make_context(words, list(sub.params["args"]))
        return
    if words == "run":
        _parse_chapter(sub.params["chapter"], list(sub.params["chapter_args"]))
    if words == "diff":
        find_chapter(sub.params["chapter"])


def _parse_chapter(number: int, args: list[str]) -> None:
    command = find_chapter(number).recipe().command()
    context = command.make_context(f"chapter {number}", args)
    assert context.params["demo"] or context.params["prompt"], "needs --prompt or --demo"
    if number >= 2 and context.params["workspace"] is not None:
        assert not context.params["demo"], "--demo and --workspace do not mix"


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_every_command_shown_parses(path: Path) -> None:
    commands = commands_in(path)
    assert commands, f"no commands found in {path.name}"
    for command in commands:
        try:
            parse(command)
        except (click.ClickException, AssertionError) as error:
            pytest.fail(f"{path.name}: `{command}` does not parse: {error}")


def test_the_command_check_catches_a_typo() -> None:
    with pytest.raises(click.NoSuchOption):
        parse('python -m tutorial run --chapter 1 --promt "hi"')
    with pytest.raises(AssertionError):
        parse("python -m chapters.ch01 --max-turns 3")


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test_command = "python scripts/with_venv.py python -m pytest"
    assert test_command in readme
    assert '"$PY" scripts/with_venv.py python -m pytest' in (ROOT / ".ci" / "run").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="the demo runs Write-Output on Windows")
def test_generated_json_and_code_in_the_texts_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update_docs.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- the rules of docs/CONTRIBUTING.md, for every chapter text -------------------------------

CHAPTER_TEXTS = sorted((ROOT / "docs").glob("ch*.md"))
ARC = ["问题", "运行", "排错", "实验", "自测", "小结", "下一章"]
VISIBLE_LIMIT = 12_000
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CJK = "\u4e00-\u9fff"
HALF_WIDTH_BESIDE_CHINESE = re.compile(rf"[{CJK}][,;:?!(]|[,;:?!)]\s?[{CJK}]|[{CJK}]\.(?:\s|$)")


def prose(text: str) -> str:
    """A text without fenced blocks, inline code, HTML comments and link targets."""
    text = FENCE.sub("", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def visible(text: str) -> str:
    """What a reader sees before opening anything: folded sections and comments removed."""
    text = re.sub(r"<details>.*?</details>", "", text, flags=re.S)
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def paragraphs(text: str) -> list[str]:
    return [part for part in re.split(r"\n\s*\n", text) if part.strip()]


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_a_chapter_follows_the_arc(path: Path) -> None:
    headings = re.findall(r"^## (.+)$", path.read_text(encoding="utf-8"), re.M)
    found = [next((i for i, h in enumerate(headings) if word in h), -1) for word in ARC]
    missing = [word for word, index in zip(ARC, found, strict=True) if index < 0]
    assert not missing, f"{path.name}: no section for {missing}"
    assert found == sorted(found), f"{path.name}: the arc is out of order: {headings}"


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_a_chapter_is_read_in_one_sitting(path: Path) -> None:
    length = len(visible(path.read_text(encoding="utf-8")))
    assert length <= VISIBLE_LIMIT, f"{path.name}: {length} visible characters"


@pytest.mark.parametrize(
    "path", [*CHAPTER_TEXTS, ROOT / "docs" / "glossary.md"], ids=lambda p: p.name
)
def test_chinese_sentences_use_full_width_punctuation(path: Path) -> None:
    text = prose(path.read_text(encoding="utf-8"))
    hits = [
        text[max(m.start() - 8, 0) : m.end() + 8] for m in HALF_WIDTH_BESIDE_CHINESE.finditer(text)
    ]
    assert not hits, f"{path.name}: half-width punctuation beside Chinese: {hits[:5]}"


def rejected_terms() -> dict[str, str]:
    """The glossary's「不用」column: rejected rendering -> the term to use instead."""
    rejected = {}
    for row in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if len(cells) == 4 and cells[3] and cells[0] not in ("讲义里的说法", "---"):
            for word in re.split(r"[、，]", cells[3]):
                if word.strip():
                    rejected[word.strip()] = cells[0]
    return rejected


def test_the_glossary_lists_rejected_renderings() -> None:
    assert rejected_terms()["外壳"] == "harness"
    assert rejected_terms()["失败即阻止"] == "失败即拒绝"


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_a_chapter_uses_the_glossarys_terms(path: Path) -> None:
    text = prose(path.read_text(encoding="utf-8"))
    used = {word: term for word, term in rejected_terms().items() if word in text}
    assert not used, f"{path.name}: write {used}"


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_every_python_block_is_generated_and_captioned(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.startswith("```python"):
            marker, caption = lines[number - 2], lines[number - 1]
            assert re.match(r"<!-- (source|loop): ", marker), f"{path.name}:{number + 1}"
            assert re.match(r"\[`(chapters|shared)/\S+\.py` · `[\w.]+`", caption), caption


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_a_chapter_links_its_neighbours_and_its_diff(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    number = int(path.name[2:4])
    assert f"python -m tutorial diff --chapter {number}" in text
    if number > 1:
        previous = next((ROOT / "docs").glob(f"ch{number - 1:02d}-*.md"))
        assert f"]({previous.name})" in text, f"{path.name}: no link to {previous.name}"
    following = list((ROOT / "docs").glob(f"ch{number + 1:02d}-*.md"))
    if following:
        assert f"]({following[0].name})" in text, f"{path.name}: no link to {following[0].name}"


DIFF_BLOCK = re.compile(r"^```diff\n--- (\S+)\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_every_line_an_experiment_removes_is_in_the_file_it_names(path: Path) -> None:
    for match in DIFF_BLOCK.finditer(path.read_text(encoding="utf-8")):
        source = (ROOT / match[1]).read_text(encoding="utf-8")
        removed = [line[1:] for line in match[2].splitlines() if line.startswith("-")]
        assert removed, f"{path.name}: a diff for {match[1]} removes nothing"
        assert "\n".join(removed) in source, f"{path.name}: not in {match[1]}: {removed}"


PYTEST_K = re.compile(r"python -m pytest (\S+) -k (?:'([^']+)'|\"([^\"]+)\"|(\S+))")


@pytest.fixture(scope="module")
def keywords(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Every test's `-k` names, as pytest computes them (tests/keyword_dump.py)."""
    target = tmp_path_factory.mktemp("keywords") / "keywords.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "tests.keyword_dump",
            "chapters",
            "tests",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TUTORIAL_KEYWORDS": str(target)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    names: dict[str, list[str]] = json.loads(target.read_text(encoding="utf-8"))
    return names


def selected(keywords: dict[str, list[str]], folder: str, expression: str) -> set[str]:
    from _pytest.mark import KeywordMatcher
    from _pytest.mark.expression import Expression

    compiled = Expression.compile(expression)
    return {
        node.split("::")[-1].split("[")[0]
        for node, names in keywords.items()
        if node.startswith(folder.rstrip("/")) and compiled.evaluate(KeywordMatcher(set(names)))
    }


@pytest.mark.parametrize("path", CHAPTER_TEXTS, ids=lambda p: p.name)
def test_every_k_selection_selects_the_tests_the_text_names(
    path: Path, keywords: dict[str, list[str]]
) -> None:
    for paragraph in paragraphs(path.read_text(encoding="utf-8")):
        for match in PYTEST_K.finditer(paragraph):
            folder, expression = match[1], next(g for g in match.groups()[1:] if g)
            chosen = selected(keywords, folder, expression)
            assert chosen, f"{path.name}: `-k {expression}` in {folder} selects nothing"
            named = set(re.findall(r"\btest_\w+\b(?!\.py)", paragraph))  # not test_x.py files
            assert named, f"{path.name}: `-k {expression}`: name the test the reader will see"
            assert named <= chosen, (
                f"{path.name}: `-k {expression}` does not select {named - chosen}"
            )


def program_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that reach a person, docstrings (English) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


PROGRAM_FILES = sorted(
    path
    for folder in ("shared", "tutorial", "chapters")
    for path in (ROOT / folder).rglob("*.py")
    if "tests" not in path.parts
)


def test_the_programs_chinese_strings_use_full_width_punctuation() -> None:
    hits = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {text[max(m.start() - 8, 0) : m.end() + 8]!r}"
        for path in PROGRAM_FILES
        for line, text in program_strings(path)
        for m in HALF_WIDTH_BESIDE_CHINESE.finditer(text)
    ]
    assert not hits, f"half-width punctuation beside Chinese: {hits[:5]}"

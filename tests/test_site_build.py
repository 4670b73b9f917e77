"""scripts/build_site.py without MkDocs or a browser: anchors, link rewriting, staging, diffs.

These need only what the README's test command installs, so they run with
every `python -m pytest`; tests/site/ builds nothing and checks the real site.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from scripts import build_site
from scripts.build_site import CodeFile, Links, python_symbols
from tutorial.catalog import CHAPTERS

ROOT = Path(__file__).resolve().parent.parent
SOURCE = '''"""A module."""
import functools

LIMIT = 3
name: str = "x"


@functools.cache
def helper() -> int:
    return LIMIT


class Outer:
    size = 1

    def method(self) -> None:
        pass

    class Inner:
        async def deep(self) -> None:
            pass
'''


@pytest.fixture(scope="module")
def code() -> dict[str, CodeFile]:
    return build_site.collect_code()


def links_from(source: str, code: dict[str, CodeFile]) -> Links:
    return Links(source, code, {"chapters/ch01", "chapters/ch02", "shared", "tutorial"})


def test_symbols_are_top_level_names_methods_and_assignments_at_their_first_line() -> None:
    symbols = python_symbols(SOURCE, "example.py")
    assert symbols == {
        "LIMIT": 4,
        "name": 5,
        "helper": 8,  # the decorator's line, so the reader sees it
        "Outer": 13,
        "Outer.method": 16,
        "Outer.Inner": 19,
        "Outer.Inner.deep": 20,
    }


def test_anchors_are_lines_ranges_and_names() -> None:
    item = CodeFile("chapters/ch01/example.py", SOURCE, python_symbols(SOURCE, "example.py"))
    for anchor in ("L1", "L21", "L3-L9", "helper", "Outer.Inner.deep"):
        assert item.anchor_error(anchor) is None, anchor
    assert item.anchor_error("L0") == "chapters/ch01/example.py has lines 1-21"
    assert item.anchor_error("L22") is not None
    assert item.anchor_error("L9-L3") is not None
    problem = item.anchor_error("helpr")
    assert problem is not None and "did you mean #helper?" in problem


def test_links_into_the_code_become_links_to_its_pages(code: dict[str, CodeFile]) -> None:
    links = links_from("docs/ch01-agent-loop.md", code)
    text = (
        "[run_agent](../chapters/ch01/loop.py#run_agent) "
        "[a range](../chapters/ch01/loop.py#L40-L51) "
        "[a method](../chapters/ch02/workspace.py#Workspace.resolve) "
        "[a folder](../chapters/ch02/) "
        "[next](ch02-file-tools.md#读前须知) "
        "[home](../README.md) "
        "[web](https://example.org/x.py) "
        "[here](#section)\n"
        '<a href="../shared/contract.py">contract</a>\n'
        "[ref]: ../tutorial/diff.py#chapter_diff\n"
    )
    assert links.rewrite(text) == (
        "[run_agent](../chapters/ch01/loop.py.md#run_agent) "
        "[a range](../chapters/ch01/loop.py.md#L40) "
        "[a method](../chapters/ch02/workspace.py.md#Workspace.resolve) "
        "[a folder](../chapters/ch02/index.md) "
        "[next](../ch02-file-tools/index.md#读前须知) "
        "[home](../index.md) "
        "[web](https://example.org/x.py) "
        "[here](#section)\n"
        '<a href="../shared/contract.py.md">contract</a>\n'
        "[ref]: ../tutorial/diff.py.md#chapter_diff\n"
    )
    assert links.errors == []


def test_links_in_code_are_left_alone(code: dict[str, CodeFile]) -> None:
    links = links_from("docs/ch01-agent-loop.md", code)
    text = (
        "`[x](../nothing.py)` and\n\n```md\n[y](../nothing.py)\n```\n\n~~~\n[z](../no.py)\n~~~\n"
        "1. a list\n\n   ```md\n   [w](../no.py)\n   ```\n"
    )
    assert links.rewrite(text) == text
    assert links.errors == []


def test_a_caption_whose_text_is_code_is_still_a_link(code: dict[str, CodeFile]) -> None:
    links = links_from("docs/ch01-agent-loop.md", code)
    caption = "[`chapters/ch01/loop.py` · `run_agent`](../chapters/ch01/loop.py#run_agent)\n"
    assert links.rewrite(caption) == caption.replace("loop.py#", "loop.py.md#")
    # A stray backtick does not make the rest of the text code.
    stray = "a ` b\n\n[c](../chapters/ch01/loop.py)\n"
    assert links.rewrite(stray) == stray.replace("loop.py)", "loop.py.md)")


def test_a_link_to_a_missing_file_or_anchor_fails_and_says_which(
    code: dict[str, CodeFile],
) -> None:
    links = links_from("docs/ch01-agent-loop.md", code)
    links.rewrite(
        "[a](../chapters/ch01/loop.py#run_agnet) [b](../chapters/ch01/loop.py#L100000) "
        "[c](../chapters/ch01/nothing.py) [d](../pyproject.toml) [e](ch99-nothing.md)"
    )
    assert len(links.errors) == 5
    assert "did you mean #run_agent?" in links.errors[0]
    assert "has lines 1-" in links.errors[1]
    assert "chapters/ch01/nothing.py does not exist" in links.errors[2]
    assert "pyproject.toml has no page on the site" in links.errors[3]
    assert "docs/ch99-nothing.md does not exist" in links.errors[4]


def test_a_staged_text_gets_its_box_under_the_title_and_markdown_in_details(
    code: dict[str, CodeFile],
) -> None:
    text = "# Title\n\nIntro.\n\n<details>\n<summary>More</summary>\n\n- a\n\n</details>\n"
    staged = build_site.stage_text(text, links_from("docs/ch01-x.md", code), "BOX\n")
    assert staged.startswith("# Title\n\nBOX\n\n\nIntro.")
    assert '<details markdown="1">' in staged
    mention = "Fold it in `<details>`.\n"
    assert build_site.stage_text(mention, links_from("docs/x.md", code), None) == mention


def test_every_code_page_has_one_anchored_line_per_source_line(
    code: dict[str, CodeFile],
) -> None:
    tag = re.compile(r"<[^>]+>")
    for item in code.values():
        lines = build_site.highlighted_lines(item)
        shown = [html.unescape(tag.sub("", line)) for line in lines]
        assert shown == item.text.splitlines(), item.path
    page = build_site.code_page(code["chapters/ch01/loop.py"], "")
    count = code["chapters/ch01/loop.py"].line_count
    assert page.count('<span class="ln" id="L') == count
    assert f'id="L{count}"' in page and f'id="L{count + 1}"' not in page
    assert '<span class="sym" id="run_agent"></span>' in page


def test_the_diff_page_has_a_section_per_file_and_keeps_what_it_does_not_know() -> None:
    text = (
        "# summary line\n"
        "--- /dev/null\n+++ chapters/ch02/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
        "--- chapters/ch01/loop.py\n+++ chapters/ch02/loop.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    sections = build_site.split_diff(text)
    assert [head for head, _ in sections] == [
        None,
        ("/dev/null", "chapters/ch02/new.py"),
        ("chapters/ch01/loop.py", "chapters/ch02/loop.py"),
    ]
    assert sections[2][1].endswith("-a\n+b")
    assert build_site.split_diff("something else\nentirely") == [(None, "something else\nentirely")]
    assert build_site.fenced("a ``` b", "diff").startswith("````diff\n")


def test_every_ready_chapter_has_one_text_and_a_readme_abstract() -> None:
    chapters = build_site.collect_chapters()
    assert [c.chapter.number for c in chapters] == [c.number for c in CHAPTERS if c.ready]
    for pages in chapters:
        assert (ROOT / pages.text).is_file()
        assert pages.title and pages.abstract


def test_the_readme_and_ci_build_the_site_and_run_the_browser_test() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    build = "python scripts/with_venv.py --site python scripts/build_site.py"
    test = "python scripts/with_venv.py --site python -m pytest tests/site"
    assert build in readme and test in readme
    assert f'"$PY" {build.removeprefix("python ")}' in ci
    assert f'"$PY" {test.removeprefix("python ")}' in ci

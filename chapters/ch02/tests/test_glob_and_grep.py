"""glob and grep: workspace-relative results, newest first, capped, VCS and binaries skipped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from chapters.ch02.searching import MAX_GLOB_RESULTS, MAX_GREP_MATCHES, glob_regex
from chapters.ch02.tests.helpers import file_tools, run


def make(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def lines_of(content: str) -> list[str]:
    return content.splitlines()[1:]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),  # * stays within one folder name
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**", "src/deep/a.py", True),
        ("src/*.py", "src/deep/a.py", False),
        ("test_?.py", "test_1.py", True),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("a.py", "a_py", False),  # the dot is literal
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


def test_glob_lists_workspace_relative_paths_newest_first(tmp_path: Path) -> None:
    make(tmp_path, {"old.py": "", "src/mid.py": "", "src/deep/new.py": "", "notes.md": ""})
    for age, name in enumerate(["src/deep/new.py", "src/mid.py", "old.py"]):
        os.utime(tmp_path / name, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    content = run(file_tools(tmp_path), "glob", pattern="**/*.py").content
    assert content.splitlines()[0] == "ok: 3 files match '**/*.py' (newest first)"
    assert lines_of(content) == ["src/deep/new.py", "src/mid.py", "old.py"]


def test_glob_from_a_subfolder_still_reports_paths_from_the_root(tmp_path: Path) -> None:
    make(tmp_path, {"src/a.py": "", "b.py": ""})
    content = run(file_tools(tmp_path), "glob", pattern="*.py", path="src").content
    assert lines_of(content) == ["src/a.py"]


def test_glob_skips_vcs_folders(tmp_path: Path) -> None:
    make(tmp_path, {".git/config.py": "", ".hg/x.py": "", ".svn/y.py": "", "real.py": ""})
    content = run(file_tools(tmp_path), "glob", pattern="**/*.py").content
    assert lines_of(content) == ["real.py"]


def test_glob_is_capped_with_a_note(tmp_path: Path) -> None:
    make(tmp_path, {f"f{n:03}.txt": "" for n in range(MAX_GLOB_RESULTS + 5)})
    content = run(file_tools(tmp_path), "glob", pattern="*.txt").content
    lines = lines_of(content)
    assert len(lines) == MAX_GLOB_RESULTS + 1
    assert lines[-1] == "[5 more not shown: narrow the pattern]"


def test_glob_with_no_match_says_so(tmp_path: Path) -> None:
    content = run(file_tools(tmp_path), "glob", pattern="*.rs").content
    assert content == "ok: no files under '.' match '*.rs'."


def test_glob_needs_a_folder(tmp_path: Path) -> None:
    make(tmp_path, {"a.py": ""})
    assert run(file_tools(tmp_path), "glob", pattern="*", path="a.py").keyword == "not_a_folder"


def test_grep_reports_path_line_text(tmp_path: Path) -> None:
    make(tmp_path, {"src/a.py": "import os\ndef main():\n    return os.getcwd()\n"})
    content = run(file_tools(tmp_path), "grep", pattern=r"os\.\w+").content
    assert content.splitlines() == ["ok: 1 matching lines", "src/a.py:3:     return os.getcwd()"]


def test_grep_reports_each_line_once_and_counts_lines_across_files(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": "x x x\ny\nx\n", "b.txt": "\n\nx\n"})
    content = run(file_tools(tmp_path), "grep", pattern="x").content
    assert content.splitlines() == [
        "ok: 3 matching lines",
        "a.txt:1: x x x",
        "a.txt:3: x",
        "b.txt:3: x",
    ]


def test_grep_anchors_work_per_line(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": "def a\n  def b\ndef c\n"})
    content = run(file_tools(tmp_path), "grep", pattern="^def").content
    assert lines_of(content) == ["a.txt:1: def a", "a.txt:3: def c"]


def test_grep_ignore_case(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": "Error\nerror\nERROR\nfine\n"})
    content = run(file_tools(tmp_path), "grep", pattern="error", ignore_case=True).content
    assert content.splitlines()[0] == "ok: 3 matching lines"


def test_grep_glob_filter_matches_names_at_any_depth(tmp_path: Path) -> None:
    make(tmp_path, {"a.py": "hit\n", "src/b.py": "hit\n", "c.md": "hit\n"})
    content = run(file_tools(tmp_path), "grep", pattern="hit", glob="*.py").content
    assert lines_of(content) == ["a.py:1: hit", "src/b.py:1: hit"]


def test_grep_a_single_file(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": "hit\n", "b.txt": "hit\n"})
    content = run(file_tools(tmp_path), "grep", pattern="hit", path="b.txt").content
    assert lines_of(content) == ["b.txt:1: hit"]


def test_grep_skips_binary_files_and_vcs_folders(tmp_path: Path) -> None:
    make(tmp_path, {".git/HEAD": "hit\n", "text.txt": "hit\n"})
    (tmp_path / "blob.bin").write_bytes(b"hit\x00\x01")
    content = run(file_tools(tmp_path), "grep", pattern="hit").content
    assert lines_of(content) == ["text.txt:1: hit"]


def test_a_bad_regex_is_a_result_not_a_crash(tmp_path: Path) -> None:
    result = run(file_tools(tmp_path), "grep", pattern="(unclosed")
    assert result.keyword == "invalid_regex"
    assert "missing )" in result.content


def test_grep_is_capped_with_a_note(tmp_path: Path) -> None:
    make(tmp_path, {"many.txt": "hit\n" * (MAX_GREP_MATCHES + 50)})
    content = run(file_tools(tmp_path), "grep", pattern="hit").content
    lines = content.splitlines()
    assert lines[0] == (
        f"ok: {MAX_GREP_MATCHES + 50} matching lines "
        f"(first {MAX_GREP_MATCHES} shown: narrow with path or glob)"
    )
    assert len(lines) == MAX_GREP_MATCHES + 1


def test_grep_cuts_long_lines(tmp_path: Path) -> None:
    make(tmp_path, {"min.js": "hit" + "x" * 1000 + "\n"})
    line = lines_of(run(file_tools(tmp_path), "grep", pattern="hit").content)[0]
    assert len(line) == len("min.js:1: ") + 300


def test_grep_with_no_match_says_so(tmp_path: Path) -> None:
    make(tmp_path, {"a.txt": "nothing\n"})
    assert run(file_tools(tmp_path), "grep", pattern="zzz").content == "ok: no lines match 'zzz'."


@pytest.mark.skipif(sys.platform == "win32", reason="Windows file names cannot hold a newline")
def test_names_with_control_characters_are_listed_escaped_on_one_line(tmp_path: Path) -> None:
    odd = "notes\n../outside/secret.txt"  # a folder "notes\n.." holding outside/secret.txt
    (tmp_path / "docs" / odd).parent.mkdir(parents=True)
    (tmp_path / "docs" / odd).write_text("hit\n", encoding="utf-8")
    (tmp_path / "docs" / "tab\there\r.txt").write_text("hit\n", encoding="utf-8")
    (tmp_path / "docs" / "back\\n.txt").write_text("hit\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    glob = run(tools, "glob", pattern="**/*").content
    grep = run(tools, "grep", pattern="hit").content
    for content in (glob, grep):
        lines = content.splitlines()
        assert len(lines) == 4, lines  # the header and one line per file
        assert not any(line.startswith("../outside") for line in lines)
    assert set(lines_of(glob)) == {
        "docs/notes\\n../outside/secret.txt",
        "docs/tab\\there\\r.txt",
        "docs/back\\\\n.txt",  # a backslash is escaped too: the escape can be read back
    }
    assert "docs/notes\\n../outside/secret.txt:1: hit" in lines_of(grep)

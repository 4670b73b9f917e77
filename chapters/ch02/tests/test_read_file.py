"""read_file: numbered lines in pages, cut long lines, refuse what is not text."""

from __future__ import annotations

from pathlib import Path

from chapters.ch02.reading import MAX_LINE_CHARS, PAGE_LINES
from chapters.ch02.tests.helpers import file_tools, run


def test_numbered_lines_like_cat_n(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    result = run(file_tools(tmp_path), "read_file", path="a.txt")
    assert result.keyword == "ok"
    assert (
        result.content == "ok: a.txt, lines 1-2 of 2 (the whole file)\n     1\talpha\n     2\tbeta"
    )


def test_default_page_is_2000_lines_with_a_note_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "".join(f"line {n}\n" for n in range(1, 2501)), encoding="utf-8"
    )
    content = run(file_tools(tmp_path), "read_file", path="long.txt").content
    lines = content.splitlines()
    assert lines[0] == f"ok: long.txt, lines 1-{PAGE_LINES} of 2500"
    assert lines[PAGE_LINES] == f"  {PAGE_LINES}\tline {PAGE_LINES}"
    assert lines[-1] == "[500 more lines: call read_file with offset=2001 to read on]"


def test_offset_and_limit_select_a_range(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"{n}\n" for n in range(1, 11)), encoding="utf-8")
    content = run(file_tools(tmp_path), "read_file", path="n.txt", offset=4, limit=3).content
    assert content.splitlines() == [
        "ok: n.txt, lines 4-6 of 10",
        "     4\t4",
        "     5\t5",
        "     6\t6",
        "[4 more lines: call read_file with offset=7 to read on]",
    ]


def test_offset_past_the_end_says_how_long_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("1\n2\n", encoding="utf-8")
    content = run(file_tools(tmp_path), "read_file", path="n.txt", offset=9).content
    assert content == "ok: n.txt has 2 lines; offset 9 is past the end."


def test_limit_above_a_page_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("1\n", encoding="utf-8")
    result = run(file_tools(tmp_path), "read_file", path="n.txt", limit=PAGE_LINES + 1)
    assert result.keyword == "invalid_arguments"


def test_long_lines_are_cut_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("x" * 5000 + "\nshort\n", encoding="utf-8")
    lines = run(file_tools(tmp_path), "read_file", path="wide.txt").content.splitlines()
    assert lines[1] == "     1\t" + "x" * MAX_LINE_CHARS + "… [line cut: 5000 characters]"
    assert lines[2] == "     2\tshort"


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    assert (
        run(file_tools(tmp_path), "read_file", path="e.txt").content
        == "ok: e.txt is empty (0 lines)."
    )


def test_crlf_and_bom_are_not_shown_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    content = run(file_tools(tmp_path), "read_file", path="w.txt").content
    assert content.splitlines()[1:] == ["     1\tone", "     2\ttwo"]


def test_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = run(file_tools(tmp_path), "read_file", path="img.png")
    assert result.keyword == "not_text" and "binary" in result.content


def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "gbk.txt").write_bytes("中文".encode("gbk"))
    result = run(file_tools(tmp_path), "read_file", path="gbk.txt")
    assert result.keyword == "not_text" and "not UTF-8" in result.content


def test_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    result = run(file_tools(tmp_path), "read_file", path="src")
    assert result.keyword == "is_directory" and "glob" in result.content


def test_missing_file(tmp_path: Path) -> None:
    result = run(file_tools(tmp_path), "read_file", path="nope.txt")
    assert result.keyword == "not_found" and "nope.txt" in result.content


def test_reading_needs_no_approval(tmp_path: Path) -> None:
    from chapters.ch02.tests.helpers import file_harness
    from shared.scripted import response, tool_call

    (tmp_path / "a.txt").write_text("hi\n", encoding="utf-8")
    h = file_harness(
        tmp_path,
        [response(None, [tool_call("c1", "read_file", '{"path": "a.txt"}')]), response("ok")],
    )
    assert h.run() == "ok"
    assert h.approver.requests == []
    assert h.tool_messages()[0].content.startswith("ok: a.txt")

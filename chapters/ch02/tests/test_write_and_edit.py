"""write_file and edit_file: read before write, exact edits, CRLF and BOM kept, atomic writes."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from chapters.ch02.tests.helpers import file_harness, file_tools, prepare, run
from shared.scripted import response, tool_call
from shared.tools import PreparedCall, ToolRegistry


def read(tools: ToolRegistry, path: str) -> None:
    assert run(tools, "read_file", path=path).keyword == "ok"


# -- write_file ---------------------------------------------------------------------------


def test_write_creates_the_file_and_its_folders(tmp_path: Path) -> None:
    result = run(file_tools(tmp_path), "write_file", path="docs/new/notes.md", content="# Notes\n")
    assert result.content == "ok: created docs/new/notes.md; docs/new/notes.md now has 1 line."
    assert (tmp_path / "docs/new/notes.md").read_bytes() == b"# Notes\n"


def test_the_preview_of_a_new_file_is_a_diff_from_nothing(tmp_path: Path) -> None:
    prepared = prepare(file_tools(tmp_path), "write_file", path="a.txt", content="one\ntwo\n")
    assert isinstance(prepared, PreparedCall)
    assert prepared.preview == "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    assert not (tmp_path / "a.txt").exists()  # preparing has no side effects


def test_overwriting_an_unread_file_is_refused_before_anyone_is_asked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("precious\n", encoding="utf-8")
    result = prepare(file_tools(tmp_path), "write_file", path="a.txt", content="gone\n")
    assert not isinstance(result, PreparedCall)
    assert result.keyword == "not_read" and "read_file" in result.content
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "precious\n"


def test_a_file_changed_since_it_was_read_is_stale(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("v1\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    read(tools, "a.txt")
    target.write_text("v2 by the human\n", encoding="utf-8")
    for name, args in [
        ("write_file", {"content": "v3\n"}),
        ("edit_file", {"old_string": "v2", "new_string": "v3"}),
    ]:
        result = run(tools, name, path="a.txt", **args)
        assert result.keyword == "stale", name
    assert target.read_text(encoding="utf-8") == "v2 by the human\n"


def test_the_agent_may_edit_again_what_it_just_wrote(tmp_path: Path) -> None:
    tools = file_tools(tmp_path)
    assert run(tools, "write_file", path="a.txt", content="one\n").keyword == "ok"
    result = run(tools, "edit_file", path="a.txt", old_string="one", new_string="two")
    assert result.keyword == "ok"
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "two\n"


def test_overwrite_keeps_the_files_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfold\r\n")
    tools = file_tools(tmp_path)
    read(tools, "w.txt")
    assert run(tools, "write_file", path="w.txt", content="new\nlines\n").keyword == "ok"
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfnew\r\nlines\r\n"


def test_writing_the_same_content_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    read(tools, "a.txt")
    assert run(tools, "write_file", path="a.txt", content="same\n").keyword == "no_change"


def test_a_folder_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert (
        run(file_tools(tmp_path), "write_file", path="src", content="x").keyword == "is_directory"
    )


# -- edit_file ----------------------------------------------------------------------------


def edit(root: Path, name: str, data: bytes, **args: object) -> tuple[str, bytes]:
    (root / name).write_bytes(data)
    tools = file_tools(root)
    read(tools, name)
    result = run(tools, "edit_file", path=name, **args)
    return result.content, (root / name).read_bytes()


def test_edit_replaces_the_one_occurrence(tmp_path: Path) -> None:
    content, data = edit(
        tmp_path, "a.py", b"x = 1\ny = 2\n", old_string="y = 2", new_string="y = 3"
    )
    assert content == "ok: edited a.py (1 replaced); a.py now has 2 lines."
    assert data == b"x = 1\ny = 3\n"


def test_zero_matches_is_an_error_with_the_count(tmp_path: Path) -> None:
    content, data = edit(tmp_path, "a.py", b"x = 1\n", old_string="z = 9", new_string="z = 0")
    assert content.startswith("no_match") and "0 matches" in content
    assert data == b"x = 1\n"


def test_several_matches_is_an_error_with_the_count(tmp_path: Path) -> None:
    content, data = edit(tmp_path, "a.py", b"a\na\na\n", old_string="a", new_string="b")
    assert content.startswith("ambiguous") and "occurs 3 times" in content
    assert data == b"a\na\na\n"


def test_replace_all_replaces_every_occurrence(tmp_path: Path) -> None:
    content, data = edit(
        tmp_path, "a.py", b"a\na\na\n", old_string="a", new_string="b", replace_all=True
    )
    assert "3 replaced" in content
    assert data == b"b\nb\nb\n"


def test_crlf_stays_crlf(tmp_path: Path) -> None:
    _, data = edit(
        tmp_path,
        "win.txt",
        b"first\r\nsecond\r\nthird\r\n",
        old_string="second\nthird",  # the model copies lines as it saw them, with \n
        new_string="2nd\n3rd\n4th",
    )
    assert data == b"first\r\n2nd\r\n3rd\r\n4th\r\n"


def test_a_utf8_bom_is_kept(tmp_path: Path) -> None:
    _, data = edit(
        tmp_path,
        "bom.txt",
        b"\xef\xbb\xbf\xe4\xbd\xa0\xe5\xa5\xbd\n",
        old_string="你好",
        new_string="再见",
    )
    assert data == b"\xef\xbb\xbf" + "再见\n".encode()


def test_editing_a_missing_file_points_to_write_file(tmp_path: Path) -> None:
    result = run(file_tools(tmp_path), "edit_file", path="a.py", old_string="x", new_string="y")
    assert result.keyword == "not_found" and "write_file" in result.content


def test_editing_an_unread_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n", encoding="utf-8")
    result = run(file_tools(tmp_path), "edit_file", path="a.py", old_string="x", new_string="y")
    assert result.keyword == "not_read"


def test_edit_refuses_a_binary_file(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    result = run(file_tools(tmp_path), "edit_file", path="b.bin", old_string="ab", new_string="x")
    assert result.keyword == "not_text"
    assert (tmp_path / "b.bin").read_bytes() == b"ab\x00cd"


def test_empty_old_string_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n", encoding="utf-8")
    result = run(file_tools(tmp_path), "edit_file", path="a.py", old_string="", new_string="y")
    assert result.keyword == "invalid_arguments"


# -- atomic writes ------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["os.replace", "os.fsync"])
def test_a_failing_write_leaves_the_old_file_intact(
    failing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("old\n", encoding="utf-8")
    tools = file_tools(tmp_path)
    read(tools, "a.txt")

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(f"chapters.ch02.text_files.{failing}", broken)
    result = run(tools, "write_file", path="a.txt", content="new\n")
    assert result.keyword == "io_error" and "No space left" in result.content
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temp file left


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_rewrite_keeps_the_permission_bits(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo a\n", encoding="utf-8")
    os.chmod(script, 0o755)
    tools = file_tools(tmp_path)
    read(tools, "run.sh")
    assert run(tools, "edit_file", path="run.sh", old_string="a", new_string="b").keyword == "ok"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        result = run(file_tools(tmp_path), "write_file", path="new/a.txt", content="a\n")
    finally:
        os.umask(old)
    assert result.keyword == "ok", result.content
    assert stat.S_IMODE((tmp_path / "new" / "a.txt").stat().st_mode) == 0o666 & ~umask


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_rewrite_keeps_a_private_mode_whatever_the_umask(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("a\n", encoding="utf-8")
    os.chmod(secret, 0o600)
    tools = file_tools(tmp_path)
    read(tools, "secret.txt")
    old = os.umask(0o002)
    try:
        result = run(tools, "write_file", path="secret.txt", content="b\n")
    finally:
        os.umask(old)
    assert result.keyword == "ok", result.content
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


# -- approval --------------------------------------------------------------------------------


def edit_steps() -> list[object]:
    args = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    return [
        response(None, [tool_call("c1", "read_file", '{"path": "a.py"}')]),
        response(None, [tool_call("c2", "edit_file", json.dumps(args))]),
        response("done"),
    ]


def test_the_human_approves_a_diff(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    h = file_harness(tmp_path, edit_steps(), answers=[True])  # type: ignore[arg-type]
    assert h.run() == "done"
    (request,) = h.approver.requests  # the read was not asked about, the edit was
    assert request.tool_name == "edit_file" and "write" in request.reason
    assert request.preview is not None
    assert "-x = 1\n+x = 2\n" in request.preview
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "x = 2\n"


def test_a_refused_edit_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    h = file_harness(tmp_path, edit_steps(), answers=[False])  # type: ignore[arg-type]
    h.run()
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "x = 1\n"
    assert h.tool_messages()[1].content.startswith("denied")


def test_the_plain_console_shows_the_diff_and_shortens_long_arguments(tmp_path: Path) -> None:
    from chapters.ch01.tests.harness import plain_console
    from shared.approval import ApprovalRequest, TerminalApprover

    console = plain_console()
    long_content = "y" * 500
    request = ApprovalRequest(
        "write_file",
        "write: changes files on disk",
        {"path": "a.txt", "content": long_content},
        preview="--- /dev/null\n+++ b/a.txt\n",
    )
    TerminalApprover(console, interactive=False).approve(request)
    assert isinstance(console.err, io.StringIO)
    shown = console.err.getvalue()
    assert "+++ b/a.txt" in shown
    assert long_content not in shown and "(500 characters)" in shown

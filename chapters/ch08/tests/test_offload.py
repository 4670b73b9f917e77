"""Offloading: a result over the threshold is saved whole before it enters the history, and
the model reads a view of it that says where the rest is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chapters.ch08.offload import (
    RESULTS_FOLDER,
    WINDOWS_RESERVED,
    Offloader,
    safe_file_name,
)
from chapters.ch08.tests.support import (
    Rig,
    answering,
    calling,
    emit,
    emitted,
    plain_console,
    printed,
)
from shared.agent import Feature, Run
from shared.messages import Message, ToolMessage
from shared.scripted import tool_call


def tool_messages(rig: Rig) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in rig.history if isinstance(m, ToolMessage)}


def test_a_result_at_the_threshold_passes_and_one_character_more_is_saved(tmp_path: Path) -> None:
    rig = Rig(
        tmp_path,
        [calling(emit("c1", 20_000), emit("c2", 20_001)), answering()],
    )
    rig.run()
    results = tool_messages(rig)
    assert results["c1"] == emitted(20_000)
    assert not (tmp_path / RESULTS_FOLDER / "c1.txt").exists()
    saved = tmp_path / RESULTS_FOLDER / "c2.txt"
    assert saved.read_bytes() == emitted(20_001).encode("utf-8")  # whole, byte for byte
    assert len(results["c2"]) < 2_600


def test_the_view_shows_head_and_tail_size_path_lines_and_how_to_read_on(tmp_path: Path) -> None:
    text = emitted(50_000)
    rig = Rig(tmp_path, [calling(emit("call_9", 50_000)), answering()])
    rig.run()
    view = tool_messages(rig)["call_9"]
    head, rest = view.split("\n[… ", 1)
    hidden, rest = rest.split(" characters not shown …]\n", 1)
    tail, note = rest.rsplit("\n[harness: ", 1)
    assert text.startswith(head) and text.endswith(tail)
    assert 1_800 <= len(head) + len(tail) <= 2_000
    hidden_count = int(hidden.replace(",", ""))  # the split dropped a line end or two
    assert 0 <= len(text) - len(head) - len(tail) - hidden_count <= 2
    assert "50,000 characters" in note and ".tutorial/tool-results/call_9.txt" in note
    assert "read_file (path, offset, limit)" in note and "grep" in note
    lines = text.splitlines()
    shown = re.search(r"lines 1-(\d+) and (\d+)-(\d+)\.", note)
    assert shown is not None
    first, last_from, total = map(int, shown.groups())
    assert total == len(lines)
    assert head.splitlines() == lines[:first]  # read_file(offset=first+1) reads on exactly
    assert tail.splitlines() == lines[last_from - 1 :]


def test_the_file_is_written_before_the_tool_message_enters_the_history(tmp_path: Path) -> None:
    seen: list[bool] = []

    class Watch(Feature):
        def on_message(self, run: Run, message: Message) -> None:
            if isinstance(message, ToolMessage):
                seen.append((tmp_path / RESULTS_FOLDER / "c1.txt").exists())

    rig = Rig(tmp_path, [calling(emit("c1", 30_000)), answering()], more_features=[Watch()])
    rig.run()
    assert seen == [True]


def test_the_console_says_so_in_one_line(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [calling(emit("c1", 30_000)), answering()])
    rig.run()
    said = [line for line in rig.printed().splitlines() if "saved to" in line]
    assert said == [
        "harness: emit's result (30,000 characters) saved to .tutorial/tool-results/c1.txt; "
        "the model reads about 2,000 characters of it"
    ]


def test_an_unwritable_folder_gives_the_view_and_says_the_rest_is_lost(tmp_path: Path) -> None:
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / RESULTS_FOLDER).write_text("a file where the folder should be", encoding="utf-8")
    rig = Rig(tmp_path, [calling(emit("c1", 30_000)), answering("still here")])
    assert rig.run() == "still here"
    view = tool_messages(rig)["c1"]
    assert view.startswith("ok: 0000000 ")
    assert "[… " in view and "the rest is lost" in view.lower()
    assert "could not be saved" in view
    assert "could not be saved" in rig.printed()
    assert rig.offloader.saved == {}


def test_a_name_taken_by_an_earlier_run_gets_a_number_and_nothing_is_overwritten(
    tmp_path: Path,
) -> None:
    folder = tmp_path / RESULTS_FOLDER
    folder.mkdir(parents=True)
    (folder / "c1.txt").write_text("an earlier run's result", encoding="utf-8")
    rig = Rig(tmp_path, [calling(emit("c1", 30_000)), answering()])
    rig.run()
    assert (folder / "c1.txt").read_text(encoding="utf-8") == "an earlier run's result"
    assert (folder / "c1-2.txt").read_text(encoding="utf-8") == emitted(30_000)
    assert ".tutorial/tool-results/c1-2.txt" in tool_messages(rig)["c1"]


def test_an_id_from_the_model_cannot_name_a_path(tmp_path: Path) -> None:
    offloader = Offloader(tmp_path, plain_console(), over=10, shown=4)
    for call_id in ["../../etc/passwd", "..", "a/b\\c:d", "CON", "nul", "", "函数.调用:0"]:
        saved = offloader.save(call_id, "text")
        path = tmp_path / saved.path
        assert path.parent == tmp_path / RESULTS_FOLDER, call_id
        assert path.read_text(encoding="utf-8") == "text"


@given(st.text(max_size=300))
def test_a_safe_file_name_is_safe_for_any_id(call_id: str) -> None:
    name = safe_file_name(call_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,101}", name)
    assert name.upper() not in WINDOWS_RESERVED
    assert ".." not in name


def test_a_page_of_a_saved_result_is_cut_again_but_not_saved_again(tmp_path: Path) -> None:
    big = emitted(30_000)
    rig = Rig(
        tmp_path,
        [
            calling(emit("c1", 30_000)),
            calling(tool_call("c2", "page", '{"path": ".tutorial/tool-results/c1.txt"}')),
            answering(),
        ],
    )
    rig.run()
    assert sorted(p.name for p in (tmp_path / RESULTS_FOLDER).iterdir()) == ["c1.txt"]
    page = tool_messages(rig)["c2"]
    assert page.startswith(big[:500]) and "smaller pages" in page
    assert "page of a saved result was cut" in rig.printed()


@pytest.mark.parametrize("shown", [1, 30_001])
def test_the_view_must_fit_under_the_threshold(tmp_path: Path, shown: int) -> None:
    with pytest.raises(ValueError):
        Offloader(tmp_path, plain_console(), over=30_000, shown=shown)


def test_a_denied_or_failed_result_is_offloaded_like_any_other(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [calling(emit("c1", -25_000)), answering()])
    rig.run()
    assert tool_messages(rig)["c1"].startswith("emit_failed: xxx")
    assert (tmp_path / RESULTS_FOLDER / "c1.txt").stat().st_size == 25_000 + len("emit_failed: ")
    assert "saved to" in printed(rig.console)


def test_a_result_utf8_cannot_hold_is_still_saved_and_the_run_goes_on(tmp_path: Path) -> None:
    """A tool may echo what the model sent, lone surrogates included."""
    odd = "ok: " + "\ud800 half a pair\n" * 2_000
    rig = Rig(tmp_path, [calling(emit("c1", 10)), answering()])
    saved = rig.offloader.save("c1", odd)
    assert (tmp_path / saved.path).read_text(encoding="utf-8").startswith("ok: \\ud800 half")
    rig.transcript.record(Run(rig.spec, "p", []), ToolMessage(tool_call_id="c1", content=odd))
    (line,) = rig.transcript_lines()
    assert line["message"]["content"] == odd  # the escape reads back as the same text

"""Old tool results: after `keep` requests a long result is sent as a stub, the same bytes every
time, and its full text is somewhere the model can read it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from chapters.ch08.offload import RESULTS_FOLDER
from chapters.ch08.old_results import STUB_MARK
from chapters.ch08.tests.support import Rig, answering, calling, emit, emitted
from shared.agent import Feature, Run


def sent_result(request: dict[str, Any], call_id: str) -> str:
    (content,) = [
        m["content"]
        for m in request["messages"]
        if m["role"] == "tool" and m["tool_call_id"] == call_id
    ]
    return str(content)


def steps_after_one_big_result(size: int, replies: int) -> list[dict[str, Any]]:
    """c1 returns `size` characters; then `replies` small calls; then the answer."""
    small = [calling(emit(f"s{n}", 10)) for n in range(replies)]
    return [calling(emit("c1", size)), *small, answering()]


def test_a_long_result_is_sent_whole_by_keep_requests_then_as_a_stub(tmp_path: Path) -> None:
    rig = Rig(tmp_path, steps_after_one_big_result(5_000, 8), keep_results=6)
    rig.run()
    carried = [sent_result(r, "c1") for r in rig.requests[1:]]  # c1 entered before request 2
    assert [len(c) for c in carried[:6]] == [5_000] * 6  # requests 2 to 7
    assert all(c.startswith(STUB_MARK) for c in carried[6:])  # request 8 on
    assert (tmp_path / RESULTS_FOLDER / "c1.txt").read_text(encoding="utf-8") == emitted(5_000)


def test_the_stub_says_which_call_how_big_and_where_the_text_is(tmp_path: Path) -> None:
    rig = Rig(tmp_path, steps_after_one_big_result(5_000, 3), keep_results=2)
    rig.run()
    assert sent_result(rig.requests[-1], "c1") == (
        f'{STUB_MARK} emit {{"size": 5000, "fill": "x"}} (c1) returned 5,000 characters, '
        'starting "ok: 0000000 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx". '
        "The whole text is in .tutorial/tool-results/c1.txt: read it with read_file "
        "(path, offset, limit) or grep."
    )
    assert "old tool results replaced by stubs" in rig.printed()


def test_two_requests_in_a_row_carry_the_same_bytes_where_the_old_result_was(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, steps_after_one_big_result(5_000, 6), keep_results=2)
    rig.run()
    later_ones = rig.requests[1:]  # the first request is sent before c1 exists
    stubbed = [r for r in later_ones if sent_result(r, "c1").startswith(STUB_MARK)]
    assert len(stubbed) >= 3
    for earlier, later in itertools.pairwise(stubbed):
        shared = len(earlier["messages"])
        assert json.dumps(later["messages"][:shared]) == json.dumps(earlier["messages"])


def test_a_result_of_2000_characters_or_fewer_is_never_replaced(tmp_path: Path) -> None:
    rig = Rig(tmp_path, steps_after_one_big_result(2_000, 8), keep_results=2)
    rig.run()
    assert sent_result(rig.requests[-1], "c1") == emitted(2_000)
    assert not (tmp_path / RESULTS_FOLDER).exists()


def test_an_offloaded_result_becomes_a_stub_naming_its_file_and_its_whole_size(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, steps_after_one_big_result(30_000, 3), keep_results=2)
    rig.run()
    stub = sent_result(rig.requests[-1], "c1")
    assert "returned 30,000 characters" in stub
    assert ".tutorial/tool-results/c1.txt" in stub
    assert sorted(p.name for p in (tmp_path / RESULTS_FOLDER).iterdir()) == ["c1.txt"]


def test_when_the_text_cannot_be_saved_the_stub_points_at_the_transcript(tmp_path: Path) -> None:
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / RESULTS_FOLDER).write_text("in the way", encoding="utf-8")
    rig = Rig(tmp_path, steps_after_one_big_result(5_000, 3), keep_results=2)
    rig.run()
    stub = sent_result(rig.requests[-1], "c1")
    assert stub.startswith(STUB_MARK)
    assert (
        'transcript .tutorial/transcripts/run-1.jsonl, on the line whose "tool_call_id" is "c1"'
        in stub
    )
    (line,) = [
        entry for entry in rig.transcript_lines() if entry["message"].get("tool_call_id") == "c1"
    ]
    assert line["message"]["content"] == emitted(5_000)


def test_a_result_saved_nowhere_stays_whole(tmp_path: Path) -> None:
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / RESULTS_FOLDER).write_text("in the way", encoding="utf-8")
    (tmp_path / ".tutorial" / "transcripts").write_text("in the way too", encoding="utf-8")
    rig = Rig(tmp_path, steps_after_one_big_result(5_000, 4), keep_results=2)
    rig.run()
    assert sent_result(rig.requests[-1], "c1") == emitted(5_000)
    assert "cannot write the transcript" in rig.printed()


def test_a_stub_names_the_file_of_its_own_result_when_another_history_used_the_same_id(
    tmp_path: Path,
) -> None:
    """A sub-agent's calls go through the same finisher, with ids of their own history."""
    rig: Rig

    class Child(Feature):
        def before_request(self, run: Run) -> None:
            if run.turn == 2:  # after c1 was offloaded: a child's own c1 is saved too
                rig.offloader.save("c1", "a result of another history, with the same id")

    rig = Rig(
        tmp_path,
        steps_after_one_big_result(30_000, 3),
        keep_results=2,
        more_features=[Child()],
    )
    rig.run()
    assert (tmp_path / RESULTS_FOLDER / "c1-2.txt").exists()  # the child's
    stub = sent_result(rig.requests[-1], "c1")
    assert ".tutorial/tool-results/c1.txt" in stub and "returned 30,000 characters" in stub

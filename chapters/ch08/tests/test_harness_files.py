"""Saved results and transcripts are never written through a planted link: a folder of them that
leads out of the workspace, or a transcript file that is a link, is refused with a notice, and
the run goes on (the result as a view that says the rest is lost; nothing replaced that only the
transcript would have kept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch03.tests.support import link, planted_link
from chapters.ch08.offload import RESULTS_FOLDER
from chapters.ch08.tests.support import RUN_ID, Rig, answering, calling, emit, emitted
from chapters.ch08.tests.test_compaction import WINDOW, compaction_requests, work
from chapters.ch08.transcript import TRANSCRIPTS_FOLDER
from shared.messages import ToolMessage


@pytest.mark.parametrize("linked", [".tutorial", RESULTS_FOLDER.as_posix()])
def test_a_big_result_is_not_saved_through_a_folder_linked_outside(
    workspace: Path, outside: Path, linked: str
) -> None:
    link(workspace / linked, outside)
    rig = Rig(workspace, [calling(emit("c1", 30_000)), answering()])
    assert rig.run() == "done"
    assert list(outside.iterdir()) == []
    (view,) = [m.content for m in rig.history if isinstance(m, ToolMessage)]
    assert view.startswith(emitted(30_000)[:500])
    assert "The rest is lost: it could not be saved (" in view
    assert "leads outside" in rig.printed()


def test_a_transcript_folder_linked_outside_gets_no_line_and_nothing_is_compacted(
    workspace: Path, outside: Path
) -> None:
    link(workspace / TRANSCRIPTS_FOLDER, outside)
    rig = Rig(workspace, [*work(6, last_tokens=9_000), answering()], window=WINDOW, keep_tokens=200)
    assert rig.run() == "done"
    assert list(outside.iterdir()) == []
    assert compaction_requests(rig) == []  # nothing replaced whose only copy is not on disk
    assert "harness: cannot write the transcript .tutorial/transcripts/" in rig.printed()
    assert ".tutorial/transcripts leads outside" in rig.printed()


def test_a_transcript_file_that_is_a_link_is_not_written_through(
    workspace: Path, outside: Path
) -> None:
    target = planted_link(workspace / TRANSCRIPTS_FOLDER / f"{RUN_ID}.jsonl", outside)
    rig = Rig(workspace, [answering()])
    assert rig.run() == "done"
    assert target.read_bytes() == b"mine\n"
    assert not rig.transcript.intact
    assert f"{RUN_ID}.jsonl (it is a link: the harness does not open its own files through" in (
        rig.printed()
    )

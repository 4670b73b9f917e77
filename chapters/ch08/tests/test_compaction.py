"""Compaction: when it starts, what the summary request looks like, what the history becomes,
how a failing summary is retried, and that nothing is lost."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch08.compaction import (
    COMPACT_MARK,
    MAX_SUMMARY_RETRIES,
    SUMMARY_MARK,
    Compactor,
    is_context_overflow,
)
from chapters.ch08.measure import messages_tokens
from chapters.ch08.tests.support import (
    PROMPT,
    SYSTEM,
    EveryMessage,
    Rig,
    answering,
    calling,
    emit,
    is_compaction,
    summary,
)
from chapters.ch08.transcript import Transcript, new_run_id
from shared.contract import ContractChecker
from shared.errors import ProviderError, ProviderErrorKind
from shared.scripted import Step, response

WINDOW = 10_000  # threshold 8,000 at the default 0.8


def overflow(request: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a provider answers a request longer than its model's context (vLLM's words)."""
    raise ProviderError(
        "the provider refused the request (HTTP 400)",
        400,
        kind=ProviderErrorKind.BAD_REQUEST,
        body=json.dumps(
            {"error": {"message": "This model's maximum context length is 8192 tokens."}}
        ),
    )


def server_error(request: Mapping[str, Any]) -> Mapping[str, Any]:
    raise ProviderError("HTTP 500", 500, kind=ProviderErrorKind.SERVER, body="oops")


def work(turns: int, *, size: int = 400, last_tokens: int | None = None) -> list[dict[str, Any]]:
    """`turns` replies with one call each; the last one's usage says `last_tokens`."""
    steps = [calling(emit(f"c{n}", size)) for n in range(1, turns + 1)]
    if last_tokens is not None:
        steps[-1] = calling(emit(f"c{turns}", size), tokens=last_tokens)
    return steps


def normal_requests(rig: Rig) -> list[dict[str, Any]]:
    return [r for r in rig.requests if not is_compaction(r)]


def compaction_requests(rig: Rig) -> list[dict[str, Any]]:
    return [r for r in rig.requests if is_compaction(r)]


# --- when -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("over", "compacts"), [(0, False), (1, True)])
def test_compaction_starts_before_a_request_estimated_above_the_threshold(
    tmp_path: Path, over: int, compacts: bool
) -> None:
    probe = Rig(tmp_path / "probe", [*work(4, last_tokens=1_000), answering()], window=10**6)
    probe.run()
    added = probe.compactor.meter.last - 1_000  # the last reply and its result, estimated
    measured = 8_000 - added + over  # so the next request is sized at 8,000 + over
    steps: list[Step] = [*work(4, last_tokens=measured), summary(), answering()]
    rig = Rig(tmp_path / "run", steps, window=WINDOW, keep_tokens=200)
    rig.run()
    assert bool(compaction_requests(rig)) is compacts
    assert rig.compactor.compactions == int(compacts)


def test_the_size_is_measured_so_a_provider_count_above_the_threshold_compacts(
    tmp_path: Path,
) -> None:
    """The history itself is small; only the provider's count says the context is full."""
    steps: list[Step] = [*work(3), calling(emit("c4", 10), tokens=9_500), summary(), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    rig.run()
    assert messages_tokens(rig.history) < 1_000
    assert len(compaction_requests(rig)) == 1


# --- the summary request ------------------------------------------------------------------------


def compacted_rig(tmp_path: Path, **more: Any) -> Rig:
    steps: list[Step] = [*work(6, last_tokens=9_000), summary(), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200, **more)
    rig.run()
    return rig


def test_the_summary_request_has_the_same_prefix_a_compact_marker_and_no_tools_allowed(
    tmp_path: Path,
) -> None:
    rig = compacted_rig(tmp_path)
    before, asked = rig.requests[5], rig.requests[6]
    assert is_compaction(asked)
    assert asked["tool_choice"] == "none"
    assert asked["tools"] == before["tools"]  # the same tools: the same prefix for the cache
    assert asked["messages"][: len(before["messages"])] == before["messages"]
    last = asked["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith(COMPACT_MARK)
    for kept in ("task", "constraint", "decisions", "files", "left to do"):
        assert kept in last["content"]
    assert "tool_choice" not in rig.requests[7]  # the loop's requests are as before


def test_the_history_becomes_system_prompt_summary_and_recent_messages(tmp_path: Path) -> None:
    rig = compacted_rig(tmp_path)
    sent = rig.requests[7]["messages"]
    assert sent[0] == {"role": "system", "content": SYSTEM}
    assert sent[1] == {"role": "user", "content": PROMPT}  # verbatim
    assert sent[2]["role"] == "user"
    assert sent[2]["content"].startswith(SUMMARY_MARK)
    assert sent[2]["content"].endswith("SUMMARY: the task, what was done, what is left.")
    assert ".tutorial/transcripts/run-1.jsonl" in sent[2]["content"]
    assert sent[3]["role"] == "assistant"  # the recent messages start at a clean boundary
    assert sent[-2:] == rig.requests[6]["messages"][-3:-1]  # the newest call and its result
    assert len(sent) < len(rig.requests[5]["messages"])
    ContractChecker().check(rig.history)


def test_the_summary_request_is_named_in_the_trace_and_the_spinner(tmp_path: Path) -> None:
    rig = Rig(
        tmp_path,
        [*work(6, last_tokens=9_000), summary(), answering()],
        window=WINDOW,
        keep_tokens=200,
    )
    rig.console.tracing = True
    rig.run()
    text = rig.printed()
    assert "--- compaction request 7 ---" in text
    assert "--- compaction response 7 ---" in text
    assert "(turn 7, compaction)" in text
    assert "--- request 7 ---" in text  # then the loop's own request 7


def test_one_console_line_per_compaction_with_the_size_before_and_after(tmp_path: Path) -> None:
    rig = compacted_rig(tmp_path)
    lines = [line for line in rig.printed().splitlines() if "compacted the context" in line]
    assert len(lines) == 1
    found = re.search(r"before request 7: ([\d,]+) → ([\d,]+) tokens of 10,000", lines[0])
    assert found is not None
    before, after = (int(n.replace(",", "")) for n in found.groups())
    assert before > 8_000 and after < before
    assert "messages summarised" in lines[0] and ".tutorial/transcripts/run-1.jsonl" in lines[0]


# --- when the summary fails -------------------------------------------------------------------


def test_a_summary_too_long_for_the_model_is_asked_again_without_the_oldest_turn(
    tmp_path: Path,
) -> None:
    steps: list[Step] = [*work(6, last_tokens=9_000), overflow, overflow, summary(), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    assert rig.run() == "done"
    asked = compaction_requests(rig)
    assert len(asked) == 3
    replies = [sum(m["role"] == "assistant" for m in r["messages"]) for r in asked]
    assert replies == [6, 5, 4]
    assert asked[1]["messages"][:2] == asked[0]["messages"][:2]  # system prompt and prompt stay
    for request in asked:
        assert request["messages"][-1]["content"].startswith(COMPACT_MARK)
    assert rig.printed().count("asking again without the oldest turn") == 2
    assert rig.compactor.compactions == 1


def test_after_three_retries_the_run_goes_on_uncompacted_and_says_so(tmp_path: Path) -> None:
    failing = [overflow] * (MAX_SUMMARY_RETRIES + 1)
    steps: list[Step] = [*work(6, last_tokens=9_000), *failing, answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    assert rig.run() == "done"
    assert len(compaction_requests(rig)) == 4
    assert "could not compact the context (the summary request was too long, 4 times)" in (
        rig.printed()
    )
    assert "going on uncompacted at 9," in rig.printed()
    assert (
        rig.requests[-1]["messages"][: len(rig.requests[5]["messages"])]
        == (rig.requests[5]["messages"])
    )  # the history was left as it was
    assert rig.compactor.compactions == 0


def test_another_failure_goes_on_uncompacted_at_once(tmp_path: Path) -> None:
    steps: list[Step] = [*work(6, last_tokens=9_000), server_error, answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    assert rig.run() == "done"
    assert len(compaction_requests(rig)) == 1
    assert "the summary request failed: HTTP 500" in rig.printed()


def test_after_a_failure_it_waits_for_the_context_to_grow_before_trying_again(
    tmp_path: Path,
) -> None:
    steps: list[Step] = [
        *work(6, last_tokens=9_000),
        server_error,  # fails at about 9,000
        calling(emit("c7", 10), tokens=9_100),  # about the same size: not tried again
        calling(emit("c8", 10), tokens=10_300),  # grown by a tenth of the window: tried again
        summary(),
        answering(),
    ]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    rig.run()
    assert [i for i, r in enumerate(rig.requests) if is_compaction(r)] == [6, 9]


def test_an_empty_summary_is_a_failure(tmp_path: Path) -> None:
    steps: list[Step] = [*work(6, last_tokens=9_000), summary("   "), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    rig.run()
    assert "the model wrote no summary" in rig.printed()
    assert rig.compactor.compactions == 0


def test_a_summary_cut_off_at_the_output_limit_is_a_failure(tmp_path: Path) -> None:
    """A small model can write one word until the bound; what it wrote is not a summary."""
    cut = response("summary " * 50, finish_reason="length")
    steps: list[Step] = [*work(6, last_tokens=9_000), cut, answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    rig.run()
    assert "the summary was cut off at the output limit" in rig.printed()
    assert rig.compactor.compactions == 0
    assert not any(SUMMARY_MARK in str(m.wire.get("content")) for m in rig.history)


def test_a_summary_no_shorter_than_what_it_replaces_is_refused(tmp_path: Path) -> None:
    """Compaction never makes the context bigger: the history stays as it was."""
    replaced = 6 * 400  # six results of about 400 characters each, and their calls
    steps: list[Step] = [*work(6, last_tokens=9_000), summary("x" * replaced * 4), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    rig.run()
    (line,) = [line for line in rig.printed().splitlines() if "could not compact" in line]
    assert "is no shorter than the" in line
    assert rig.compactor.compactions == 0
    assert not any(SUMMARY_MARK in str(m.wire.get("content")) for m in rig.history)


def test_nothing_is_summarised_when_everything_old_fits_in_the_kept_budget(
    tmp_path: Path,
) -> None:
    steps: list[Step] = [*work(2, last_tokens=9_000), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW)  # keeps up to 2,500 tokens: all of it
    rig.run()
    assert compaction_requests(rig) == []
    assert "nothing old enough to summarise" in rig.printed()


def test_a_context_length_error_that_ends_the_run_is_explained_in_one_line(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, [calling(emit("c1", 400), tokens=3_000), overflow], window=WINDOW)
    with pytest.raises(ProviderError):
        rig.run()
    (line,) = [line for line in rig.printed().splitlines() if "longer than the model's" in line]
    assert "of a 10,000-token window (not yet full)" in line
    assert "set the window to the model's real context size" in line


@pytest.mark.parametrize(
    ("status", "kind", "said", "overflows"),
    [
        (400, ProviderErrorKind.BAD_REQUEST, "maximum context length is 8192 tokens", True),
        (400, ProviderErrorKind.BAD_REQUEST, "prompt is too long: 210000 tokens", True),
        (
            400,
            ProviderErrorKind.BAD_REQUEST,
            "the request exceeds the available context size",
            True,
        ),
        (413, ProviderErrorKind.BAD_REQUEST, "", True),
        (400, ProviderErrorKind.BAD_REQUEST, "tools[0] is not valid", False),
        (401, ProviderErrorKind.AUTHENTICATION, "context length", False),
        (429, ProviderErrorKind.RATE_LIMITED, "too many tokens per minute", False),
    ],
)
def test_a_context_overflow_is_told_from_other_failures(
    status: int, kind: ProviderErrorKind, said: str, overflows: bool
) -> None:
    error = ProviderError("refused", status, kind=kind, body=json.dumps({"error": said}))
    assert is_context_overflow(error) is overflows


# --- nothing is lost ---------------------------------------------------------------------------


def test_the_transcript_holds_every_message_with_its_turn_and_each_summary(
    tmp_path: Path,
) -> None:
    every = EveryMessage()
    steps: list[Step] = [
        *work(6, last_tokens=9_000),
        summary("first summary"),
        calling(emit("c7", 400), tokens=2_000),  # measured after the first compaction
        calling(emit("c8", 400)),
        calling(emit("c9", 400), tokens=9_000),
        summary("second summary"),
        answering(),
    ]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200, more_features=[every])
    rig.run()
    assert rig.compactor.compactions == 2
    lines = rig.transcript_lines()
    messages = [(line["turn"], line["message"]) for line in lines if "note" not in line]
    assert messages == every.seen
    notes = [line["message"]["content"] for line in lines if line.get("note") == "summary"]
    assert [note.rsplit("\n", 1)[-1] for note in notes] == ["first summary", "second summary"]
    assert len(rig.history) < len(every.seen)


def test_every_message_is_on_disk_before_the_summary_is_asked_for(tmp_path: Path) -> None:
    rig: Rig

    def summarise(request: Mapping[str, Any]) -> Mapping[str, Any]:
        written = [line["message"] for line in rig.transcript_lines()]
        assert written == request["messages"][:-1]  # the whole history, before any is replaced
        return summary()

    rig = Rig(
        tmp_path,
        [*work(6, last_tokens=9_000), summarise, answering()],
        window=WINDOW,
        keep_tokens=200,
    )
    rig.run()
    assert rig.compactor.compactions == 1


def test_a_history_passed_in_is_written_to_the_transcript_before_the_prompt(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, [answering("first")])
    rig.run("first prompt")
    again = Rig(tmp_path / "again", [answering("second")])
    again.history = list(rig.history)
    again.run("second prompt")
    lines = again.transcript_lines()
    assert [line["message"] for line in lines] == [m.wire for m in again.history]
    assert [line["turn"] for line in lines] == [0, 0, 0, 0, 1]


def test_without_a_transcript_nothing_is_compacted(tmp_path: Path) -> None:
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / ".tutorial" / "transcripts").write_text("in the way", encoding="utf-8")
    steps: list[Step] = [*work(6, last_tokens=9_000), answering()]
    rig = Rig(tmp_path, steps, window=WINDOW, keep_tokens=200)
    assert rig.run() == "done"
    assert compaction_requests(rig) == []
    assert "the transcript could not be written" in rig.printed()


def test_a_run_id_sorts_by_time_and_is_a_safe_file_name() -> None:
    from datetime import datetime

    first = new_run_id(datetime(2026, 1, 5, 9, 30, 0))
    assert re.fullmatch(r"20260105-093000-[0-9a-f]{6}", first)
    assert new_run_id(datetime(2026, 1, 5, 9, 30, 0)) != first


def test_the_window_and_threshold_are_checked() -> None:
    transcript = Transcript(Path("."), "x")
    for window, at in [(0, 0.8), (1000, 0), (1000, 1.5)]:
        with pytest.raises(ValueError):
            Compactor(transcript, window=window, compact_at=at)

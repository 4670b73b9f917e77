"""Resuming: which session, the same log appended to, the old history plus the new prompt in the
first request, a cut last line, the repair (and that it is idempotent), and a history too long
for the window compacted first."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch08.compaction import SUMMARY_MARK, Compactor
from chapters.ch08.tests.support import answering, calling, emit, summary
from chapters.ch09.repair import INTERRUPTED_CALL, repair_history
from chapters.ch09.resume import CompactFirst, ResumedTooLong, resume_session
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch09.sessions import SessionNotFound, StoredSession, find_session, read_session
from chapters.ch09.tests.support import RESUMED, SYSTEM, Session, spec, wires
from shared.agent import Run
from shared.contract import ContractChecker
from shared.errors import EXIT_USAGE
from shared.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from shared.scripted import ScriptedModel

DONE = {"role": "assistant", "content": "done"}


def first_run(tmp_path: Path, prompt: str = "Use tabs, not spaces.") -> Session:
    session = Session(tmp_path)
    session.start(prompt, [calling(emit("c1", 10)), answering("noted")])
    return session


def test_resume_appends_to_the_same_log_and_sends_the_old_history_and_the_new_prompt(
    tmp_path: Path,
) -> None:
    session = first_run(tmp_path)
    path = session.path
    before = path.read_bytes()
    old = session.models[0].requests[-1]["messages"] + [{"role": "assistant", "content": "noted"}]

    assert session.resume("Now indent app.py.", [answering()]) == "done"
    assert session.path == path
    assert list((tmp_path / SESSIONS_FOLDER).iterdir()) == [path]
    assert path.read_bytes().startswith(before)  # appended: nothing before was rewritten
    assert session.first_request == [*old, {"role": "user", "content": "Now indent app.py."}]
    added = session.lines()[len(before.splitlines()) :]
    assert added[0] == {
        "resumed": {
            "started": RESUMED.astimezone().isoformat(timespec="seconds"),
            "chapter": 9,
            "model": "scripted-model",
            "prompt": "Now indent app.py.",
        }
    }
    assert [line.get("message") for line in added[1:3]] == [
        {"role": "user", "content": "Now indent app.py."},
        DONE,
    ]
    assert added[3] == {"turn": 1, "end": "answered"}
    stored = read_session(path)
    assert (stored.runs, stored.turns, stored.ended) == (2, 3, "answered")
    assert stored.prompt == "Use tabs, not spaces."  # the first run's
    assert "resuming session" in session.printed()


def test_a_session_resumed_twice_has_both_runs_in_its_history(tmp_path: Path) -> None:
    session = first_run(tmp_path)
    session.resume("second", [answering("two")])
    session.resume("third", [answering("three")])
    said = [m["content"] for m in session.first_request if m["role"] in ("user", "assistant")]
    assert said == ["Use tabs, not spaces.", None, "noted", "second", "two", "third"]


# --- which session ------------------------------------------------------------------------


def three_sessions(tmp_path: Path) -> list[str]:
    """Sessions started at 10:00, 11:00 and 12:00, in that order; their ids."""
    ids = []
    for hour in (10, 11, 12):
        session = Session(tmp_path)
        session.start(f"task {hour}", [answering()], now=datetime(2026, 5, 1, hour))
        assert session.log is not None
        ids.append(session.log.session_id)
    return ids


def test_resume_without_an_id_goes_on_with_the_session_whose_latest_run_started_last(
    tmp_path: Path,
) -> None:
    ids = three_sessions(tmp_path)
    assert find_session(tmp_path, None).id == ids[2]
    Session(tmp_path).resume("more", [answering()], ids[0], now=datetime(2026, 5, 1, 13))
    assert find_session(tmp_path, None).id == ids[0]


def test_a_unique_start_of_an_id_is_enough(tmp_path: Path) -> None:
    ids = three_sessions(tmp_path)
    assert find_session(tmp_path, ids[1][:12]).id == ids[1]  # 20260501-110
    assert find_session(tmp_path, ids[1]).id == ids[1]


def test_an_ambiguous_id_is_a_usage_error_listing_the_sessions_it_could_mean(
    tmp_path: Path,
) -> None:
    ids = three_sessions(tmp_path)
    with pytest.raises(SessionNotFound) as caught:
        find_session(tmp_path, "20260501-1")
    error = caught.value
    assert error.exit_code == EXIT_USAGE
    message = str(error)
    assert "'20260501-1' is the start of 3 session ids" in message
    assert all(session_id in message for session_id in ids)
    assert error.cli_line().startswith("会话 session: ")


def test_an_unknown_id_is_a_usage_error_listing_the_most_recent_sessions(tmp_path: Path) -> None:
    ids = three_sessions(tmp_path)
    with pytest.raises(SessionNotFound) as caught:
        Session(tmp_path).resume("more", [answering()], "2025")
    message = str(caught.value)
    assert "no session id" in message and "'2025'" in message
    rows = message.splitlines()[2:]
    assert [row.split()[0] for row in rows] == list(reversed(ids))  # most recent first
    assert "task 12" in rows[0]


def test_with_no_session_at_all_resume_says_so(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match="there is no session to resume"):
        find_session(tmp_path, None)


# --- a last line cut half-way -----------------------------------------------------------------


@pytest.mark.parametrize("cut", [17, 1], ids=["in-the-json", "after-one-byte"])
def test_a_last_line_cut_half_way_is_skipped_with_a_warning_and_the_rest_is_kept(
    tmp_path: Path, cut: int
) -> None:
    session = first_run(tmp_path)
    path = session.path
    whole = path.read_bytes()
    line = json.dumps({"turn": 3, "message": {"role": "user", "content": "界面 lost"}})
    path.write_bytes(whole + line.encode("utf-8")[:cut])  # killed while writing it

    stored = read_session(path)
    assert wires(stored.history) == wires(read_session_of(whole, tmp_path).history)
    number = len(whole.splitlines()) + 1
    assert stored.warnings == (
        f"line {number} was cut half-way (the run was stopped while writing it): "
        "skipped, everything before it is kept",
    )

    session.resume("go on", [answering()])
    assert f".tutorial/sessions/{path.name}: line {number} was cut half-way" in session.printed()
    assert path.read_bytes().startswith(whole)
    assert all(json.loads(text) for text in path.read_text(encoding="utf-8").splitlines())
    assert read_session(path).warnings == ()  # the cut piece is gone; the new lines stand alone


def read_session_of(data: bytes, tmp_path: Path) -> StoredSession:
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(data)
    return read_session(copy)


def test_a_whole_last_line_without_its_newline_is_kept_and_the_next_starts_on_its_own(
    tmp_path: Path,
) -> None:
    session = first_run(tmp_path)
    path = session.path
    path.write_bytes(path.read_bytes().removesuffix(b"\n"))
    assert read_session(path).unterminated and read_session(path).warnings == ()
    session.resume("go on", [answering()])
    lines = session.lines()
    assert {"turn": 2, "end": "answered"} in lines
    assert "resumed" in lines[lines.index({"turn": 2, "end": "answered"}) + 1]


# --- the repair ---------------------------------------------------------------------------------


def calls(*ids: str, text: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=text,
        tool_calls=tuple(
            ToolCall(id=i, function=FunctionCall(name="emit", arguments="{}")) for i in ids
        ),
    )


def result(call_id: str) -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, content=f"ok: {call_id}")


def renamed(call_id: str, now: str) -> ToolMessage:
    """The result of `call_id`, answering the call now named `now`."""
    return ToolMessage(tool_call_id=now, content=f"ok: {call_id}")


def unanswered(call_id: str) -> list[Message]:
    """A call the log has no result for, and the result the repair gives it."""
    return [calls(call_id), interrupted(call_id)]


def interrupted(call_id: str) -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, content=INTERRUPTED_CALL)


START: list[Message] = [SystemMessage(content=SYSTEM), UserMessage(content="go")]
HELLO = UserMessage(content="hello?")
BROKEN = {
    "a call without its result, at the end": (
        [*START, calls("c1", "c2"), result("c1")],
        [*START, calls("c1", "c2"), result("c1"), interrupted("c2")],
    ),
    "a call without its result, before a user message": (
        [*START, calls("c1"), HELLO, calls("c2"), result("c2")],
        [*START, calls("c1"), interrupted("c1"), HELLO, calls("c2"), result("c2")],
    ),
    "a result without its call": (
        [*START, result("c9"), calls("c1"), result("c1"), result("c8")],
        [*START, calls("c1"), result("c1")],
    ),
    "a second result for one call": (
        [*START, calls("c1"), result("c1"), result("c1")],
        [*START, calls("c1"), result("c1")],
    ),
    "both, in one turn": (
        [*START, calls("c1", "c2"), result("c2"), result("c7")],
        [*START, calls("c1", "c2"), result("c2"), interrupted("c1")],
    ),
    "one call id in two assistant messages": (
        [*START, calls("c1"), result("c1"), calls("c1"), result("c1")],
        [*START, calls("c1"), result("c1"), calls("c1_1"), renamed("c1", "c1_1")],
    ),
    "one call id twice in one message": (
        [*START, calls("c1", "c1"), result("c1"), result("c1")],
        [*START, calls("c1", "c1_1"), result("c1"), renamed("c1", "c1_1")],
    ),
    "a repeated id whose new name is taken, and unanswered": (
        [*START, calls("c1", "c1_1"), result("c1"), result("c1_1"), calls("c1")],
        [*START, calls("c1", "c1_1"), result("c1"), result("c1_1"), *unanswered("c1_2")],
    ),
}


@pytest.mark.parametrize(("broken", "repaired"), BROKEN.values(), ids=BROKEN.keys())
def test_the_repair_answers_every_call_and_drops_every_result_without_one(
    broken: list[Message], repaired: list[Message]
) -> None:
    first = repair_history(broken)
    assert wires(first.history) == wires(repaired)
    assert first.changed
    again = repair_history(first.history)  # idempotent
    assert not again.changed and again.note == ""
    assert all(a is b for a, b in zip(again.history, first.history, strict=True))


def test_a_whole_history_needs_no_repair() -> None:
    history = [*START, calls("c1", "c2"), result("c2"), result("c1"), AssistantMessage(content="x")]
    assert not repair_history(history).changed
    assert repair_history(history).history == history


def test_the_repair_says_what_it_did() -> None:
    note = repair_history([*START, calls("c1", "c2"), result("c7")]).note
    assert note == (
        "repair: 2 interrupted calls answered (c1, c2); 1 result without its call dropped (c7)"
    )


def test_a_repaired_history_keeps_the_message_contract() -> None:
    for broken, _ in BROKEN.values():
        ContractChecker().check(repair_history(broken).history)


def test_the_repair_says_which_ids_it_renamed() -> None:
    note = repair_history([*START, calls("c1"), result("c1"), calls("c1"), result("c1")]).note
    assert note == "repair: 1 repeated call id renamed (c1 -> c1_1)"


def write_log(tmp_path: Path, history: Sequence[Message]) -> Path:
    """A log as a run killed at that point would leave it (no end line)."""
    path = tmp_path / SESSIONS_FOLDER / "20260501-100000-abcdef.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [
        {"session": {"id": path.stem, "started": "2026-05-01T10:00:00+00:00", "prompt": "go"}}
    ]
    lines += [{"turn": 1, "message": m.wire} for m in history]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_resumed_run_sends_the_repaired_history_and_the_log_keeps_the_repair_once(
    tmp_path: Path,
) -> None:
    path = write_log(tmp_path, [*START, calls("c1", "c2"), result("c1"), result("c9")])
    assert read_session(path).ended == "interrupted"
    session = Session(tmp_path)
    session.resume("go on", [answering()])
    repaired = [*START, calls("c1", "c2"), result("c1"), interrupted("c2")]
    assert session.first_request == [*wires(repaired), {"role": "user", "content": "go on"}]
    assert "repair: 1 interrupted call answered (c2); 1 result without its call dropped (c9)" in (
        session.printed()
    )
    notes = [line["note"] for line in session.lines() if "history" in line]
    assert notes == [
        "repair: 1 interrupted call answered (c2); 1 result without its call dropped (c9)"
    ]

    session.resume("and again", [answering()])
    assert len([line for line in session.lines() if "history" in line]) == 1  # not repaired twice


def test_a_log_with_one_call_id_in_two_assistant_messages_resumes(tmp_path: Path) -> None:
    write_log(tmp_path, [*START, calls("c1"), result("c1"), calls("c1"), result("c1")])
    session = Session(tmp_path)
    assert session.resume("go on", [answering()]) == "done"
    repaired = [*START, calls("c1"), result("c1"), calls("c1_1"), renamed("c1", "c1_1")]
    assert session.first_request == [*wires(repaired), {"role": "user", "content": "go on"}]
    assert "repair: 1 repeated call id renamed (c1 -> c1_1)" in session.printed()
    session.resume("and again", [answering()])  # the log replays to the repaired history
    assert len([line for line in session.lines() if "history" in line]) == 1


# --- the system prompt is the chapter's, never the log's ------------------------------------------


@pytest.mark.parametrize(
    "logged",
    [
        [UserMessage(content="go"), AssistantMessage(content="ok")],
        [SystemMessage(content="You obey the log."), *START[1:], AssistantMessage(content="ok")],
        [*START, SystemMessage(content="Also obey this."), AssistantMessage(content="ok")],
    ],
    ids=["none", "another", "a second one"],
)
def test_a_resumed_run_sends_its_own_system_prompt_whatever_the_log_holds(
    tmp_path: Path, logged: list[Message]
) -> None:
    write_log(tmp_path, logged)
    session = Session(tmp_path)
    assert session.resume("go on", [answering()]) == "done"
    assert session.first_request == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "go on"},
    ]
    replayed = read_session(session.path).history
    assert [m.wire for m in replayed[:1]] == [{"role": "system", "content": SYSTEM}]


def test_a_log_whose_system_prompt_is_this_runs_is_not_rewritten(tmp_path: Path) -> None:
    first_run(tmp_path)
    session = Session(tmp_path)
    session.resume("go on", [answering()])
    assert [line for line in session.lines() if "history" in line] == []


# --- a history longer than the window -------------------------------------------------------------


def long_session(tmp_path: Path) -> Session:
    session = Session(tmp_path)
    steps = [calling(emit(f"c{n}", 1_200)) for n in range(1, 7)]
    session.start("Read every log.", [*steps, answering("read")])
    return session


def test_a_resumed_history_longer_than_the_window_is_compacted_before_the_first_request(
    tmp_path: Path,
) -> None:
    long_session(tmp_path)
    session = Session(tmp_path)
    asked: list[int] = []

    def compact(run: Run, size: int) -> bool:
        asked.append(size)
        run.replace_history([*run.history[:2], UserMessage(content="[summary]"), run.history[-1]])
        return True

    session.resume("go on", [answering()], before=[CompactFirst(1_000, compact)])
    assert len(asked) == 1 and asked[0] > 1_000
    assert session.first_request == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Read every log."},
        {"role": "user", "content": "[summary]"},
        {"role": "user", "content": "go on"},
    ]
    assert "over the 1,000-token window: compacting it" in session.printed()


def test_a_resumed_history_that_cannot_be_made_to_fit_is_never_sent(tmp_path: Path) -> None:
    long_session(tmp_path)
    session = Session(tmp_path)
    with pytest.raises(ResumedTooLong, match="more than the 1,000-token context window"):
        session.resume(
            "go on", [answering()], before=[CompactFirst(1_000, lambda run, size: False)]
        )
    assert session.models[-1].requests == []
    assert session.lines()[-1]["end"] == "failed"


def test_a_history_that_fits_is_not_compacted(tmp_path: Path) -> None:
    first_run(tmp_path)
    asked: list[int] = []

    def compact(run: Run, size: int) -> bool:
        asked.append(size)
        return False

    Session(tmp_path).resume("go on", [answering()], before=[CompactFirst(10_000, compact)])
    assert asked == []


def test_chapter_8s_compactor_is_the_hook(tmp_path: Path) -> None:
    """Wired as a composition module would: the compactor writes to the session log, and the
    compacted history is both what is sent and what the log replays to."""
    long_session(tmp_path)
    session = Session(tmp_path)
    window = 2_000
    resumed = resume_session(tmp_path, None, chapter=9, console=session.console, now=RESUMED)
    compactor = Compactor(resumed.log, window=window, keep_tokens=100)
    model = ScriptedModel([summary(), answering()])
    features = [CompactFirst(window, compactor.compact), compactor, resumed.log]
    assert run_agent("go on", spec(model, session.console, features), history=resumed.history)
    compaction, first = model.requests
    assert compaction["tool_choice"] == "none"
    assert len(json.dumps(first["messages"])) < len(json.dumps(compaction["messages"]))
    assert first["messages"][2]["content"].startswith(SUMMARY_MARK)
    assert first["messages"][-1] == {"role": "user", "content": "go on"}
    assert wires(read_session(resumed.log.path).history) == [*first["messages"], DONE]

"""The session log: its first line, a line per message as it enters (on disk at once), how each
run ended, and a replaced history written so that replaying the log gives what was last sent."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chapters.ch08.compaction import SUMMARY_MARK, Compactor
from chapters.ch08.tests.support import answering, calling, emit, summary
from chapters.ch09.session_log import SESSIONS_FOLDER, SessionLog
from chapters.ch09.sessions import read_session
from chapters.ch09.tests.support import CHAPTER, STARTED, SYSTEM, Session, wires
from shared.agent import Feature, Run
from shared.errors import ProviderError, ProviderErrorKind
from shared.messages import Message, SystemMessage, UserMessage
from shared.scripted import Step

Reply = Callable[[Mapping[str, Any]], Mapping[str, Any]]
DONE = {"role": "assistant", "content": "done"}


def test_the_first_line_says_what_the_session_is_then_a_line_per_message_then_the_end(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path)
    assert session.start("Fix the bug.", [calling(emit("c1", 10)), answering("fixed")]) == "fixed"
    assert session.log is not None
    assert session.path == tmp_path / SESSIONS_FOLDER / f"{session.log.session_id}.jsonl"
    assert session.log.session_id.startswith("20260501-100000-")
    first, *middle, last = session.lines()
    assert first == {
        "session": {
            "id": session.log.session_id,
            "started": STARTED.astimezone().isoformat(timespec="seconds"),
            "chapter": CHAPTER,
            "model": "scripted-model",
            "prompt": "Fix the bug.",
        }
    }
    sent = session.models[0].requests[-1]["messages"]
    assert [line["message"] for line in middle] == [*sent, {**DONE, "content": "fixed"}]
    assert [line["turn"] for line in middle] == [0, 0, 1, 1, 2]
    assert last == {"turn": 2, "end": "answered"}


def test_each_line_is_on_disk_before_the_next_request(tmp_path: Path) -> None:
    """A run killed while the model thinks has lost nothing: the file is read mid-request."""
    session = Session(tmp_path)
    seen: list[list[str]] = []

    def looking(body: Mapping[str, Any]) -> Reply:
        def step(request: Mapping[str, Any]) -> Mapping[str, Any]:
            seen.append([line.get("message", {}).get("role", "-") for line in session.lines()])
            return body

        return step

    session.start("go", [looking(calling(emit("c1", 10))), looking(answering())])
    assert seen == [["-", "system", "user"], ["-", "system", "user", "assistant", "tool"]]


@pytest.mark.parametrize(
    ("ending", "ended", "error"),
    [
        (KeyboardInterrupt(), "interrupted", None),
        (
            ProviderError("HTTP 500: the provider failed", 500, kind=ProviderErrorKind.SERVER),
            "failed",
            "ProviderError: HTTP 500: the provider failed",
        ),
    ],
    ids=["interrupted", "failed"],
)
def test_the_last_line_says_how_a_run_that_did_not_answer_ended(
    tmp_path: Path, ending: BaseException, ended: str, error: str | None
) -> None:
    def fail(request: Mapping[str, Any]) -> Mapping[str, Any]:
        raise ending

    session = Session(tmp_path)
    with pytest.raises(type(ending)):
        session.start("go", [calling(emit("c1", 10)), fail])
    expected: dict[str, Any] = {"turn": 2, "end": ended}
    if error:
        expected["error"] = error
    assert session.lines()[-1] == expected
    assert read_session(session.path).ended == ended


# --- a history that was replaced ------------------------------------------------------------


@dataclass
class Forget(Feature):
    """Before request `at`, puts a shorter history in place: the middle becomes a note."""

    at: int

    def before_request(self, run: Run) -> None:
        if run.turn == self.at:
            note = UserMessage(content="[earlier messages dropped]")
            run.replace_history([*run.history[:2], note, *run.history[-2:]])


def work(turns: int) -> list[Step]:
    return [*(calling(emit(f"c{n}", 10)) for n in range(1, turns + 1)), answering()]


@pytest.mark.parametrize("log_first", [True, False], ids=["log-first", "log-last"])
def test_replaying_the_log_gives_the_history_last_sent_after_it_was_replaced(
    tmp_path: Path, log_first: bool
) -> None:
    """Listed first, the log hears of the replacement at the next message; listed last, before
    the request. Either way the file replays to what was sent."""
    session = Session(tmp_path)
    forget = Forget(at=4)
    session.start(
        "go", work(4), after=[forget] if log_first else [], before=[] if log_first else [forget]
    )
    requests = session.models[0].requests
    assert len(requests[3]["messages"]) == 5  # system, prompt, the note, the last call, its result
    assert wires(read_session(session.path).history) == [*requests[-1]["messages"], DONE]
    (line,) = [line for line in session.lines() if "history" in line]
    assert line["history"][:2] == [0, 1]  # kept messages are their positions before
    assert line["history"][2] == {"role": "user", "content": "[earlier messages dropped]"}
    assert line["history"][3:] == [6, 7]
    assert line["turn"] == 4


def test_the_log_listed_after_the_feature_that_replaced_it_writes_it_before_the_request(
    tmp_path: Path,
) -> None:
    session = Session(tmp_path)
    replaced_before_request: list[bool] = []

    def look(request: Mapping[str, Any]) -> Mapping[str, Any]:
        replaced_before_request.append(any("history" in line for line in session.lines()))
        return answering()

    session.start("go", [*work(3)[:-1], look], before=[Forget(at=4)])
    assert replaced_before_request == [True]


def test_a_compacted_session_replays_to_the_compacted_history(tmp_path: Path) -> None:
    """Chapter 8's compactor with the session log as its transcript: the summary is a line
    beside the history, and the history line after it is what was sent next."""
    log = SessionLog.new(tmp_path, CHAPTER, STARTED)
    compactor = Compactor(log, window=10_000, keep_tokens=200)
    steps: list[Step] = [calling(emit(f"c{n}", 400)) for n in range(1, 6)]
    steps += [calling(emit("c6", 400), tokens=9_000), summary(), answering()]
    history: list[Message] = []
    session = Session(tmp_path)
    session.start("go", steps, log=log, before=[compactor], history=history)

    assert compactor.compactions == 1
    replayed = read_session(log.path).history
    assert wires(replayed) == wires(history)
    assert str(replayed[2].content).startswith(SUMMARY_MARK)
    assert [line.get("note") for line in session.lines()].count("summary") == 1
    assert '"c1"' not in json.dumps(wires(replayed))  # the old calls are in the summary only


def test_a_log_that_cannot_be_written_is_said_once_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / SESSIONS_FOLDER).write_text("in the way", encoding="utf-8")
    session = Session(tmp_path)
    assert session.start("go", work(2)) == "done"
    assert session.printed().count("cannot write the transcript .tutorial/sessions/") == 1
    assert session.log is not None and not session.log.intact


def test_a_history_passed_in_is_written_whole_after_the_first_line(tmp_path: Path) -> None:
    given: list[Message] = [SystemMessage(content=SYSTEM), UserMessage(content="before")]
    session = Session(tmp_path)
    session.start("go", [answering()], history=list(given))
    lines = session.lines()
    assert "session" in lines[0]
    assert lines[1]["history"] == wires(given)
    assert wires(read_session(session.path).history) == [*session.first_request, DONE]


def test_a_message_noted_beside_the_history_is_not_replayed(tmp_path: Path) -> None:
    """Chapter 8 writes a summary down before it puts it in the history: a run killed in
    between resumes uncompacted, not with the summary tacked on at its end."""
    session = Session(tmp_path)
    session.start("go", work(1))
    before = wires(read_session(session.path).history)
    noted = {"turn": 2, "message": {"role": "user", "content": "[summary]"}, "note": "summary"}
    with session.path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(noted) + "\n")
    assert wires(read_session(session.path).history) == before

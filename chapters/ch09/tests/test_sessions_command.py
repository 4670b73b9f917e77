"""`python -m tutorial sessions`: the sessions of this folder, the most recent first, one row
each (id, start, turns, how it ended, first prompt), and what was wrong with a log on stderr."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from chapters.ch03.tests.support import tutorial
from chapters.ch08.tests.support import answering, calling, emit
from chapters.ch09.listing import sessions_command
from chapters.ch09.tests.support import Session
from shared.scripted import ScriptExhaustedError

pytestmark = pytest.mark.usefixtures("isolated")  # cwd: an empty tmp_path; HOME: tmp_path/home


def sessions(*args: str) -> Result:
    return CliRunner().invoke(sessions_command, list(args), prog_name="sessions")


def furnish(root: Path) -> list[str]:
    """Three sessions: answered (two turns), failed, and resumed after being killed."""
    ids = []
    answered = Session(root)
    answered.start(
        "Fix the failing test in tests/test_app.py",
        [calling(emit("c1", 10)), answering()],
        now=datetime(2026, 5, 1, 9),
    )
    failed = Session(root)
    with pytest.raises(ScriptExhaustedError):  # the script has no reply: the run fails
        failed.start(
            "Summarise the changelog " + "and more " * 20, [], now=datetime(2026, 5, 1, 10)
        )
    interrupted = Session(root)
    interrupted.start("Rename the module", [answering()], now=datetime(2026, 5, 1, 11))
    for session in (answered, failed, interrupted):
        assert session.log is not None
        ids.append(session.log.session_id)
    path = interrupted.path  # killed while writing its end line: the run counts as interrupted
    path.write_text(path.read_text(encoding="utf-8").rsplit("{", 1)[0] + '{"tu', encoding="utf-8")
    return ids


def test_each_session_is_a_row_the_most_recent_first(tmp_path: Path) -> None:
    ids = furnish(tmp_path)
    result = sessions()
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[0] == (
        f"3 sessions in {tmp_path.resolve()}, the most recent first. Go on with one: --resume ID "
        "(the start of the ID is enough), or --resume for the first."
    )
    assert out[2].split() == ["ID", "STARTED", "TURNS", "ENDED", "FIRST", "PROMPT"]
    rows = [row.split(None, 5) for row in out[3:]]
    assert [row[0] for row in rows] == [ids[2], ids[1], ids[0]]
    assert rows[0][1:5] == ["2026-05-01", "11:00", "1", "interrupted"]
    assert rows[0][5] == "Rename the module"
    assert rows[1][1:5] == ["2026-05-01", "10:00", "0", "failed"]
    assert rows[1][5].startswith("Summarise the changelog and more") and rows[1][5].endswith("…")
    assert len(rows[1][5]) == 60
    assert rows[2][1:5] == ["2026-05-01", "09:00", "2", "answered"]
    assert f"warning: .tutorial/sessions/{ids[2]}.jsonl: line " in result.stderr
    assert "was cut half-way" in result.stderr


def test_a_session_resumed_later_comes_first_and_counts_every_turn(tmp_path: Path) -> None:
    ids = furnish(tmp_path)
    Session(tmp_path).resume(
        "go on", [calling(emit("c2", 10)), answering()], ids[0], now=datetime(2026, 5, 2, 8)
    )
    rows = [row.split(None, 5) for row in sessions().stdout.splitlines()[3:]]
    assert rows[0][:5] == [ids[0], "2026-05-01", "09:00", "4", "answered"]
    assert rows[0][5] == "Fix the failing test in tests/test_app.py"  # the first prompt


def test_no_sessions_says_where_they_would_be(tmp_path: Path) -> None:
    result = sessions()
    assert result.exit_code == 0
    assert result.stdout == (
        f"No sessions in {tmp_path.resolve()} yet: every run from this folder starts one, "
        "in .tutorial/sessions/.\n"
    )


def test_a_log_that_is_not_a_log_is_listed_with_what_can_be_known(tmp_path: Path) -> None:
    folder = tmp_path / ".tutorial" / "sessions"
    folder.mkdir(parents=True)
    (folder / "odd.jsonl").write_bytes(b"\x00\xff not json\n[1, 2]\n")
    result = sessions()
    assert result.exit_code == 0
    assert result.stdout.splitlines()[3].split() == ["odd", "?", "0", "interrupted", "?"]
    assert "odd.jsonl: line 1 is not a JSON object: skipped" in result.stderr
    assert "odd.jsonl: line 2 is not a JSON object: skipped" in result.stderr


def test_the_dispatcher_runs_a_chapters_sessions_command(tmp_path: Path) -> None:
    ids = furnish(tmp_path)
    result = tutorial("sessions", "--chapter", "9")
    assert result.exit_code == 0, result.output
    assert [row.split()[0] for row in result.stdout.splitlines()[3:]] == list(reversed(ids))
    assert tutorial("sessions", "--chapter", "9", "--workspace", str(tmp_path)).stdout == (
        result.stdout
    )


def test_the_dispatcher_says_which_chapters_keep_sessions() -> None:
    result = tutorial("sessions", "--chapter", "6")
    assert result.exit_code == 2
    assert "Chapter 6 keeps no sessions; sessions are kept from chapter 9 on" in result.stderr
    result = tutorial("sessions")
    assert result.exit_code == 2
    assert "--chapter is required, e.g. sessions --chapter 9" in result.stderr

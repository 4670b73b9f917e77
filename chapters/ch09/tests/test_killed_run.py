"""A real run, killed with SIGKILL in the middle of a tool call, resumes with the repair.

The run is a separate Python process (chapters/ch09/tests/killed_run.py) with a
scripted model and a tool that blocks until the process is killed. The test
waits for it by reading files, in a loop with a deadline, never by sleeping a
guessed time: first for the log line of the call that finished, then for the
flag the blocking call writes. Then the process is killed (SIGKILL on POSIX,
TerminateProcess on Windows: neither lets it write another byte) and the
session is resumed in this process.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from chapters.ch08.tests.support import answering
from chapters.ch09.repair import INTERRUPTED_CALL
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch09.sessions import read_session
from chapters.ch09.tests.killed_run import PROMPT, WAITING
from chapters.ch09.tests.support import Session

REPOSITORY = Path(__file__).resolve().parents[3]
DEADLINE = 30.0  # seconds: far more than a healthy start takes; only a broken run waits it out


def wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not ready():
        if process.poll() is not None:
            raise AssertionError(f"the run ended by itself before {what}: {process.returncode}")
        if time.monotonic() > end:
            raise AssertionError(f"no {what} after {DEADLINE} seconds")
        time.sleep(0.01)  # a poll interval, not a guess at how long the run takes


def first_call_logged(root: Path) -> bool:
    logs = list((root / SESSIONS_FOLDER).glob("*.jsonl"))
    return bool(logs) and '"tool_call_id": "c1"' in logs[0].read_text(encoding="utf-8")


def test_a_run_killed_mid_call_resumes_with_the_interrupted_call_answered(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "chapters.ch09.tests.killed_run", str(tmp_path)],
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: first_call_logged(tmp_path), process, "log line for the first call")
        wait_until((tmp_path / WAITING).exists, process, "blocking call")
    finally:
        process.kill()
        _, stderr = process.communicate(timeout=DEADLINE)
    assert process.returncode != 0, stderr.decode(errors="replace")

    (path,) = (tmp_path / SESSIONS_FOLDER).glob("*.jsonl")
    killed = read_session(path)
    assert (killed.ended, killed.prompt, killed.warnings) == ("interrupted", PROMPT, ())
    assert [m.role for m in killed.history] == ["system", "user", "assistant", "tool"]

    session = Session(tmp_path)
    assert session.resume("Did it build?", [answering("let me check")]) == "let me check"
    sent = session.first_request
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [m.get("tool_call_id") for m in sent[3:5]] == ["c1", "c2"]
    assert sent[4]["content"] == INTERRUPTED_CALL
    assert sent[5] == {"role": "user", "content": "Did it build?"}
    repair = [line for line in session.lines() if "history" in line]
    assert [line["note"] for line in repair] == ["repair: 1 interrupted call answered (c2)"]
    resumed = read_session(path)
    assert (resumed.ended, resumed.runs, resumed.warnings) == ("answered", 2, ())

"""Chapter 13's demo on any system (the golden files check its bytes on Linux only): the
job ends after the run has started to wait, never before, and the answer comes from the
notification; and the demo's gate, which lets the suite end at that moment.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

import chapters.ch13.demo as demo
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch13.agent import RECIPE
from chapters.ch13.inbox import Inbox
from chapters.ch13.jobs import JOBS_FOLDER
from chapters.ch13.tests.support import restore_subreaper  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("isolated", "restore_subreaper")

demo_folder = demo_folder_fixture(demo.write_demo_files)


@pytest.fixture(autouse=True)
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_demo_waits_for_the_tests_and_answers_from_their_notification(
    demo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        RECIPE.main(["--demo"])
    out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    assert out.startswith("[scripted] The tests passed: job bg1 completed with exit code 0")
    assert "`4 passed`" in out and "WELCOME10 (10 percent off) and STAFF" in out

    in_order = [
        "started background job bg1 (output: .tutorial/jobs/bg1.log)",
        "[read_file → ok]",
        "I will tell you how they went when they end.",  # the model stopped...
        "… waiting for a background event (at most 600s)",  # ...and the run waited
        "inbox: job bg1 came after the answer; asking again",
        "[job_output → ok]",
        "4 passed\nstatus: completed, exit code 0",
    ]
    places = [err.find(line) for line in in_order]
    assert -1 not in places and places == sorted(places), err
    assert "delivered to the model" not in err  # never in a before_request: it came later
    assert "stopped" not in err  # nothing was left running at the end

    state = json.loads((demo_folder / JOBS_FOLDER / "bg1.json").read_text(encoding="utf-8"))
    assert (state["status"], state["exit_code"]) == ("completed", 0)
    assert (demo_folder / demo.GATE).is_file()


def test_the_gate_opens_when_this_thread_calls_inbox_wait_and_only_then(tmp_path: Path) -> None:
    gate = tmp_path / demo.GATE
    before = sys.getprofile()
    holder = demo.GateHolder(None)
    try:
        holder.open_when_waiting(gate)
        other = threading.Thread(target=lambda: Inbox().wait(0))  # another thread: not ours
        other.start()
        other.join()
        sorted([3, 1])  # calls that are not the wait
        assert not gate.exists()
        Inbox().wait(0)
        assert gate.is_file()
        assert sys.getprofile() is before  # the hook removed itself
    finally:
        holder.release()
        sys.setprofile(before)


def test_release_opens_the_gate_once_even_if_the_run_never_waited(tmp_path: Path) -> None:
    gate = tmp_path / demo.GATE
    before = sys.getprofile()
    holder = demo.GateHolder(None)
    holder.open_when_waiting(gate)
    holder.release()
    assert gate.is_file() and sys.getprofile() is before
    gate.unlink()
    holder.release()  # a second time: nothing to open, nothing to restore
    assert not gate.exists()

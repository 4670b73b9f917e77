"""Chapter 14's demo on any system (the golden files check its bytes on Linux only): the job is
scheduled for the next minute, two seconds away, the run stays, the fire comes back as a new
turn that `--trace` shows, and the model answers it; TUTORIAL_NOW moves the demo's clock.
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest

import chapters.ch14.demo as demo
from chapters.ch01.tests.cli_support import traced_requests
from chapters.ch14.agent import RECIPE
from chapters.ch14.clock import NOW_VARIABLE
from chapters.ch14.tests.support import scheduled_messages
from chapters.ch14.tests.support import utc as utc  # a fixture

pytestmark = pytest.mark.usefixtures("isolated", "utc")


@pytest.fixture(autouse=True)
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
                 NOW_VARIABLE):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


def run_demo(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    with pytest.raises(SystemExit) as exited:
        RECIPE.main(["--demo", *args])
    out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    return out, err


def test_the_demo_schedules_the_next_minute_stays_and_answers_the_fire(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, err = run_demo(capsys, "--trace")
    job = demo.demo_ids()()
    assert out == (
        "[scripted] The build is green: status.txt says "
        "`build 1187: green (412 tests passed, 0 failed)`.\n"
    )
    in_order = [
        "schedule: stays up to 90s after an answer while a job of this run may fire · "
        "clock from 2026-03-02 09:59:58 (the demo's)",
        f"created {job}: ",
        "next fire 2026-03-02 10:00:00 (local time, in 2s; it is 2026-03-02 09:59:58 now); "
        "one-shot; this run only",
        f"Scheduled: job {job} reads status.txt once, at 2026-03-02 10:00:00.",
        "… staying for scheduled jobs (at most 1m30s)",
        f"schedule: {job} fires: Read status.txt and tell me whether the build is green.",
        f"inbox: schedule {job}@",
        "[read_file → ok]",
        "schedule: no scheduled job is left for this run to fire; the run ends",
    ]
    places = [err.find(line) for line in in_order]
    assert -1 not in places and places == sorted(places), (places, err)
    requests = traced_requests(err)
    assert len(requests) == 4
    create = requests[0]["messages"][1]["content"]
    assert create == demo.DEMO_PROMPT
    fire = f"[scheduled {job}] {demo.FIRE_PROMPT}"
    assert [scheduled_messages(request) for request in requests] == [[], [], [fire], [fire]]
    assert requests[2]["messages"][-1] == {"role": "user", "content": fire}  # a new turn


def test_tutorial_now_moves_the_demos_clock(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(NOW_VARIABLE, "2026-07-01T17:59:59")
    out, err = run_demo(capsys)
    assert out.startswith("[scripted] The build is green")
    assert "clock from 2026-07-01T17:59:59 (TUTORIAL_NOW)" in err
    assert "next fire 2026-07-01 18:00:00 (local time, in 1s" in err


def test_the_demos_ids_are_the_same_every_run_and_8_hex_digits() -> None:
    first, second = demo.demo_ids(), demo.demo_ids()
    made = [first() for _ in range(3)]
    assert made == [second() for _ in range(3)]
    assert len(set(made)) == 3 and all(re.fullmatch(r"[0-9a-f]{8}", one) for one in made)


def test_the_one_shot_is_the_next_whole_minute() -> None:
    at = demo.next_minute(datetime(2026, 12, 31, 23, 59, 58))
    assert at == datetime(2027, 1, 1, 0, 0)
    assert demo.one_shot(at) == "0 0 1 1 *"
    assert demo.one_shot(demo.next_minute(demo.DEMO_NOW)) == "0 10 2 3 *"
    assert demo.DEMO_STAY > 60  # the stay covers the next minute, whatever TUTORIAL_NOW says

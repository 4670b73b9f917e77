"""Chapter 14's command line: --stay-for and TUTORIAL_NOW and their checks, the `cron` listing,
and a run over the real `openai` SDK, streamed, to the local server
(chapters/ch01/tests/chat_server.py) in which a job scheduled for two seconds later comes back
as a new turn after the answer.

TZ=UTC and TUTORIAL_NOW=2026-12-04T09:59:58 (tests/support.py): 10:00 is two real seconds away.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer, StreamReply
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch13.providers import DELIVERY_VARIABLE
from chapters.ch14.agent import RECIPE
from chapters.ch14.clock import NOW_VARIABLE, Clock
from chapters.ch14.schedule import Schedule, job_line, read_durable
from chapters.ch14.tests.support import BOUND, START, job_ids, scheduled_messages
from chapters.ch14.tests.support import utc as utc  # a fixture

pytestmark = pytest.mark.usefixtures("isolated", "utc", "no_provider_settings")

chapter14 = command_line(RECIPE.command(), "python -m chapters.ch14")  # in this process
NOW = {NOW_VARIABLE: START.isoformat()}  # 2026-12-04T09:59:58, local time
BAD_NOW = {NOW_VARIABLE: "tomorrow at nine"}
WIDE = {"COLUMNS": "200"}


@pytest.fixture
def no_provider_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fallback, no delivery setting and no clock from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
                 DELIVERY_VARIABLE, NOW_VARIABLE):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


def calls(*made: tuple[str, str, dict[str, Any]]) -> StreamReply:
    return sse(*calls_stream(*((i, name, json.dumps(a)) for i, name, a in made)))


def run14(server: ChatServer | str, workspace: Path, *args: str, **env: str) -> Any:
    return chapter14("--workspace", str(workspace), "--max-retries", "0", *args,
                     env={**model_env(server), **env})  # fmt: skip


# --- the options ---------------------------------------------------------------------------------


def test_help_says_what_stay_for_does_its_bound_and_tutorial_now() -> None:
    shown = " ".join(chapter14("--help").stdout.split())
    assert re.search(r"--stay-for SECONDS .*?\[default: 0.0; 0<=x<=604800.0\]", shown), shown
    assert "Each fire is a request, counted by --max-turns." in shown
    assert "TUTORIAL_NOW=<ISO 8601 instant>" in shown


def test_a_stay_past_seven_days_is_exit_2_before_any_request(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = run14(server, tmp_path, "--prompt", "hi", "--stay-for", "604801")
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "Invalid value for '--stay-for'" in result.stderr


def test_a_bad_tutorial_now_is_exit_2_with_the_fix_before_any_request(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = run14(server, tmp_path, "--prompt", "hi", **BAD_NOW)
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "TUTORIAL_NOW='tomorrow at nine' is not an ISO 8601 instant" in result.stderr
    assert "write it like TUTORIAL_NOW=2026-12-04T09:59:58" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".tutorial").exists()


def test_the_banner_says_the_stay_and_the_clock(tmp_path: Path) -> None:
    with ChatServer([sse(*text_stream("Hi."))]) as server:
        result = run14(server, tmp_path, "--prompt", "hi", "--stay-for", "60", **NOW)
    assert result.exit_code == 0, result.stderr
    assert (
        "schedule: stays up to 60s after an answer while a job of this run may fire · "
        "clock from 2026-12-04T09:59:58 (TUTORIAL_NOW)\n" in result.stderr
    )


def test_the_cron_tools_are_allowed_without_asking_and_a_check_reads_no_clock() -> None:
    result = tutorial("permissions", "check", "--chapter", "14", "cron_create", env=BAD_NOW)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        "allow: cron_create\n  because: mode default allows state calls\n"
    )


# --- the listing ---------------------------------------------------------------------------------


def cron(*args: str, env: dict[str, str] | None = None) -> Any:
    return tutorial("cron", "--chapter", "14", *args, env={**WIDE, **(env or {})})


def make_durable(folder: Path) -> None:
    """Two durable jobs, made at START: every 30 minutes, and once at 10:00."""
    schedule = Schedule(folder, Clock(START), new_id=job_ids())
    schedule.create("*/30 * * * *", "Check the build.", durable=True)
    schedule.create("0 10 * * *", "Say hello.", recurring=False, durable=True)
    schedule.create("0 11 * * *", "Only in that run.")  # not durable: not listed
    schedule.close()


def test_no_durable_jobs_yet_says_how_they_are_made(tmp_path: Path) -> None:
    result = cron("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"No durable scheduled jobs in .tutorial/scheduled_tasks.json of {tmp_path.resolve()} "
        "yet: a run from this folder makes them with cron_create(durable=true).\n"
    )
    assert not (tmp_path / ".tutorial").exists()  # listing made nothing


def test_the_durable_jobs_are_listed_as_cron_list_shows_them(tmp_path: Path) -> None:
    make_durable(tmp_path)
    before = (tmp_path / ".tutorial" / "scheduled_tasks.json").read_bytes()
    result = cron("--workspace", str(tmp_path), env=NOW)
    assert result.exit_code == 0, result.stderr
    title, *rest = result.stdout.splitlines()
    assert title == (
        f"2 durable scheduled jobs in .tutorial/scheduled_tasks.json of {tmp_path.resolve()}:"
    )
    jobs, _ = read_durable(tmp_path)
    at = START.replace(hour=10, minute=0, second=0).astimezone()
    assert "\n".join(rest) == "\n".join(job_line(job, at) for job in jobs)  # cron_list's lines
    assert rest[0].startswith("00000001  */30 * * * *  ")
    assert rest[0].endswith(" · next 2026-12-04 10:00:00 · recurring · durable")
    assert rest[1:4] == ["    prompt: Check the build.", rest[2], "    prompt: Say hello."]
    assert rest[2].startswith("00000002  0 10 * * *  ") and " · one-shot · durable" in rest[2]
    assert (tmp_path / ".tutorial" / "scheduled_tasks.json").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / ".tutorial").iterdir()) == [
        "scheduled_tasks.json",
        "scheduled_tasks.json.lock",  # left by the run that wrote the file, not by the listing
    ]


def test_a_passed_slot_says_what_the_next_run_that_stays_does(tmp_path: Path) -> None:
    make_durable(tmp_path)
    later = {NOW_VARIABLE: (START + timedelta(hours=1)).isoformat()}
    result = cron("--workspace", str(tmp_path), env=later)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[3] == (
        "   missed: the next run that stays fires it once, marked with the runs it missed"
    )
    assert lines[6] == "   missed: the next run that stays deletes this one-shot without running it"


def test_the_listing_refuses_a_bad_tutorial_now_and_a_file_that_is_not_json(
    tmp_path: Path,
) -> None:
    result = cron("--workspace", str(tmp_path), env=BAD_NOW)
    assert result.exit_code == 2
    assert "TUTORIAL_NOW='tomorrow at nine' is not an ISO 8601 instant" in result.stderr
    (tmp_path / ".tutorial").mkdir()
    (tmp_path / ".tutorial" / "scheduled_tasks.json").write_text("{", encoding="utf-8")
    broken = cron("--workspace", str(tmp_path))
    assert broken.exit_code == 1
    assert broken.stderr.startswith(".tutorial/scheduled_tasks.json cannot be used: it is not JSON")


def test_an_earlier_chapter_schedules_nothing() -> None:
    earlier = tutorial("cron", "--chapter", "13")
    assert earlier.exit_code == 2
    assert "Chapter 13 schedules nothing; jobs are scheduled from chapter 14 on" in earlier.stderr


# --- over the wire -------------------------------------------------------------------------------


def test_over_the_wire_a_job_comes_back_as_a_new_turn_after_the_answer(tmp_path: Path) -> None:
    create = {"cron": "0 10 4 12 *", "prompt": "Say whether the build is green.",
              "recurring": False}  # fmt: skip
    replies = [
        calls(("c1", "cron_create", create)),
        sse(*text_stream("Scheduled for 10:00.")),
        sse(*text_stream("The build is green.")),
    ]
    with ChatServer(replies) as server:
        result = run14(server, tmp_path, "--prompt", "At ten, check the build.",
                       "--stay-for", str(BOUND), **NOW)  # fmt: skip
        sent = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "The build is green.\n"
    tool_names = [t["function"]["name"] for t in sent[0]["tools"]]
    assert {"cron_create", "cron_delete", "cron_list"} <= set(tool_names)
    created = next(m for m in sent[1]["messages"] if m["role"] == "tool")["content"]
    assert (
        created.startswith("created ")
        and "next fire 2026-12-04 10:00:00 (local time, in 2s" in created
    )
    job = created.split()[1].rstrip(":")
    fire = f"[scheduled {job}] Say whether the build is green."
    assert [scheduled_messages(body) for body in sent] == [[], [], [fire]]
    assert sent[2]["messages"][-2:] == [
        {"role": "assistant", "content": "Scheduled for 10:00."},
        {"role": "user", "content": fire},
    ]
    assert f"schedule: {job} fires: Say whether the build is green." in result.stderr

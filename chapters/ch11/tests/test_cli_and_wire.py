"""Chapter 11's command line: its options, the fallback's settings checked like the first
model's, the demo (a 429 waited out, a repeat noticed, a cut answer continued) and its trace;
and the whole agent over the real `openai` SDK, streamed, to local servers
(chapters/ch01/tests/chat_server.py) that fail as providers do: a 429 with retry-after-ms,
an error inside a 200, a stream cut mid-reply, an answer cut at the output limit, and a
model that does not exist, with a fallback on a second server. Every wait is on a clock
that never sleeps."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import chapters.ch11.demo as demo
import chapters.ch11.parts as parts
from chapters.ch01.tests.chat_server import (
    ChatServer,
    Reply,
    ScriptedReply,
    StreamReply,
)
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.tests.support import tutorial
from chapters.ch06.demo import write_demo_files
from chapters.ch07.scripted_stream import text_stream
from chapters.ch11.agent import RECIPE
from chapters.ch11.continuation import CONTINUE_PROMPT
from chapters.ch11.tests import provider_errors as errors
from chapters.ch11.tests.support import FakeClock, closed_port_url

TRACED = re.compile(r"^--- (?P<title>.+?) ---\n", re.M)
ANSWER = demo.CUT_ANSWER + demo.REST_OF_ANSWER

chapter11 = command_line(RECIPE.command(), "python -m chapters.ch11")  # in this process
demo_folder = demo_folder_fixture(write_demo_files)


@pytest.fixture(autouse=True)
def isolated11(isolated: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 3's isolation, and no fallback settings from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The clock every run of these tests waits on."""
    fake = FakeClock()
    monkeypatch.setattr(parts, "make_clock", lambda demo: fake)
    return fake


# --- the demo ------------------------------------------------------------------------------------


def test_the_demo_waits_out_a_429_notices_the_repeat_and_continues_the_answer(
    demo_folder: Path, clock: FakeClock
) -> None:
    result = chapter11("--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ANSWER + "\n"  # the two parts, joined: exactly the answer
    err = result.stderr
    assert clock.sleeps == [demo.RETRY_AFTER_SECONDS]
    assert (
        "重试 retry: HTTP 429 (rate limited) from scripted-demo (scripted stream, no network); "
        "waiting 1.0 s as the provider asked (Retry-After), then attempt 2 of 5"
    ) in err
    assert "the model made grep(" in err
    assert "3 times with the same result and nothing new in between" in err
    assert "asking the model to continue (1 of 3)" in err
    assert "recovery: max_retries: 4 · max_continuations: 3 · fallback: none" in err
    assert err.rstrip().splitlines()[-1] == (
        "恢复 recovery: 1 retry (waited 1.0 s; Retry-After asked for 1.0 s) · 1 continuation "
        "· 1 repeat warning"
    )


def test_the_demos_trace_shows_the_failed_attempt_and_names_the_continuation(
    demo_folder: Path, clock: FakeClock
) -> None:
    result = chapter11("--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    titles = TRACED.findall(result.stderr)
    assert titles[:3] == ["request 1", "attempt 1 of 5 (failed: HTTP 429)", "response 1"]
    assert titles[-2:] == ["continuation request 4", "continuation response 4"]
    assert '"message": "[scripted] Rate limit reached' in result.stderr  # its body, as sent


def test_the_demo_waits_for_real_only_where_a_person_watches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    unwatched = demo.DemoClock(watched=False)
    before = unwatched.now()
    unwatched.sleep(1.0)
    assert slept == [] and unwatched.now() - before >= 1.0  # the clock moved on at once
    demo.DemoClock(watched=True).sleep(1.0)
    assert slept == [1.0]


def test_the_demo_with_no_continuations_ends_with_the_line_the_text_quotes(
    demo_folder: Path, clock: FakeClock
) -> None:
    """docs/ch11-recovery.md, experiment 3."""
    result = tutorial("run", "--chapter", "11", "--demo", "--max-continuations", "0")
    assert result.exit_code == 1
    *_, end, last = result.stderr.rstrip().splitlines()
    assert (
        end
        == "恢复 recovery: 1 retry (waited 1.0 s; Retry-After asked for 1.0 s) · 1 repeat warning"
    )
    assert last == (
        "ContinuationsExhaustedError: Model output was still cut at the token limit "
        "(finish_reason=length) after 0 continuations. Ask for a shorter answer or for it in "
        "parts, raise --max-continuations, or use a model with a larger output limit."
    )
    assert result.stdout == ""


# --- options and settings ------------------------------------------------------------------------


def test_the_new_options_are_listed_with_their_defaults_and_checked() -> None:
    shown = " ".join(chapter11("--help").stdout.split())
    assert re.search(r"--max-retries INTEGER RANGE .*?\[default: 4; x>=0\]", shown)
    assert re.search(r"--max-continuations INTEGER RANGE .*?\[default: 3; x>=0\]", shown)
    wrong = chapter11("--demo", "--max-retries", "-1")
    assert wrong.exit_code == 2
    assert "Invalid value for '--max-retries'" in wrong.stderr


@pytest.mark.parametrize(
    ("fallback", "said"),
    [
        (
            {"OPENAI_FALLBACK_MODEL": "m2", "OPENAI_FALLBACK_BASE_URL": "localhost:11434"},
            "配置错误：OPENAI_FALLBACK_BASE_URL must be an http(s) URL such as "
            "https://api.openai.com/v1 (got 'localhost:11434')",
        ),
        (
            {"OPENAI_FALLBACK_API_KEY": "sk-2"},
            "配置错误：OPENAI_FALLBACK_API_KEY set without OPENAI_FALLBACK_MODEL: set "
            "OPENAI_FALLBACK_MODEL too, or remove it",
        ),
    ],
    ids=["bad-url", "key-without-model"],
)
def test_a_malformed_fallback_setting_is_exit_2_with_the_fix_before_any_request(
    fallback: dict[str, str], said: str
) -> None:
    env = model_env("http://127.0.0.1:9/v1")
    result = chapter11("--prompt", "hi", env={**env, **fallback})
    assert result.exit_code == 2
    assert result.stderr.strip() == said  # one line: no header, no request, no traceback


# --- over the wire ------------------------------------------------------------------------------


def test_over_the_wire_three_failures_and_a_cut_answer_recover_in_one_run(
    tmp_path: Path, clock: FakeClock
) -> None:
    rate_limit = errors.OPENAI_RATE_LIMIT
    in_a_200 = {"error": {"message": "The server had an error", "type": "server_error"}}
    replies: list[ScriptedReply] = [
        Reply(429, rate_limit.body, {"retry-after-ms": "1500"}),
        Reply(200, in_a_200),
        sse(*text_stream("Two co")[:-1], finished=False),  # cut before its finish
        sse(*text_stream("Two codes: WELCOME10", finish_reason="length")),
        sse(*text_stream(" and STAFF.")),
    ]
    with ChatServer(replies) as server:
        result = chapter11("--prompt", "Which codes?", "--workspace", str(tmp_path),
                           env=model_env(server.base_url))  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Two codes: WELCOME10 and STAFF.\n"
    asked, first_backoff, second_backoff = clock.sleeps
    assert asked == 1.5  # retry-after-ms, exactly
    assert 1.5 <= first_backoff <= 2.0 and 3.0 <= second_backoff <= 4.0  # 2 s, 4 s, jittered
    assert len(bodies) == 5  # four attempts of one request, one continuation: no SDK retries
    assert bodies[0] == bodies[3]  # the same request, sent again
    assert bodies[4]["messages"][-2:] == [
        {"role": "assistant", "content": "Two codes: WELCOME10"},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    last = result.stderr.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"恢复 recovery: 3 retries \(waited [\d.]+ s; Retry-After asked for 1\.5 s\) "
        r"· 1 continuation",
        last,
    )


@pytest.mark.parametrize(
    ("option", "reply", "said"),
    [
        (
            "--max-retries",
            Reply(429, errors.OPENAI_RATE_LIMIT.body),
            "not retried: --max-retries is 0",
        ),
        (
            "--max-continuations",
            sse(*text_stream("Two co", finish_reason="length")),
            "still cut at the token limit (finish_reason=length) after 0 continuations",
        ),
    ],
)
def test_zero_retries_or_continuations_end_the_run_at_the_first_failure(
    option: str, reply: Reply | StreamReply, said: str, tmp_path: Path, clock: FakeClock
) -> None:
    with ChatServer([reply]) as server:
        result = chapter11("--prompt", "Which codes?", "--workspace", str(tmp_path), option, "0",
                           env=model_env(server.base_url))  # fmt: skip
        assert len(server.completion_requests()) == 1
    assert result.exit_code == 1
    assert said in result.stderr and "Traceback" not in result.stderr
    assert clock.sleeps == []


def test_over_the_wire_a_missing_model_falls_back_and_trace_says_who_answered(
    tmp_path: Path, clock: FakeClock
) -> None:
    missing = errors.OPENAI_NO_MODEL
    with (
        ChatServer([Reply(missing.status, missing.body)]) as primary,
        ChatServer(
            [
                sse(*text_stream("Two codes", finish_reason="length")),
                sse(*text_stream(", both in CODES.")),
            ]
        ) as second,  # fmt: skip
    ):
        env = {
            **model_env(primary.base_url),
            "OPENAI_FALLBACK_MODEL": "m2",
            "OPENAI_FALLBACK_BASE_URL": second.base_url,
        }
        result = chapter11("--prompt", "Which codes?", "--workspace", str(tmp_path), "--trace",
                           env=env)  # fmt: skip
        first_bodies = [r.body for r in primary.completion_requests()]
        second_bodies = [r.body for r in second.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Two codes, both in CODES.\n"
    assert len(first_bodies) == 1 and [b["model"] for b in second_bodies] == ["m2", "m2"]
    err = result.stderr
    assert f"fallback: m2 @ {second.base_url}" in err  # the header says there is one
    assert err.count("回退 fallback: m @ ") == 1
    assert err.count(f"answered by: m2 @ {second.base_url}") == 2
    titles = TRACED.findall(err)
    assert "continuation request 1" in titles and "continuation response 1" in titles
    assert clock.sleeps == []  # a missing model is not waited for
    assert (
        err.rstrip().splitlines()[-1]
        == f"恢复 recovery: 1 continuation · fell back to m2 @ {second.base_url}"
    )


@pytest.mark.parametrize("streaming", [(), ("--no-stream",)], ids=["streaming", "plain"])
def test_a_fallback_url_where_nothing_listens_names_the_fallbacks_setting(
    tmp_path: Path, clock: FakeClock, streaming: tuple[str, ...]
) -> None:
    missing, url = errors.OPENAI_NO_MODEL, closed_port_url()
    with ChatServer([Reply(missing.status, missing.body)]) as primary:
        env = {
            **model_env(primary.base_url),
            "OPENAI_FALLBACK_MODEL": "m2",
            "OPENAI_FALLBACK_BASE_URL": url,
        }
        result = chapter11("--prompt", "hi", "--workspace", str(tmp_path), *streaming, env=env)
    assert result.exit_code == 2, result.stderr
    assert clock.sleeps == []  # nothing has ever answered at the fallback's URL
    (line,) = [line for line in result.stderr.splitlines() if "cannot connect" in line]
    assert line.startswith(f"配置错误：cannot connect to {url}")
    assert "Check OPENAI_FALLBACK_BASE_URL (" in line and "OPENAI_BASE_URL (" not in line


# --- the chapter's other commands ----------------------------------------------------------------


def test_the_dispatcher_runs_chapter_11_and_its_other_commands(
    demo_folder: Path, clock: FakeClock, tmp_path: Path
) -> None:
    run = tutorial("run", "--chapter", "11", "--demo")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == ANSWER + "\n"
    sessions = tutorial("sessions", "--chapter", "11", "--workspace", str(demo_folder))
    assert sessions.exit_code == 0 and demo.DEMO_PROMPT[:40] in sessions.stdout
    agents = tutorial("agents", "--chapter", "11", "--workspace", str(tmp_path))
    assert agents.exit_code == 0 and "explore\n  source: built in\n" in agents.stdout
    check = tutorial("permissions", "check", "--chapter", "11", "load_skill(deploy)")
    assert check.stdout.startswith("allow: load_skill(deploy)\n")
    shown = tutorial("prompt", "--chapter", "11", "--workspace", str(tmp_path))
    assert shown.exit_code == 0, shown.stderr
    diff = tutorial("diff", "--chapter", "11", "--stat")
    assert (
        "chapters/ch11/agent.py" in diff.stdout and "extends chapters/ch10/agent.py" in diff.stdout
    )


def test_a_url_where_nothing_listens_is_exit_2_at_once_naming_the_setting(
    tmp_path: Path, clock: FakeClock
) -> None:
    url = closed_port_url()
    result = chapter11("--prompt", "hi", "--workspace", str(tmp_path), env=model_env(url))
    assert result.exit_code == 2, result.stderr
    assert clock.sleeps == []  # no retry: nothing has ever answered at that URL
    (line,) = [line for line in result.stderr.splitlines() if "cannot connect" in line]
    assert line.startswith(f"配置错误：cannot connect to {url}")
    assert "Check OPENAI_BASE_URL" in line
    assert "Traceback" not in result.stderr and "重试 retry" not in result.stderr

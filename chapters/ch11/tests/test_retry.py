"""Retries over real HTTP: each transient row is sent again after the right wait, every other
row goes up at once, and every wait is measured on a clock that never sleeps."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import (
    SSE_DONE,
    ChatServer,
    HangUp,
    Reply,
    ScriptedReply,
    StreamReply,
    sse_comment,
    sse_data,
)
from chapters.ch07.tests import provider_streams as streams
from chapters.ch11.failures import Failure, WaitTooLongError, diagnose
from chapters.ch11.recovery_console import Countdown, RecoveryConsole
from chapters.ch11.retry import RetriesExhaustedError, RetryingModel, RetryPolicy
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.tests import provider_errors as errors
from chapters.ch11.tests.support import (
    FakeClock,
    ask,
    closed_port_url,
    plain_model,
    printed,
    recording_console,
    streaming_model,
)
from chapters.ch11.wrapper import RetryWait
from shared.completion import ModelReply
from shared.errors import EXIT_USAGE, ConfigError, ProviderError, ProviderErrorKind
from shared.openai_client import OpenAIChatModel
from shared.scripted import response

OK = Reply(200, response("recovered"))
SLOW_DOWN = Reply(429, errors.OPENAI_RATE_LIMIT.body)


@dataclass
class Outcome:
    reply: ModelReply | None
    error: ProviderError | None
    requests: int
    clock: FakeClock
    console: RecoveryConsole
    log: RecoveryLog


def run(
    replies: Sequence[ScriptedReply],
    *,
    streaming: bool = False,
    policy: RetryPolicy | None = None,
    draw: float = 0.0,
    trace: bool = False,
    base_url: str | None = None,
) -> Outcome:
    """One request through `RetryingModel` around a real client, against `replies`."""
    clock, log = FakeClock(), RecoveryLog()
    console = recording_console(trace=trace, clock=clock)
    with ChatServer(replies) as server:
        url = base_url or server.base_url
        inner = streaming_model(url) if streaming else plain_model(url)
        model = RetryingModel(inner, policy=policy, clock=clock, draw=lambda: draw, log=log)
        reply = error = None
        try:
            reply = ask(model, console)
        except ProviderError as caught:
            error = caught
        requests = len(server.completion_requests())
    return Outcome(reply, error, requests, clock, console, log)


def answered(outcome: Outcome) -> str:
    assert outcome.error is None, outcome.error
    assert outcome.reply is not None
    return str(outcome.reply.message.content)


# --- waits: what the provider asked for, else backoff ------------------------------------------


def test_retry_after_ms_is_waited_exactly_then_the_request_is_sent_again() -> None:
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, {"retry-after-ms": "1500"}), OK])
    assert answered(outcome) == "recovered"
    assert outcome.clock.sleeps == [1.5]
    assert outcome.requests == 2


def test_retry_after_in_seconds_is_waited() -> None:
    outcome = run([Reply(503, errors.OPENAI_SERVER.body, {"retry-after": "7"}), OK])
    assert answered(outcome) == "recovered"
    assert outcome.clock.sleeps == [7.0]


def test_retry_after_as_an_http_date_is_waited_until_that_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    header = {"retry-after": format_datetime(when, usegmt=True)}  # whole seconds only
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, header), OK])
    assert answered(outcome) == "recovered"
    [waited] = outcome.clock.sleeps
    assert 28.0 < waited <= 30.0


def past_date() -> str:
    return format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)


@pytest.mark.parametrize(
    "header",
    [
        {"retry-after": "-3"},
        {"retry-after": "-inf"},
        {"retry-after": "inf"},
        {"retry-after": "nan"},
        pytest.param({"retry-after": past_date()}, id="retry-after=a-past-date"),
        {"retry-after-ms": "-1500"},
        {"retry-after-ms": "inf"},
        {"retry-after-ms": "NaN"},
    ],
    ids=lambda header: "=".join(next(iter(header.items()))),
)
def test_a_retry_after_that_is_no_wait_is_not_asked_and_the_backoff_is_waited(
    header: dict[str, str],
) -> None:
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, header)] * 2 + [OK])
    assert answered(outcome) == "recovered"
    assert outcome.clock.sleeps == [1.0, 2.0]  # not [0.0, 0.0]: five requests in no time


@pytest.mark.parametrize("asked", [-3.0, float("inf"), float("-inf"), float("nan")])
def test_the_policy_backs_off_when_what_was_asked_is_no_wait(asked: float) -> None:
    error = ProviderError("HTTP 429", 429, kind=ProviderErrorKind.RATE_LIMITED, retry_after=asked)
    assert RetryPolicy().wait(2, error, draw=0.0) == 2.0


def test_an_unusable_retry_after_ms_leaves_retry_after_to_be_read() -> None:
    header = {"retry-after-ms": "-1", "retry-after": "7"}
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, header), OK])
    assert outcome.clock.sleeps == [7.0]


def test_without_retry_after_the_waits_double_from_one_second() -> None:
    outcome = run([Reply(503, errors.OPENAI_SERVER.body)] * 4 + [OK])
    assert answered(outcome) == "recovered"
    assert outcome.clock.sleeps == [1.0, 2.0, 4.0, 8.0]
    assert outcome.requests == 5


def test_jitter_shortens_a_backoff_wait_by_up_to_a_quarter() -> None:
    outcome = run([Reply(502, "<html>502 Bad Gateway</html>")] * 2 + [OK], draw=0.5)
    assert outcome.clock.sleeps == [0.875, 1.75]


def test_no_single_wait_is_longer_than_the_cap() -> None:
    policy = RetryPolicy(first_backoff=40.0)
    outcome = run([Reply(500, errors.OPENAI_SERVER.body)] * 3 + [OK], policy=policy)
    assert outcome.clock.sleeps == [40.0, 60.0, 60.0]


def test_a_retry_after_above_the_cap_ends_the_run_saying_how_long_it_asked() -> None:
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, {"retry-after": "3600"}), OK])
    assert isinstance(outcome.error, WaitTooLongError)
    line = str(outcome.error)
    assert "asked to wait 3600 s" in line and "at most" in line and "\n" not in line
    assert outcome.clock.sleeps == []
    assert outcome.requests == 1


def test_after_max_retries_the_last_error_goes_up_saying_how_many() -> None:
    outcome = run([Reply(503, errors.OPENAI_SERVER.body)] * 6)
    assert isinstance(outcome.error, RetriesExhaustedError)
    assert outcome.requests == 5  # four retries: five attempts, and not one more
    assert outcome.clock.sleeps == [1.0, 2.0, 4.0, 8.0]
    assert "gave up after 4 retries and 15.0 s of waiting" in str(outcome.error)
    assert outcome.error.status == 503
    assert diagnose(outcome.error) is Failure.SERVER_ERROR


def test_max_retries_zero_sends_once() -> None:
    outcome = run([Reply(503, errors.OPENAI_SERVER.body), OK], policy=RetryPolicy(max_retries=0))
    assert isinstance(outcome.error, RetriesExhaustedError)
    assert "not retried: --max-retries is 0" in str(outcome.error)
    assert outcome.requests == 1


# --- each transient row --------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_each_transient_status_is_retried(status: int) -> None:
    outcome = run([Reply(status, {"error": {"message": "try later"}}), OK])
    assert answered(outcome) == "recovered"
    assert outcome.requests == 2


@pytest.mark.parametrize(
    "failure",
    [errors.OPENROUTER_PROVIDER_ERROR_IN_200, errors.DEEPSEEK_BUSY_IN_200],
    ids=lambda f: f.name,
)
def test_a_200_whose_body_is_a_server_error_is_retried(failure: errors.ProviderFailure) -> None:
    outcome = run([Reply(200, failure.body), OK])
    assert answered(outcome) == "recovered"
    assert outcome.requests == 2


def test_a_200_whose_body_is_another_error_is_not_retried() -> None:
    outcome = run([Reply(200, errors.BAD_RESPONSE_IN_200.body), OK])
    assert outcome.error is not None
    assert diagnose(outcome.error) is Failure.BAD_RESPONSE
    assert "Invalid tool schema" in str(outcome.error)
    assert outcome.requests == 1


def test_a_200_that_is_not_json_is_not_retried() -> None:
    outcome = run([Reply(200, "<html>Welcome to nginx!</html>"), OK])
    assert outcome.error is not None
    assert diagnose(outcome.error) is Failure.BAD_RESPONSE
    assert "not JSON" in str(outcome.error)
    assert outcome.requests == 1


def test_deepseeks_keep_alive_lines_then_an_error_body_are_retried() -> None:
    """DeepSeek keeps a queued request open with empty lines, then may answer with an error."""
    body = "\n\n\n\n" + json.dumps(errors.DEEPSEEK_BUSY_IN_200.body)
    outcome = run([Reply(200, body, {"Content-Type": "application/json"}), OK])
    assert answered(outcome) == "recovered"
    assert outcome.requests == 2


def test_deepseeks_insufficient_system_resource_finish_is_retried() -> None:
    cut = response("The answ", finish_reason="insufficient_system_resource")
    outcome = run([Reply(200, cut), OK])
    assert answered(outcome) == "recovered"


def test_a_stream_of_keep_alive_comments_then_an_error_event_is_retried() -> None:
    events = [
        sse_comment("keep-alive"),
        sse_comment("keep-alive"),
        sse_data(errors.DEEPSEEK_BUSY_IN_200.body),
        SSE_DONE,
    ]
    outcome = run([StreamReply(events), StreamReply(streams.DEEPSEEK.sse())], streaming=True)
    assert outcome.error is None
    assert outcome.reply is not None and outcome.reply.message.tool_calls  # the second stream
    assert outcome.requests == 2


def test_a_stream_cut_mid_reply_is_sent_again_and_nothing_of_it_is_kept() -> None:
    outcome = run([StreamReply(streams.CUT_OFF.sse()), StreamReply(streams.OPENROUTER.sse())],
                  streaming=True)  # fmt: skip
    assert answered(outcome) == "It is 42."  # not "The answer is probably" + anything
    assert outcome.clock.sleeps == [1.0]
    text = printed(outcome.console)
    assert "The answer is probably\n重试 retry:" in text  # the cut line ends before the notice


def test_a_dropped_connection_is_retried() -> None:
    outcome = run([HangUp(), OK])
    assert answered(outcome) == "recovered"
    assert outcome.requests == 2


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_a_refused_connection_before_any_answer_is_a_config_error_not_retried(
    streaming: bool,
) -> None:
    """Nothing listens at the URL and nothing ever answered: a setting is wrong, and waiting
    13 to 19 seconds over four retries will not fix it."""
    url, clock = closed_port_url(), FakeClock()
    inner = streaming_model(url) if streaming else plain_model(url)
    with pytest.raises(ConfigError) as caught:
        ask(RetryingModel(inner, clock=clock, draw=lambda: 0.0))
    assert clock.sleeps == []
    line = caught.value.cli_line()
    assert line.startswith("配置错误：cannot connect to " + url) and "\n" not in line
    assert "Check OPENAI_BASE_URL" in line
    assert caught.value.exit_code == EXIT_USAGE


@dataclass
class Moving:
    """A client that sends each request to the next of `clients`: a server that answered
    once, then went away."""

    clients: list[OpenAIChatModel]
    name: str = "test-model"
    label: str = "test-model @ moving"

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.clients.pop(0).complete(request)


def test_a_refused_connection_after_an_answer_is_retried_then_given_up() -> None:
    clock = FakeClock()
    with ChatServer([OK]) as server:
        gone = [plain_model(closed_port_url()) for _ in range(5)]
        model = RetryingModel(Moving([plain_model(server.base_url), *gone]), clock=clock,
                              draw=lambda: 0.0)  # fmt: skip
        assert ask(model).message.content == "recovered"
        with pytest.raises(RetriesExhaustedError) as caught:
            ask(model)
    assert diagnose(caught.value) is Failure.CONNECTION
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0]


# --- what is not retried ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [errors.OPENAI_QUOTA, errors.OPENAI_BAD_REQUEST, errors.OPENAI_BAD_KEY,
     errors.OPENAI_NO_MODEL, errors.DEEPSEEK_BALANCE, errors.AZURE_CONTENT_FILTER,
     errors.OPENAI_CONTEXT, Reply(403, {"error": {"message": "forbidden"}})],
    ids=lambda f: f.name if isinstance(f, errors.ProviderFailure) else "403",
)  # fmt: skip
def test_the_rows_that_are_not_retried_are_one_line_at_once(
    failure: errors.ProviderFailure | Reply,
) -> None:
    reply = failure if isinstance(failure, Reply) else Reply(failure.status, failure.body)
    outcome = run([reply, OK])
    assert outcome.error is not None
    assert not isinstance(outcome.error, RetriesExhaustedError)
    assert outcome.requests == 1
    assert outcome.clock.sleeps == []
    assert "\n" not in str(outcome.error)
    assert str(outcome.error).startswith(f"HTTP {reply.status}:")


# --- what the reader sees -----------------------------------------------------------------------


def test_each_wait_is_one_line_with_the_reason_the_wait_and_the_attempt() -> None:
    outcome = run([Reply(429, errors.AZURE_RATE_LIMIT.body, errors.AZURE_RATE_LIMIT.headers),
                   Reply(503, errors.OPENAI_SERVER.body), OK])  # fmt: skip
    lines = [line for line in printed(outcome.console).splitlines() if "retry" in line]
    assert lines == [
        "重试 retry: HTTP 429 (rate limited) from test-model @ "
        f"{plain_url(outcome)}; waiting 6.0 s as the provider asked (Retry-After), "
        "then attempt 2 of 5",
        f"重试 retry: HTTP 503 (server error) from test-model @ {plain_url(outcome)}; "
        "waiting 2.0 s (backoff), then attempt 3 of 5",
    ]


def plain_url(outcome: Outcome) -> str:
    text = printed(outcome.console)
    return text.split("from test-model @ ", 1)[1].split(";", 1)[0]


def test_a_countdown_under_the_spinner_counts_down_on_the_same_clock() -> None:
    clock = FakeClock()
    console = RecoveryConsole(fancy=False, clock=clock)
    seen: list[str | None] = []
    countdown = Countdown(console)

    def halfway(seconds: float) -> None:
        seen.append(countdown.text())
        clock.time += seconds / 2
        seen.append(countdown.text())
        clock.time -= seconds / 2

    clock.during_sleep = halfway
    model = RetryingModel(_FailingOnce(), clock=clock, draw=lambda: 0.0)
    model.complete_reporting({"model": "m", "messages": []}, console)
    assert seen == ["  ↻ attempt 2 of 5 in 6 s", "  ↻ attempt 2 of 5 in 3 s"]
    assert countdown.text() is None  # the wait is over: nothing under the spinner


def test_the_countdown_is_drawn_on_a_terminal() -> None:
    import io

    from rich.console import Console as RichConsole

    clock = FakeClock()
    console = RecoveryConsole(fancy=False, clock=clock)
    console.retrying = _wait_of(4.0, clock)
    screen = io.StringIO()
    RichConsole(file=screen, width=60).print(Countdown(console))
    assert screen.getvalue() == "  ↻ attempt 2 of 5 in 4 s\n"


def test_trace_shows_every_failed_attempt_with_its_status_and_body() -> None:
    outcome = run([Reply(502, "<html>502 Bad Gateway</html>"), OK], trace=True)
    text = printed(outcome.console)
    assert "--- attempt 1 of 5 (failed: HTTP 502) ---\n<html>502 Bad Gateway</html>" in text
    assert "--- response 1 ---" in text


def test_the_log_counts_retries_waits_and_what_was_asked() -> None:
    outcome = run([Reply(429, errors.OPENAI_RATE_LIMIT.body, {"retry-after-ms": "1500"}),
                   Reply(503, errors.OPENAI_SERVER.body), OK])  # fmt: skip
    assert (outcome.log.retries, outcome.log.waited, outcome.log.asked) == (2, 3.5, 1.5)
    assert outcome.log.line() == (
        "恢复 recovery: 2 retries (waited 3.5 s; Retry-After asked for 1.5 s)"
    )


def test_no_test_here_sleeps() -> None:
    """The waits above add up to minutes; the clock is fake, so the suite stays fast."""
    start = time.monotonic()
    run([Reply(503, errors.OPENAI_SERVER.body)] * 4 + [OK])
    assert time.monotonic() - start < 5.0


class _FailingOnce:
    """A model that is rate limited once (Retry-After 6 s), then answers."""

    name = label = "m"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: object) -> dict[str, object]:
        self.calls += 1
        if self.calls == 1:
            raise ProviderError(
                "HTTP 429: busy", 429, kind=ProviderErrorKind.RATE_LIMITED, retry_after=6.0
            )
        return response("ok")


def _wait_of(seconds: float, clock: FakeClock) -> RetryWait:
    return RetryWait("m", 2, 5, seconds, None, Failure.SERVER_ERROR, 503, clock.now())

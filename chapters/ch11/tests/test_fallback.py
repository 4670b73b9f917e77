"""The fallback model over real HTTP: once per request, for the rest of the run, under the same
retry rules, with what one provider left in the history sent only back to it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, Reply, ScriptedReply
from chapters.ch07.scripted_stream import ScriptedStreamingModel
from chapters.ch11.failures import Failure, diagnose
from chapters.ch11.fallback import FallbackFailedError, FallbackModel
from chapters.ch11.models import recovering_model
from chapters.ch11.retry import RetryPolicy
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.tests import provider_errors as errors
from chapters.ch11.tests.support import FakeClock, ask, plain_model, printed, recording_console
from shared.agent import AgentSpec
from shared.calls import CallPipeline
from shared.errors import ProviderError
from shared.messages import Message
from shared.scripted import ScriptedModel, response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

OK = Reply(200, response("from the fallback", model="fallback-model"))
BUSY = Reply(503, errors.OPENAI_SERVER.body)


@dataclass
class Outcome:
    answers: list[str]
    error: ProviderError | None
    primary: list[dict[str, Any]]  # the request bodies each server received
    fallback: list[dict[str, Any]]
    clock: FakeClock
    text: str  # what the console printed
    log: RecoveryLog


def two_models(
    primary: Sequence[ScriptedReply],
    fallback: Sequence[ScriptedReply],
    *,
    requests: int = 1,
    trace: bool = False,
    policy: RetryPolicy | None = None,
) -> Outcome:
    """`requests` requests through the chapter's model stack, with a fallback."""
    clock, log = FakeClock(), RecoveryLog()
    console = recording_console(trace=trace, clock=clock)
    answers: list[str] = []
    error = None
    with ChatServer(primary) as first, ChatServer(fallback) as second:
        model = recovering_model(
            plain_model(first.base_url, "primary-model"),
            fallback=plain_model(second.base_url, "fallback-model"),
            policy=policy,
            clock=clock,
            draw=lambda: 0.0,
            log=log,
        )
        try:
            for _ in range(requests):
                answers.append(str(ask(model, console).message.content))
        except ProviderError as caught:
            error = caught
        sent = (
            [r.body for r in first.completion_requests()],
            [r.body for r in second.completion_requests()],
        )
    return Outcome(answers, error, *sent, clock, printed(console), log)


def test_after_the_primarys_retries_the_request_goes_to_the_fallback() -> None:
    outcome = two_models([BUSY] * 5, [OK])
    assert outcome.answers == ["from the fallback"]
    assert len(outcome.primary) == 5  # its own four retries first
    assert outcome.clock.sleeps == [1.0, 2.0, 4.0, 8.0]
    assert [body["model"] for body in outcome.fallback] == ["fallback-model"]


def test_the_rest_of_the_run_stays_on_the_fallback_and_the_console_says_so_once() -> None:
    outcome = two_models([BUSY] * 5, [OK, OK, OK], requests=3)
    assert outcome.answers == ["from the fallback"] * 3
    assert len(outcome.primary) == 5  # never asked again
    assert len(outcome.fallback) == 3
    assert outcome.text.count("回退 fallback:") == 1
    assert "the rest of this run uses fallback-model @" in outcome.text
    assert "failed, HTTP 503 (server error) after 4 retries: The server had an error" in (
        outcome.text
    )
    assert outcome.log.line() == (
        "恢复 recovery: 4 retries (waited 15.0 s) · fell back to "
        f"{outcome.log.switch.fallback if outcome.log.switch else ''}"
    )


@pytest.mark.parametrize(
    "failure",
    [errors.OPENAI_OVERLOADED, errors.ANTHROPIC_OVERLOADED, errors.OPENAI_NO_MODEL,
     errors.DEEPSEEK_NO_MODEL, errors.OLLAMA_NO_MODEL, errors.OPENAI_QUOTA],
    ids=lambda f: f.name,
)  # fmt: skip
def test_a_primary_that_cannot_serve_hands_over_at_once(failure: errors.ProviderFailure) -> None:
    outcome = two_models([Reply(failure.status, failure.body)], [OK])
    assert outcome.answers == ["from the fallback"]
    assert len(outcome.primary) == 1
    assert outcome.clock.sleeps == []


def test_a_wait_above_the_cap_hands_over_at_once() -> None:
    outcome = two_models([Reply(429, errors.OPENAI_RATE_LIMIT.body, {"retry-after": "900"})], [OK])
    assert outcome.answers == ["from the fallback"]
    assert outcome.clock.sleeps == []


@pytest.mark.parametrize(
    "failure",
    [errors.OPENAI_BAD_KEY, errors.OPENAI_BAD_REQUEST, errors.AZURE_CONTENT_FILTER,
     errors.BAD_RESPONSE_IN_200],
    ids=lambda f: f.name,
)  # fmt: skip
def test_a_wrong_request_or_key_is_not_hidden_by_the_fallback(
    failure: errors.ProviderFailure,
) -> None:
    outcome = two_models([Reply(failure.status, failure.body)], [OK])
    assert outcome.error is not None and not isinstance(outcome.error, FallbackFailedError)
    assert outcome.fallback == []


def test_the_fallbacks_requests_follow_the_same_retry_rules() -> None:
    rate_limited = Reply(429, errors.OPENAI_RATE_LIMIT.body, errors.OPENAI_RATE_LIMIT.headers)
    outcome = two_models([BUSY] * 5, [rate_limited, OK])
    assert outcome.answers == ["from the fallback"]
    assert outcome.clock.sleeps == [1.0, 2.0, 4.0, 8.0, 2.0]  # Retry-After: 2, as asked
    assert len(outcome.fallback) == 2


def test_without_a_fallback_overloaded_is_retried_like_a_server_error() -> None:
    clock = FakeClock()
    overloaded = Reply(errors.OPENAI_OVERLOADED.status, errors.OPENAI_OVERLOADED.body)
    with ChatServer([overloaded, Reply(200, response("ok"))]) as server:
        model = recovering_model(plain_model(server.base_url), clock=clock, draw=lambda: 0.0)
        assert ask(model).message.content == "ok"
    assert clock.sleeps == [1.0]


def test_when_the_fallback_fails_too_the_line_names_both_reasons() -> None:
    outcome = two_models([Reply(404, errors.OPENAI_NO_MODEL.body)], [BUSY] * 5)
    assert isinstance(outcome.error, FallbackFailedError)
    line = str(outcome.error)
    assert line.startswith("HTTP 503:") and "gave up after 4 retries" in line
    assert "this was the fallback model fallback-model @" in line
    assert "primary-model @" in line
    assert "had failed: HTTP 404 (model missing): The model `gpt-9` does not exist" in line
    assert "\n" not in line
    assert diagnose(outcome.error) is Failure.SERVER_ERROR


def test_trace_says_which_model_answered_each_request() -> None:
    first = Reply(200, response("from the primary", model="primary-model"))
    outcome = two_models([first, BUSY, BUSY], [OK], requests=2, trace=True,
                         policy=RetryPolicy(max_retries=1))  # fmt: skip
    answered = [line for line in outcome.text.splitlines() if line.startswith("answered by:")]
    assert [line.split(" @ ")[0] for line in answered] == [
        "answered by: primary-model",
        "answered by: fallback-model",
    ]
    assert "--- primary-model @" in outcome.text  # the primary's failure, in the trace
    assert ", switching to the fallback (failed: HTTP 503) ---" in outcome.text


# --- the history: each provider's extras go back only to that provider ----------------------------


class Echo(BaseModel):
    text: str


def echo_tool() -> ToolRegistry:
    return ToolRegistry(
        [
            PydanticTool(
                name="echo",
                description="Say it back.",
                args_model=Echo,
                side_effect=SideEffect.READ,
                run=lambda arguments: ToolResult.success(f"ok: {arguments.text}"),
            )
        ]
    )


def call_with_extras(call_id: str, text: str, signature: str) -> dict[str, Any]:
    call = tool_call(call_id, "echo", json.dumps({"text": text}))
    call["extra_content"] = {"google": {"thought_signature": signature}}
    return call


def assistant_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "assistant"]


def test_each_providers_extras_are_sent_back_only_to_that_provider() -> None:
    primary_reply = response(
        None,
        [call_with_extras("p1", "one", "primary-signature")],
        message_extras={"reasoning_content": "primary thinking"},
    )
    fallback_reply = response(
        None,
        [call_with_extras("f1", "two", "fallback-signature")],
        message_extras={"reasoning_content": "fallback thinking"},
    )
    clock = FakeClock()
    with (
        ChatServer([Reply(200, primary_reply), BUSY, BUSY]) as first,
        ChatServer([Reply(200, fallback_reply), Reply(200, response("done"))]) as second,
    ):
        model = recovering_model(
            plain_model(first.base_url, "primary-model"),
            fallback=plain_model(second.base_url, "fallback-model"),
            policy=RetryPolicy(max_retries=1),
            clock=clock,
        )
        spec = AgentSpec(
            model=model,
            tools=echo_tool(),
            calls=CallPipeline(),
            console=recording_console(clock=clock),
            system_prompt="test",
        )
        history: list[Message] = []
        assert run_agent("go", spec, history=history) == "done"
        to_primary = [r.body for r in first.completion_requests()]
        to_fallback = [r.body for r in second.completion_requests()]

    # The primary got its own extras back while it was the model.
    [sent_back] = assistant_messages(to_primary[1])
    assert sent_back["reasoning_content"] == "primary thinking"
    assert sent_back["tool_calls"][0]["extra_content"]["google"]["thought_signature"] == (
        "primary-signature"
    )
    # The fallback never sees the primary's, and gets its own back.
    first_to_fallback = assistant_messages(to_fallback[0])
    assert first_to_fallback == [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "p1", "type": "function",
                         "function": {"name": "echo", "arguments": '{"text": "one"}'}}]},
    ]  # fmt: skip
    primary_turn, fallback_turn = assistant_messages(to_fallback[1])
    assert primary_turn == first_to_fallback[0]
    assert fallback_turn["reasoning_content"] == "fallback thinking"
    assert fallback_turn["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": "fallback-signature"}
    }
    assert {body["model"] for body in to_fallback} == {"fallback-model"}
    # The history itself still holds what each model said.
    assert history[2].reasoning_content == "primary thinking"  # type: ignore[union-attr]


def test_the_fallback_gets_its_own_request_fields_not_the_primarys() -> None:
    streaming = ScriptedStreamingModel([], name="primary")  # asks for `stream: true`
    plain = ScriptedModel([response("ok")], name="fallback")
    model = FallbackModel(streaming, plain)
    request = {"model": "primary", "messages": [], **streaming.request_fields}
    adapted = model.adapted(request)
    assert adapted == {"model": "fallback", "messages": []}
    assert model.request_fields == streaming.request_fields  # until it switches


def test_a_wrapper_around_the_fallback_model_names_the_model_it_sends_to_now() -> None:
    outcome_model = FallbackModel(ScriptedModel([], name="a"), ScriptedModel([], name="b"))
    outer = recovering_model(outcome_model, shorten=lambda request: None)
    assert (outer.name, outer.label) == ("a", "a (scripted, no network)")
    outcome_model.inner = outcome_model.fallback  # what a switch does
    assert (outer.name, outer.label) == ("b", "b (scripted, no network)")


def test_nothing_here_touches_a_real_folder(tmp_path: Path) -> None:
    assert not any(tmp_path.iterdir())

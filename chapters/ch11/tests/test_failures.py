"""The taxonomy: every provider's error body, sent over real HTTP, lands in its row."""

from __future__ import annotations

import json

import pytest

from chapters.ch01.tests.chat_server import ChatServer, Reply
from chapters.ch11.failures import (
    Failure,
    WaitTooLongError,
    diagnose,
    error_in_body,
    said_in_body,
)
from chapters.ch11.tests import provider_errors as errors
from chapters.ch11.tests.provider_errors import ProviderFailure
from chapters.ch11.tests.support import plain_model
from shared.errors import ProviderError, ProviderErrorKind
from shared.scripted import response


def failure_over_the_wire(failure: ProviderFailure) -> ProviderError:
    """What the chapter-1 client makes of the body: its error, or the error in its 200 body."""
    reply = Reply(failure.status, failure.body, failure.headers)
    with ChatServer([reply]) as server:
        model = plain_model(server.base_url)
        try:
            body = model.complete({"model": "test-model", "messages": []})
        except ProviderError as error:
            return error
    found = error_in_body(body)
    assert found is not None, "a 200 with an error must not pass for an answer"
    return found


@pytest.mark.parametrize("failure", errors.EVERY_FAILURE, ids=lambda f: f.name)
def test_each_providers_error_lands_in_its_row(failure: ProviderFailure) -> None:
    assert diagnose(failure_over_the_wire(failure)) is failure.failure


def test_what_each_row_means_for_recovery() -> None:
    retried = {f for f in Failure if f.retried}
    at_once = {f for f in Failure if f.falls_back}
    assert retried == {
        Failure.RATE_LIMITED,
        Failure.SERVER_ERROR,
        Failure.OVERLOADED,
        Failure.CONNECTION,
    }
    assert at_once == {
        Failure.QUOTA_EXHAUSTED,
        Failure.OVERLOADED,
        Failure.WAIT_TOO_LONG,
        Failure.MODEL_MISSING,
    }
    never = {Failure.AUTHENTICATION, Failure.REFUSED, Failure.BAD_RESPONSE}
    assert not never & (retried | at_once)


@pytest.mark.parametrize(
    ("status", "failure"),
    [(500, Failure.SERVER_ERROR), (502, Failure.SERVER_ERROR), (503, Failure.SERVER_ERROR),
     (504, Failure.SERVER_ERROR), (501, Failure.REFUSED), (505, Failure.REFUSED),
     (429, Failure.RATE_LIMITED), (413, Failure.CONTEXT_TOO_LONG), (403, Failure.AUTHENTICATION),
     (404, Failure.MODEL_MISSING), (400, Failure.REFUSED), (422, Failure.REFUSED)],
)  # fmt: skip
def test_only_the_transient_statuses_are_retried(status: int, failure: Failure) -> None:
    error = failure_over_the_wire(
        ProviderFailure("plain", status, {"error": {"message": "no"}}, failure)
    )
    assert diagnose(error) is failure


@pytest.mark.parametrize(
    ("said", "failure"),
    [
        ({"message": "boom", "code": 500}, Failure.SERVER_ERROR),
        ({"message": "boom", "code": "503"}, Failure.SERVER_ERROR),
        ({"message": "Server overloaded"}, Failure.OVERLOADED),
        ({"message": "x", "type": "insufficient_system_resource"}, Failure.SERVER_ERROR),
        ({"message": "x", "type": "server_error"}, Failure.SERVER_ERROR),
        ({"message": "slow down", "code": 429}, Failure.RATE_LIMITED),
        ({"message": "Invalid request"}, Failure.BAD_RESPONSE),
        ({"message": "x", "code": 400}, Failure.BAD_RESPONSE),
    ],
)
def test_an_error_inside_a_200_is_classified_by_what_it_says(
    said: dict[str, object], failure: Failure
) -> None:
    assert said_in_body(said) is failure


def test_a_200_error_may_be_a_string_or_vllms_error_object() -> None:
    text = error_in_body({"error": "upstream overloaded"})
    assert text is not None and diagnose(text) is Failure.OVERLOADED
    vllm = error_in_body({"object": "error", "message": "bad", "code": 400})
    assert vllm is not None and diagnose(vllm) is Failure.BAD_RESPONSE


def test_deepseeks_insufficient_system_resource_finish_is_a_server_error() -> None:
    body = response("The answer is", finish_reason="insufficient_system_resource")
    error = error_in_body(body)
    assert error is not None
    assert error.kind is ProviderErrorKind.SERVER
    assert diagnose(error) is Failure.SERVER_ERROR
    assert "insufficient_system_resource" in str(error)


def test_an_answer_is_not_an_error() -> None:
    assert error_in_body(response("fine")) is None
    assert error_in_body(response(None, finish_reason="length")) is None


def test_a_stream_error_event_is_classified_by_what_it_says() -> None:
    """Chapter 7 reports every error event as a server error; what it says decides here."""
    from chapters.ch07.assembly import BrokenStreamError

    server = BrokenStreamError(
        "x", kind=ProviderErrorKind.SERVER,
        body=json.dumps({"error": {"code": "server_error", "message": "Provider disconnected"}}),
    )  # fmt: skip
    refused = BrokenStreamError(
        "x", kind=ProviderErrorKind.SERVER,
        body=json.dumps({"error": {"message": "This request violates the usage policy"}}),
    )  # fmt: skip
    cut = BrokenStreamError("x", kind=ProviderErrorKind.CONNECTION)
    finish_error = BrokenStreamError(
        "x", kind=ProviderErrorKind.SERVER, body=json.dumps({"choices": []})
    )
    assert diagnose(server) is Failure.SERVER_ERROR
    assert diagnose(refused) is Failure.BAD_RESPONSE
    assert diagnose(cut) is Failure.CONNECTION
    assert diagnose(finish_error) is Failure.SERVER_ERROR


def test_a_wait_above_the_cap_is_its_own_row_and_says_how_long() -> None:
    error = WaitTooLongError(ProviderError("HTTP 429: busy.", 429), asked=3600, cap=60)
    assert diagnose(error) is Failure.WAIT_TOO_LONG
    assert "asked to wait 3600 s" in str(error)
    assert "60 s" in str(error) and "run again in 60 min" in str(error)

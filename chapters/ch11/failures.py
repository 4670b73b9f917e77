"""Chapter 11's failure taxonomy: what kind of failure a provider error is, and who recovers.

Every `ProviderError` (shared/errors.py) is diagnosed as one `Failure`, and
each kind has exactly one owner and one bounded action (the chapter text's
table "失败分类"):

    kind              example                        owner              action
    rate_limited      429, retry-after-ms: 1500      RetryingModel      wait as asked, send again
    quota_exhausted   429 "insufficient_quota"       FallbackModel      the fallback, else stop
    server_error      500 502 503 504; a 200 body    RetryingModel      back off, send again
                      saying 5xx, server_error or
                      insufficient_system_resource
    overloaded        529 or 503 "overloaded"        FallbackModel      the fallback at once;
                                                                        without one, retried
    connection        dropped, timed out; a stream   RetryingModel      back off, send again
                      cut before its finish, or
                      with a chunk it cannot read;
                      a reply cut at a bound
                      (OPENAI_MAX_REPLY_SECONDS,
                      OPENAI_MAX_REPLY_CHARS);
                      refused, once something has
                      answered at that URL
                      refused before anything        RetryingModel      stop: exit 2, a config
                      answered at that URL in                           error naming the URL's
                      this run                                          setting; no retry, no
                                                                        fallback
    wait_too_long     Retry-After above the cap      FallbackModel      the fallback, else stop
                                                                        saying how long it asked
    context_too_long  400 "maximum context length"   CompactOnOverflow  compact, send once more
    model_missing     404; 400 "Model Not Exist"     FallbackModel      the fallback, else stop
    authentication    401, 403                       nobody             one line, at once
    refused           any other 4xx (or 5xx)         nobody             one line, at once
    bad_response      a 200 body with another error  nobody             one line, at once

Every retry is bounded: `max_retries` waits of at most 60 s each, one compaction,
one switch to the fallback.

The rules read what the provider said (the status, the body, the message),
never who the provider is: a provider nobody wrote a rule for still lands in
the row its words fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from shared.errors import ProviderError, ProviderErrorKind, one_line

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
CONTEXT_STATUSES = frozenset({413})  # "request entity too large": the history is

# What a provider says when the request is longer than the model's context, in the
# words of OpenAI, Azure, DeepSeek, OpenRouter, vLLM, llama.cpp, Anthropic and Gemini.
CONTEXT_WORDS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "maximum number of tokens",
    "reduce the length",
)
MODEL_MISSING_WORDS = (
    "model_not_found",
    "does not exist",
    "not exist",
    "not found",
    "no such model",
    "unknown model",
    "invalid model",
)
SERVER_WORDS = ("server_error", "internal_error", "insufficient_system_resource", "overloaded")
OVERLOADED_WORDS = ("overloaded",)
QUOTA_WORDS = ("insufficient_quota",)
# DeepSeek's finish_reason when its inference system runs out of capacity mid-reply.
SERVER_FINISH_REASONS = frozenset({"insufficient_system_resource"})


class Failure(StrEnum):
    """One row of the taxonomy; its properties say what recovering from it means."""

    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    SERVER_ERROR = "server_error"
    OVERLOADED = "overloaded"
    CONNECTION = "connection"
    WAIT_TOO_LONG = "wait_too_long"
    CONTEXT_TOO_LONG = "context_too_long"
    MODEL_MISSING = "model_missing"
    AUTHENTICATION = "authentication"
    REFUSED = "refused"
    BAD_RESPONSE = "bad_response"

    @property
    def retried(self) -> bool:
        """Whether waiting and sending the same request again can help."""
        return self in _RETRIED

    @property
    def falls_back(self) -> bool:
        """Whether another model can take the request at once (without waiting for retries)."""
        return self in _FALLS_BACK_AT_ONCE

    @property
    def shown(self) -> str:
        """The kind in the words a console line uses."""
        return self.value.replace("_", " ")


_RETRIED = frozenset(
    {Failure.RATE_LIMITED, Failure.SERVER_ERROR, Failure.OVERLOADED, Failure.CONNECTION}
)
_FALLS_BACK_AT_ONCE = frozenset(
    {Failure.QUOTA_EXHAUSTED, Failure.OVERLOADED, Failure.WAIT_TOO_LONG, Failure.MODEL_MISSING}
)


class WaitTooLongError(ProviderError):
    """The provider asked to wait longer than this agent ever waits at once."""

    def __init__(self, error: ProviderError, asked: float, cap: float) -> None:
        super().__init__(
            f"{error} The provider asked to wait {asked:g} s before trying again "
            f"(Retry-After), longer than the {cap:g} s this agent waits at most: run again "
            f"in {_duration(asked)}, or set OPENAI_FALLBACK_MODEL to another model",
            error.status,
            kind=error.kind,
            retry_after=asked,
            body=error.body,
        )


def diagnose(error: ProviderError) -> Failure:
    """The row of the taxonomy an error belongs to."""
    if isinstance(error, WaitTooLongError):
        return Failure.WAIT_TOO_LONG
    said = _what_it_says(error)
    in_body = _error_object(error.body) if error.status is None else None
    if in_body is not None:  # an error inside a 200 body, or an error event in a stream
        return said_in_body(in_body)
    kind, status = error.kind, error.status
    if kind is ProviderErrorKind.RATE_LIMITED:
        return Failure.QUOTA_EXHAUSTED if _has(said, QUOTA_WORDS) else Failure.RATE_LIMITED
    if kind is ProviderErrorKind.SERVER:
        if _has(said, OVERLOADED_WORDS):
            return Failure.OVERLOADED
        retried = status is None or status in RETRIED_STATUSES
        return Failure.SERVER_ERROR if retried else Failure.REFUSED
    if kind is ProviderErrorKind.CONNECTION:
        return Failure.CONNECTION
    if kind is ProviderErrorKind.AUTHENTICATION:
        return Failure.AUTHENTICATION
    if kind is ProviderErrorKind.NOT_FOUND:
        return Failure.MODEL_MISSING
    if kind is ProviderErrorKind.BAD_REQUEST:
        if status in CONTEXT_STATUSES or _has(said, CONTEXT_WORDS):
            return Failure.CONTEXT_TOO_LONG
        if "model" in said and _has(said, MODEL_MISSING_WORDS):
            return Failure.MODEL_MISSING
        return Failure.REFUSED
    return Failure.BAD_RESPONSE


def summary(error: ProviderError) -> str:
    """One short line: the status, the row, and the provider's own message when it sent one."""
    failure = diagnose(error)
    what = f"HTTP {error.status} ({failure.shown})" if error.status else failure.shown
    retries = getattr(error, "retries", 0)  # a retried error says how often it was tried
    if retries:
        what += f" after {retries} {'retry' if retries == 1 else 'retries'}"
    in_body = _error_object(error.body)
    said = in_body.get("message") if in_body is not None else None
    return one_line(f"{what}: {said}" if said else what, 200)


def said_in_body(error: Mapping[str, Any]) -> Failure:
    """An error a provider put inside a 200 body or a stream: classified by what it says.

    A 5xx code, "overloaded" or DeepSeek's `insufficient_system_resource` is the
    server's trouble and worth another try; a 429 code is a rate limit; anything
    else is a response that cannot be used, and trying again would only repeat it.
    """
    said = json.dumps(error, ensure_ascii=False).lower()
    code = error.get("code", error.get("status"))
    number = code if isinstance(code, int) and not isinstance(code, bool) else None
    if isinstance(code, str) and code.isdigit():
        number = int(code)
    if _has(said, OVERLOADED_WORDS):
        return Failure.OVERLOADED
    if number == 429:
        return Failure.RATE_LIMITED
    if (number is not None and 500 <= number < 600) or _has(said, SERVER_WORDS):
        return Failure.SERVER_ERROR
    return Failure.BAD_RESPONSE


def error_in_body(body: Mapping[str, Any]) -> ProviderError | None:
    """The failure hidden in a successful (HTTP 200) body, or None when it is an answer.

    Two shapes: an `error` object where the choices should be, and a choice that
    finished for a reason that means the server gave up (DeepSeek's
    `insufficient_system_resource`). The error's kind is what the body says.
    """
    error = _error_object(body)
    if error is not None:
        failure = said_in_body(error)
        message = error.get("message") or json.dumps(error, ensure_ascii=False)
        return ProviderError(
            f"the provider answered HTTP 200 with an error in the body: "
            f"{one_line(str(message), 200)}",
            kind=_KIND_OF[failure],
            body=json.dumps(body, ensure_ascii=False),
        )
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    reason = first.get("finish_reason") if isinstance(first, Mapping) else None
    if reason in SERVER_FINISH_REASONS:
        return ProviderError(
            f"the provider stopped the reply with finish_reason {reason!r}: its servers "
            "ran out of capacity part-way",
            kind=ProviderErrorKind.SERVER,
            body=json.dumps(body, ensure_ascii=False),
        )
    return None


_KIND_OF = {
    Failure.OVERLOADED: ProviderErrorKind.SERVER,
    Failure.RATE_LIMITED: ProviderErrorKind.RATE_LIMITED,
    Failure.SERVER_ERROR: ProviderErrorKind.SERVER,
    Failure.BAD_RESPONSE: ProviderErrorKind.BAD_RESPONSE,
}


def _error_object(body: object) -> Mapping[str, Any] | None:
    """The `error` a body carries: `{"error": {...}}`, `{"error": "text"}`, or vLLM's
    `{"object": "error", ...}`; None when there is none (or the body is not JSON)."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, Mapping):
        return None
    error = body.get("error")
    if isinstance(error, Mapping) and error:
        return error
    if isinstance(error, str) and error:
        return {"message": error}
    if body.get("object") == "error":
        return body
    return None


def _what_it_says(error: ProviderError) -> str:
    """The provider's own words: the body it sent; only without one, the error's message
    (which for an HTTP error is our own sentence, and says "overloaded" for every 5xx)."""
    return (error.body if error.body is not None else str(error)).lower()


def _has(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

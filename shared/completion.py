"""One round trip in Chat Completions JSON: the request we send, the reply we accept.

Requests and responses are kept as plain JSON dicts at this boundary, for two
reasons: `--trace` can show the reader exactly what went over the wire, and
the scripted model used in tests and `--demo` speaks the same JSON as a real
provider, so both go through the same parser below.

The parser is where provider differences are absorbed (see the chapter text,
"格式差异"): tool calls with finish_reason "stop", `content: ""` beside tool
calls, arguments sent as an object or as an empty string, extra fields,
empty or repeated tool-call ids, and 200 responses that carry an error. A
lone surrogate (JSON's `"\\ud800"`, which UTF-8 cannot encode) anywhere in
the message becomes U+FFFD here (shared/text.py), before anything enters the
history: in an id or a tool name too, where the cleaned name is simply one no
tool has, answered as any unknown name is. What a provider needs back is
kept: `reasoning_content` beside tool calls, and a tool call's
`extra_content`. So is what the provider counted (`usage`), wherever it puts
it: the size of a request is measured there, not guessed.

A model client may also report its reply while it arrives (a reply that comes
in pieces): such a client is a `ReportingModelClient`, and `ask_model` hands it
the exchange's observer.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from shared.contract import ContractChecker
from shared.errors import (
    ContentFilterError,
    OutputTruncatedError,
    ProviderError,
    UnsupportedFinishReasonError,
    one_line,
)
from shared.messages import AssistantMessage, FunctionCall, Message, ToolCall
from shared.text import clean_json, clean_text
from shared.tools import ToolSnapshot

KNOWN_FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter")


class ModelClient(Protocol):
    """Anything that turns a Chat Completions request body into a response body.

    The name and label are only read, so a client may compute them: a client
    that wraps another names the model it sends to now.
    """

    @property
    def name(self) -> str:
        """The model id written into the request."""
        ...

    @property
    def label(self) -> str:
        """How the console names it; a scripted model says so here."""
        ...

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]: ...


class ExchangeObserver(Protocol):
    """Watches one request and its answer: the console's spinner and `--trace` are observers.

    The exchange only reports what happens; how (or whether) it is shown is the
    observer's business, which is what lets a reply that arrives in pieces feed
    the same observer.
    """

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None: ...
    def waiting(self, what: str) -> AbstractContextManager[None]: ...
    def response_received(self, title: str, body: Mapping[str, Any]) -> None: ...
    def response_failed(self, title: str, error: ProviderError) -> None: ...
    def said_while_calling(self, text: str) -> None: ...


@runtime_checkable
class ReportingModelClient(ModelClient, Protocol):
    """A model client that tells the exchange's observer what arrives, while it arrives.

    `ask_model` adds `request_fields` to the request before it is reported, so
    the observer (and `--trace`) sees exactly what is sent, and then calls
    `complete_reporting` instead of `complete`. What comes back is the same
    response body `complete` returns, so the same parser reads it.
    """

    @property
    def request_fields(self) -> Mapping[str, Any]:
        """Added to every request this client is sent."""
        ...

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver
    ) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Usage:
    """What the provider counted for one exchange, when it says (the body's `usage`).

    `prompt_tokens` is the size of the request as the model saw it: the one
    measurement of the context there is. Each field is None when not sent.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # of the prompt, served from the provider's prefix cache


@dataclass(frozen=True)
class ModelReply:
    message: AssistantMessage
    finish_reason: str | None
    usage: Usage | None = None  # None when the provider sent no usage


def ask_model(
    model: ModelClient,
    history: Sequence[Message],
    snapshot: ToolSnapshot,
    observer: ExchangeObserver,
    turn: int,
    contract: ContractChecker | None = None,
    *,
    purpose: str = "",
    fields: Mapping[str, Any] | None = None,
) -> ModelReply:
    """Check the contract, send history + tool schemas, parse what comes back.

    Pass the same `contract` every turn so it checks only what is new.
    `fields` are added to the request body (`tool_choice`, say). `purpose`
    names a request that is not the loop's next step: the trace titles and the
    spinner say it ("<purpose> request 3"), so the reader can tell it apart.
    """
    checked = (contract or ContractChecker()).check(history)
    request = build_request(model.name, checked.messages, snapshot)
    request.update(fields or {})
    request.update(client_fields(model))  # what the client adds (a bound, `stream`): traced too
    reporting = model if isinstance(model, ReportingModelClient) else None
    named = f"{purpose} " if purpose else ""
    observer.request_sent(f"{named}request {turn}", request)
    waiting = f"turn {turn}, {purpose}" if purpose else f"turn {turn}"
    try:
        with observer.waiting(f"等待模型 waiting for {model.label} ({waiting})"):
            if reporting is not None:
                body = reporting.complete_reporting(request, observer)
            else:
                body = model.complete(request)
    except ProviderError as error:
        observer.response_failed(f"{named}response {turn}", error)
        raise
    observer.response_received(f"{named}response {turn}", body)
    reply = parse_completion(body, taken_ids=checked.call_ids)
    if reply.message.tool_calls and reply.message.content:
        observer.said_while_calling(reply.message.content)
    return reply


def client_fields(model: ModelClient) -> Mapping[str, Any]:
    """The fields a client adds to every request it is sent (`max_tokens`, `stream`), if any."""
    fields = getattr(model, "request_fields", None)
    return fields if isinstance(fields, Mapping) else {}


def build_request(
    model_name: str, messages: list[dict[str, Any]], snapshot: ToolSnapshot
) -> dict[str, Any]:
    """The request body: the model id, the history in wire form, the snapshot's schemas."""
    request: dict[str, Any] = {"model": model_name, "messages": messages}
    if snapshot.names:
        request["tools"] = list(snapshot.schemas())
    return request


def check_finish_reason(reply: ModelReply) -> None:
    """Raise for the finish reasons the loop cannot continue from.

    "stop" and "tool_calls" both pass: whether the loop goes on is decided by
    the presence of tool calls, never by this field alone.
    """
    reason = reply.finish_reason
    if reason == "length":
        raise OutputTruncatedError()
    if reason == "content_filter":
        raise ContentFilterError()
    if reason not in KNOWN_FINISH_REASONS:
        raise UnsupportedFinishReasonError(reason)


def parse_completion(
    body: Mapping[str, Any], taken_ids: Collection[str] = frozenset()
) -> ModelReply:
    """Turn a response body into an assistant message, absorbing provider differences."""
    if not isinstance(body, Mapping):
        raise ProviderError(
            f"the provider sent a response that is not a JSON object: {body!r:.200}"
        )
    if body.get("error"):
        raise ProviderError(f"the provider returned an error: {_error_text(body['error'])}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ProviderError(
            "the provider's response has no choices (no answer at all); "
            f"body: {json.dumps(body, ensure_ascii=False)[:200]}"
        )
    choice = choices[0]
    raw = choice.get("message")
    if not isinstance(raw, Mapping):
        raise ProviderError("the provider's response has a choice without a message")
    raw = clean_json(raw)  # no lone surrogate gets past this line
    reason = choice.get("finish_reason")

    tool_calls = _parse_tool_calls(raw.get("tool_calls") or [], taken_ids)
    content = _text(raw.get("content"))
    if tool_calls and content == "":
        content = None  # "" beside tool calls means the same as null
    reasoning = raw.get("reasoning_content")
    message = AssistantMessage(
        content=content,
        tool_calls=tool_calls,
        reasoning_content=reasoning if tool_calls and isinstance(reasoning, str) else None,
    )
    usage = _usage(body.get("usage") or choice.get("usage"))  # Kimi puts it in the choice
    finish_reason = clean_text(reason) if isinstance(reason, str) else reason
    return ModelReply(message=message, finish_reason=finish_reason, usage=usage)


def _usage(raw: object) -> Usage | None:
    """The counts a provider sent; a count that is not a whole number is taken as not sent."""
    if not isinstance(raw, Mapping):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    usage = Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(cached),
    )
    return None if usage == Usage() else usage


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _parse_tool_calls(raw_calls: object, taken: Collection[str]) -> tuple[ToolCall, ...]:
    if not isinstance(raw_calls, list):
        raise ProviderError(f"the provider sent tool_calls that are not a list: {raw_calls!r:.200}")
    calls: list[ToolCall] = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, Mapping) else None
        if not isinstance(function, Mapping):
            raise ProviderError(f"the provider sent a tool call without a function: {raw!r:.200}")
        call_id = unique_call_id(str(raw.get("id") or ""), taken, {call.id for call in calls})
        extra = raw.get("extra_content")
        calls.append(
            ToolCall(
                id=call_id,
                function=FunctionCall(
                    name=str(function.get("name") or ""),
                    arguments=_arguments_string(function.get("arguments")),
                ),
                extra_content=dict(extra) if isinstance(extra, Mapping) and extra else None,
            )
        )
    return tuple(calls)


def _arguments_string(arguments: object) -> str:
    """Arguments as the JSON string the API expects back; kept byte-for-byte when already one."""
    if isinstance(arguments, str):
        return arguments if arguments.strip() else "{}"
    if arguments is None:
        return "{}"
    return json.dumps(arguments, ensure_ascii=False)  # an object, as some providers send


def unique_call_id(call_id: str, taken: Collection[str], this_message: Collection[str]) -> str:
    """Empty or repeated ids (seen from Gemini and Kimi) get a fresh one; others stay as sent.

    `taken`: the ids of the history so far; `this_message`: those of the calls before
    this one in its message. The fresh id is the old one with `_1`, `_2`, ... added.
    """
    if call_id and call_id not in taken and call_id not in this_message:
        return call_id
    base = call_id or "call"
    number = 1
    while f"{base}_{number}" in taken or f"{base}_{number}" in this_message:
        number += 1
    return f"{base}_{number}"


def _text(content: object) -> str | None:
    """Content as a string; a list of text parts (some providers) is joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def _error_text(error: object) -> str:
    if isinstance(error, Mapping):
        return one_line(str(error.get("message") or json.dumps(error, ensure_ascii=False)), 300)
    return one_line(str(error), 300)

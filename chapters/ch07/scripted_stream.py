"""A model that replays scripted streams: for tests, benchmarks and a streamed `--demo`.

Each scripted step is a list of chunks, exactly the JSON a provider streams,
and goes through the same assembler and the same observer calls as a real
stream (chapters/ch07/assembly.py). A step may hold an exception where a chunk
would be: it is raised when the stream reaches it, which is how a test cuts a
stream with Ctrl-C (`KeyboardInterrupt()`) or a dropped connection.

The builders below write chunks in OpenAI's shape; tests write the other
providers' shapes by hand, because the differences are the point.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from chapters.ch07.assembly import assemble
from shared.completion import ExchangeObserver
from shared.scripted import ScriptExhaustedError

StreamStep = Sequence[Mapping[str, Any] | BaseException]
STREAM_FIELDS: Mapping[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}


class ScriptedStreamingModel:
    def __init__(self, streams: Sequence[StreamStep], *, name: str = "scripted-model") -> None:
        self.streams = list(streams)
        self.name = name
        self.label = f"{name} (scripted stream, no network)"
        self.request_fields = STREAM_FIELDS
        self.requests: list[dict[str, Any]] = []  # deep copies, as each request was sent
        self.chunks_read = 0  # how far the streams were read, over all requests

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.complete_reporting({**request, **self.request_fields}, None)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        self.requests.append(copy.deepcopy(dict(request)))
        if len(self.requests) > len(self.streams):
            raise ScriptExhaustedError(
                f"the scripted model has {len(self.streams)} streams and was asked for more"
            )
        return assemble(self._replay(self.streams[len(self.requests) - 1]), observer)

    def _replay(self, step: StreamStep) -> Iterator[Mapping[str, Any]]:
        for item in step:
            if isinstance(item, BaseException):
                raise item
            self.chunks_read += 1
            yield item


def chunk(
    delta: Mapping[str, Any] | None = None,
    finish_reason: str | None = None,
    *,
    usage: Mapping[str, Any] | None = None,
    chunk_id: str = "chatcmpl-scripted",
    model: str = "scripted-model",
) -> dict[str, Any]:
    """One `chat.completion.chunk` in OpenAI's shape; `delta=None` with usage is a usage chunk."""
    body: dict[str, Any] = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = dict(usage)
    return body


def text_stream(*pieces: str, finish_reason: str = "stop") -> list[dict[str, Any]]:
    """A text reply in pieces, as OpenAI streams it: a role chunk, the pieces, the finish."""
    return [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": piece}) for piece in pieces),
        chunk({}, finish_reason),
    ]


def call_stream(
    call_id: str, name: str, *argument_pieces: str, finish_reason: str = "tool_calls"
) -> list[dict[str, Any]]:
    """One tool call with its arguments in pieces, as OpenAI streams it."""
    head = {"index": 0, "id": call_id, "type": "function"}
    return [
        chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**head, "function": {"name": name, "arguments": ""}}],
            }
        ),
        *(
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in argument_pieces
        ),
        chunk({}, finish_reason),
    ]

"""A model that replays scripted streams: for tests, benchmarks and a streamed `--demo`.

Each scripted step is a list of chunks, exactly the JSON a provider streams,
and goes through the same assembler and the same observer calls as a real
stream (chapters/ch07/assembly.py). A step may hold an exception where a chunk
would be: it is raised when the stream reaches it, which is how a test cuts a
stream with Ctrl-C (`KeyboardInterrupt()`) or a dropped connection.

`AgentStreams` serves several agents at once, a parent and the sub-agents it
starts, side by side too: each run has its own script, chosen by the prompt
the run's history starts with, so children that ask at the same time each get
their own replies in whatever order they ask.

The builders below write chunks in OpenAI's shape; tests write the other
providers' shapes by hand, because the differences are the point.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from chapters.ch07.assembly import assemble
from shared.completion import ExchangeObserver
from shared.scripted import ScriptExhaustedError, scripted_text

StreamStep = Sequence[Mapping[str, Any] | BaseException]
AgentStep = StreamStep | Callable[[Mapping[str, Any]], StreamStep]  # or made from the request
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


class AgentStreams:
    """Scripted streams for a family of agents, one script per run, safe to ask from threads.

    A request is answered from the script of the run whose first user message
    (the prompt, or a task's prompt) it carries. `stream=False` plays a server
    asked for the plain request: nothing is added to the request and nothing
    is reported while the reply arrives; the same chunks, assembled, are the reply.
    """

    def __init__(
        self,
        scripts: Mapping[str, Sequence[AgentStep]],
        *,
        name: str = "scripted-model",
        stream: bool = True,
    ) -> None:
        self.scripts = {prompt: list(steps) for prompt, steps in scripts.items()}
        self.used = dict.fromkeys(self.scripts, 0)
        self.name = name
        kind = "scripted stream" if stream else "scripted"
        self.label = f"{name} ({kind}, no network)"
        self.stream = stream
        self.request_fields: Mapping[str, Any] = STREAM_FIELDS if stream else {}
        self.requests: list[dict[str, Any]] = []  # deep copies, in the order they arrived
        self._lock = threading.Lock()

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.complete_reporting({**request, **self.request_fields}, None)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        prompt = _first_user(request)
        with self._lock:
            self.requests.append(copy.deepcopy(dict(request)))
            if prompt not in self.scripts:
                raise ScriptExhaustedError(f"no script for the run whose prompt is {prompt[:60]!r}")
            steps, done = self.scripts[prompt], self.used[prompt]
            if done == len(steps):
                raise ScriptExhaustedError(f"the script for {prompt[:40]!r} has {done} replies")
            self.used[prompt] += 1
        step = steps[done]
        chunks = step(request) if callable(step) else step
        return assemble(_replayed(chunks), observer if self.stream else None)

    def requests_of(self, prompt: str) -> list[dict[str, Any]]:
        """The requests of the run that started with `prompt`, in order."""
        with self._lock:
            return [r for r in self.requests if _first_user(r) == prompt]


def _first_user(request: Mapping[str, Any]) -> str:
    return next((m["content"] for m in request["messages"] if m["role"] == "user"), "")


def _replayed(step: StreamStep) -> Iterator[Mapping[str, Any]]:
    for item in step:
        if isinstance(item, BaseException):
            raise item
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


def calls_stream(
    *calls: tuple[str, str, str], text: str = "", finish_reason: str = "tool_calls"
) -> list[dict[str, Any]]:
    """Several tool calls `(id, name, arguments)` in one reply, as OpenAI streams them: each
    keyed by its index, the arguments in two pieces; `text` first, if any."""
    chunks = [chunk({"role": "assistant", "content": text or None})]
    for index, (call_id, name, arguments) in enumerate(calls):
        half = len(arguments) // 2
        head = {"index": index, "id": call_id, "type": "function"}
        chunks += [
            chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:half]}}]}),
            chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}),
        ]
    return [*chunks, chunk({}, finish_reason)]


# --- for a demo's replies, each made from the request it answers ------------------------------


def tool_call(number: int, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str, str]:
    """`(call id, tool, arguments as JSON)`, the call's id made from `number`: `calls_stream`'s."""
    return f"call_{number}", tool, json.dumps(arguments)


def said(text: str) -> list[dict[str, Any]]:
    """A scripted text reply (marked as scripted), streamed a few words at a time."""
    words = scripted_text(text).split(" ")
    pieces = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    return text_stream(*(piece if n == 0 else " " + piece for n, piece in enumerate(pieces)))


def call_result(request: Mapping[str, Any], call_id: str) -> str:
    """The content of the tool message in `request` that answers `call_id` ("" when none)."""
    return next(
        (str(m["content"]) for m in request["messages"] if m.get("tool_call_id") == call_id), ""
    )

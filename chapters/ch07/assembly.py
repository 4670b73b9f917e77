"""Chapter 7: a streamed reply, chunk by chunk, assembled into one assistant message.

A streamed reply is a sequence of `chat.completion.chunk` objects, each
carrying a small *delta* of the message. `StreamAssembler` adds them up and
hands back the body the provider would have sent without streaming, so the
one parser (shared/completion.py) and the one loop read a streamed reply
exactly as a plain one. The rules, each learnt from a real provider (the
chapter text's assembly table; the tests replay each provider's stream):

    tool-call deltas are keyed by their `index` value (any int, -1 included);
        with no `index`, by position inside that delta's `tool_calls` (Gemini);
        a delta at a used key with a different non-empty id is a new call
        (Ollama sends every call at index 0)
    an empty or null id, type or name on a continuation means "unchanged"
        (Qwen, vLLM, llama.cpp); `arguments` may be absent; none at all is `{}`
    chunks with `choices: []` carry no delta (a usage chunk, Azure's prompt
        filter results) and are skipped; usage is read wherever it is put,
        at the top (OpenAI) or inside the choice (Kimi)
    `reasoning_content` (DeepSeek) and a call's `extra_content` (Gemini's
        thought signature) are kept, so the parser can send them back
    an error chunk, `finish_reason: "error"`, a stream that ends without a
        finish reason, and a stream with neither text nor tool calls are
        failed turns: an exception, never an empty answer, and nothing of the
        stream reaches the history
    a chunk that cannot be read (not an object, `choices` that are not a
        list, a tool-call delta that is not an object) is a damaged stream,
        the same kind of failure as one cut before its finish
    given `max_chars`, the text, reasoning and arguments together may hold
        that many characters: past it the stream is cut (`ReplyLimitError`),
        whatever the provider meant to send

Whether the loop goes on is decided by the assembled tool calls
(`needs_follow_up`), never by `finish_reason`. Every piece is appended to a
list and joined once, so a chunk costs the same at the end of a 10,000-chunk
stream as at its start (scripts/bench_stream.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from shared.completion import ExchangeObserver
from shared.errors import (
    EmptyReplyError,
    ProviderError,
    ProviderErrorKind,
    ReplyLimitError,
    one_line,
)

# Finish reasons after which a reply without text or calls is not "empty" but cut off:
# the finish-reason step names those better than an empty-reply error would.
FINISHED_EARLY = ("length", "content_filter")


class BrokenStreamError(ProviderError):
    """The stream failed part-way: an error chunk, `finish_reason: "error"`, or no end."""

    def __init__(
        self,
        message: str,
        *,
        kind: ProviderErrorKind = ProviderErrorKind.BAD_RESPONSE,
        body: str | None = None,
    ) -> None:
        super().__init__(message, kind=kind, body=body)


def damaged(message: str) -> BrokenStreamError:
    """A stream with a part that cannot be read: cut there, as a dropped connection cuts it,
    so whoever retries a cut stream retries this one too."""
    return BrokenStreamError(message, kind=ProviderErrorKind.CONNECTION)


@runtime_checkable
class StreamObserver(ExchangeObserver, Protocol):
    """An exchange observer that also watches a streamed reply arrive, piece by piece."""

    def chunk_received(self, number: int, chunk: Mapping[str, Any]) -> None:
        """Each chunk as it arrived, numbered from 1 (for `--trace`)."""
        ...

    def reasoning_arrived(self, text: str) -> None:
        """A piece of the model's reasoning: shown, never part of the answer."""
        ...

    def text_arrived(self, text: str) -> None:
        """A piece of the message's text."""
        ...


@dataclass(frozen=True)
class Pieces:
    """What one chunk added that a person would want to see at once."""

    reasoning: str = ""
    text: str = ""


@dataclass
class _CallParts:
    """One tool call being assembled; `arguments` are pieces, joined once at the end."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    extra_content: dict[str, Any] = field(default_factory=dict)

    def add(self, delta: Mapping[str, Any]) -> int:
        """Take one delta; return how many characters of arguments it added."""
        self.id = self.id or _string(delta.get("id"))
        function = delta.get("function")
        added = ""
        if isinstance(function, Mapping):
            self.name = self.name or _string(function.get("name"))  # sent whole, once or again
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                added = arguments
            elif isinstance(arguments, Mapping):  # an object instead of JSON text
                added = json.dumps(arguments, ensure_ascii=False)
            if added:
                self.arguments.append(added)
        extra = delta.get("extra_content")
        if isinstance(extra, Mapping):
            self.extra_content.update(extra)
        return len(added)

    def wire(self) -> dict[str, Any]:
        arguments = "".join(self.arguments)
        call: dict[str, Any] = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments if arguments.strip() else "{}"},
        }
        if self.extra_content:
            call["extra_content"] = self.extra_content
        return call


class StreamAssembler:
    """Adds chunks up into one assistant message; `body()` is the non-streamed response."""

    def __init__(self, max_chars: int | None = None) -> None:
        self.chunks = 0
        self.max_chars = max_chars
        self.size = 0  # characters of text, reasoning and arguments so far
        self.finish_reason: str | None = None
        self.usage: Mapping[str, Any] | None = None
        self._id = ""
        self._model = ""
        self._text: list[str] = []
        self._reasoning: dict[str, list[str]] = {}  # "reasoning_content" or "reasoning"
        self._calls: list[_CallParts] = []  # in the order they first appeared
        self._by_key: dict[int, _CallParts] = {}

    @property
    def needs_follow_up(self) -> bool:
        """The loop goes on when calls were assembled, whatever `finish_reason` says."""
        return bool(self._calls)

    def add(self, chunk: object) -> Pieces:
        """Take one chunk; raise `BrokenStreamError` for an error chunk or an error finish."""
        if not isinstance(chunk, Mapping):
            raise damaged(
                f"the stream sent a chunk that is not an object: {chunk!r:.200}; "
                "nothing of the reply was kept. Run again"
            )
        self.chunks += 1
        if chunk.get("error") or chunk.get("object") == "error":
            raise _error_chunk(chunk, self.chunks)
        choices = chunk.get("choices")
        if choices is not None and not isinstance(choices, list):
            raise damaged(
                f"the stream sent a chunk with choices that are not a list ({choices!r:.100}) "
                f"in chunk {self.chunks}; nothing of the reply was kept. Run again"
            )
        self._id = self._id or _string(chunk.get("id"))
        self._model = self._model or _string(chunk.get("model"))
        self._read_usage(chunk.get("usage"))
        reasoning, text = [], []
        for choice in choices or ():  # `choices: []` adds nothing
            if not isinstance(choice, Mapping) or choice.get("index", 0) not in (0, None):
                continue  # only the first choice is asked for
            self._read_usage(choice.get("usage"))
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                reasoning.append(self._add_reasoning(delta))
                text.append(self._add_text(delta.get("content")))
                self._add_calls(delta.get("tool_calls"))
            reason = choice.get("finish_reason")
            if reason == "error":
                raise _error_chunk(chunk, self.chunks)
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        if self.max_chars is not None and self.size > self.max_chars:
            raise ReplyLimitError.too_long(self.max_chars)
        return Pieces(reasoning="".join(reasoning), text="".join(text))

    def body(self) -> dict[str, Any]:
        """The reply as a plain Chat Completions response; a failed turn raises instead."""
        if self.finish_reason is None:
            raise BrokenStreamError(
                f"the stream ended after {self.chunks} chunks without a finish_reason, so the "
                "reply may be cut off; nothing of it was kept. Run again "
                "(--trace shows the chunks)",
                kind=ProviderErrorKind.CONNECTION,
            )
        text = "".join(self._text)
        if not self._calls and not text.strip() and self.finish_reason not in FINISHED_EARLY:
            raise EmptyReplyError()
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if self._calls:
            message["tool_calls"] = [call.wire() for call in self._calls]
        for name, pieces in self._reasoning.items():
            message[name] = "".join(pieces)
        body: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion",
            "model": self._model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.usage is not None:
            body["usage"] = dict(self.usage)
        return body

    def _read_usage(self, usage: object) -> None:
        if isinstance(usage, Mapping) and usage:
            self.usage = usage  # the newest wins: some providers send a running total

    def _add_reasoning(self, delta: Mapping[str, Any]) -> str:
        shown = []
        for name in ("reasoning_content", "reasoning"):  # DeepSeek's name; OpenRouter's
            piece = delta.get(name)
            if isinstance(piece, str) and piece:
                self._reasoning.setdefault(name, []).append(piece)
                self.size += len(piece)
                shown.append(piece)
        return "".join(shown)

    def _add_text(self, content: object) -> str:
        if isinstance(content, list):  # text parts, as some providers send them
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if not isinstance(content, str) or not content:
            return ""
        self._text.append(content)
        self.size += len(content)
        return content

    def _add_calls(self, deltas: object) -> None:
        if not isinstance(deltas, list):
            return
        for position, delta in enumerate(deltas):
            if not isinstance(delta, Mapping):
                raise damaged(
                    f"the stream sent a tool-call delta that is not an object: {delta!r:.200}; "
                    "nothing of the reply was kept. Run again"
                )
            index = delta.get("index")
            key = index if isinstance(index, int) and not isinstance(index, bool) else position
            call_id = _string(delta.get("id"))
            parts = self._by_key.get(key)
            if parts is None or (call_id and parts.id and call_id != parts.id):
                parts = _CallParts()  # a new call, even at a key already used
                self._by_key[key] = parts
                self._calls.append(parts)
                self.size += 1 + len(call_id)  # calls without end are a reply without end
            self.size += parts.add(delta)


def assemble(
    chunks: Iterable[object],
    observer: ExchangeObserver | None = None,
    *,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Read a whole stream, telling a `StreamObserver` what arrives; return the response body.

    Whatever stops the stream part-way (a failed turn, the size cap `max_chars`,
    Ctrl-C) leaves with its exception: the caller gets no message at all, so
    none can enter a history.
    """
    watcher = observer if isinstance(observer, StreamObserver) else None
    assembler = StreamAssembler(max_chars)
    try:
        for chunk in chunks:
            if watcher is not None and isinstance(chunk, Mapping):
                watcher.chunk_received(assembler.chunks + 1, chunk)
            pieces = assembler.add(chunk)
            if watcher is not None:
                if pieces.reasoning:
                    watcher.reasoning_arrived(pieces.reasoning)
                if pieces.text:
                    watcher.text_arrived(pieces.text)
    finally:  # a stream left early is closed now, not when its exception is forgotten
        close = getattr(chunks, "close", None)
        if callable(close):
            close()
    return assembler.body()


def _error_chunk(chunk: Mapping[str, Any], number: int) -> BrokenStreamError:
    error = chunk.get("error")
    said = error.get("message") if isinstance(error, Mapping) else error
    said = said or chunk.get("message") or "no message"
    code = error.get("code") if isinstance(error, Mapping) else None
    kind = ProviderErrorKind.RATE_LIMITED if code == 429 else ProviderErrorKind.SERVER
    return BrokenStreamError(
        f"the provider reported an error in chunk {number} of the stream: "
        f"{one_line(str(said), 200)}; nothing of the reply was kept. Run again",
        kind=kind,
        body=json.dumps(chunk, ensure_ascii=False),
    )


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""

"""Chapter 7's real model: the same endpoint as chapter 1's, asked to stream its reply.

It is a `ReportingModelClient` (shared/completion.py): `ask_model` adds
`request_fields` (`stream: true`, and `stream_options.include_usage` unless
switched off, for providers that refuse it) to the request before the trace
shows it, and hands this client the exchange's observer. The client reads
the server-sent events through the `openai` SDK, tells the observer about each
chunk as it arrives, and returns the assembled reply as the plain response
body (chapters/ch07/assembly.py): from there on, the one parser and the one
loop see no difference.

Why the SDK's `post` with `cast_to=object` rather than
`chat.completions.create(stream=True)`: the SDK still does the connection, the
key, the SSE framing (comments such as `: OPENROUTER PROCESSING` are skipped
there) and the HTTP errors, but each chunk arrives as the JSON the provider
sent, not as a typed object rebuilt from it. `--trace` shows what arrived, and
the assembler sees the quirks it has to absorb (a missing `index`, an `id` of
"", an object for `arguments`), exactly as they were.

Everything that ends a stream early leaves the stream closed: a failed turn,
a broken connection, and Ctrl-C, which goes on up at once (exit 130).

A stream is bounded like a plain reply (shared/reply_bound.py): its bytes pass
the deadline check on their way into the SDK's SSE decoder, so keep-alive
comments, which the decoder swallows, cannot keep it open for ever; what it
carries (text, reasoning, arguments) is counted by the assembler against the
size cap. What the SDK cannot read (a `data:` line nested too deeply for
`json.loads`) is a broken stream; a web page where the stream should be is
what chapter 1 calls it, a body that is not JSON: check OPENAI_BASE_URL.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from chapters.ch07.assembly import BrokenStreamError, assemble, damaged
from shared.completion import ExchangeObserver
from shared.config import Settings
from shared.errors import ProviderErrorKind, one_line
from shared.openai_client import REQUEST_TIMEOUT_SECONDS, OpenAIChatModel
from shared.reply_bound import ReplyBound

if TYPE_CHECKING:
    from openai._streaming import ServerSentEvent, SSEBytesDecoder

COMPLETIONS_PATH = "/chat/completions"


class StreamingChatModel(OpenAIChatModel):
    """`complete_reporting` streams; `complete` streams too, with nobody watching."""

    def __init__(
        self,
        settings: Settings,
        *,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
        include_usage: bool = True,
    ) -> None:
        super().__init__(settings, timeout=timeout)
        self.include_usage = include_usage

    @property
    def request_fields(self) -> Mapping[str, Any]:
        """The plain client's fields (its bound on the reply), plus asking for a stream."""
        streamed = {"stream": True, "stream_options": {"include_usage": True}}
        return {**super().request_fields, **(streamed if self.include_usage else {"stream": True})}

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.complete_reporting({**request, **self.request_fields}, None)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        bound = self.reply_bound()
        return assemble(self.chunks(request, bound), observer, max_chars=bound.chars)

    def chunks(self, request: Mapping[str, Any], bound: ReplyBound) -> Iterator[object]:
        """Each chunk's JSON as it arrives, within `bound`'s deadline; the stream is closed
        however reading ends."""
        import openai

        client = self._client or self._connect()
        try:
            stream = client.post(
                COMPLETIONS_PATH,
                body=dict(request),
                cast_to=object,
                stream=True,
                stream_cls=openai.Stream[object],
            )
        except (openai.APIStatusError, openai.APIConnectionError) as error:
            raise self.provider_error(error) from None
        with stream:
            content_type = _media_type(stream.response.headers.get("content-type", ""))
            if content_type == "application/json":  # the stream was ignored: one whole reply
                whole = self.read_body(bound.read(stream.response.iter_bytes()))
                yield _whole_reply_as_chunk(whole)
                return
            if content_type == "text/html":  # a web page, not an API
                page = self.read_body(_head(bound.read(stream.response.iter_bytes())))
                raise self.not_json_error(page.decode("utf-8", errors="replace"))
            # The SDK decodes the events from the bytes it reads; they pass the deadline first.
            # `_decoder` is the SDK's own (openai<4 is pinned): if it moves, the tests of an
            # endless stream of comments fail instead of a run hanging.
            stream._decoder = _Bounded(stream._decoder, bound)
            try:
                yield from stream
            except (openai.APIStatusError, openai.APIConnectionError) as error:
                raise self.provider_error(error) from None
            except openai.APIError as error:  # the SDK raises for a chunk with an `error`
                raise BrokenStreamError(
                    "the provider reported an error in the middle of the stream: "
                    f"{one_line(error.message, 200)}; nothing of the reply was kept. Run again",
                    kind=ProviderErrorKind.SERVER,
                    body=json.dumps(error.body, ensure_ascii=False),
                ) from None
            except ValueError as error:  # a `data:` line that is not JSON
                raise damaged(
                    f"the provider sent a stream event that is not JSON ({error}); "
                    "nothing of the reply was kept. Check "
                    f"{self.settings.setting_name('OPENAI_BASE_URL')} and run again",
                ) from None
            except RecursionError:  # valid JSON, nested deeper than `json.loads` goes
                raise damaged(
                    "the provider sent a stream event nested too deeply to read; "
                    "nothing of the reply was kept. Run again",
                ) from None


class _Bounded:
    """The SDK's SSE decoder, reading its bytes through a reply's deadline."""

    def __init__(self, decoder: SSEBytesDecoder, bound: ReplyBound) -> None:
        self.decoder = decoder
        self.bound = bound

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[ServerSentEvent]:
        return self.decoder.iter_bytes(self.bound.read(iterator, sized=False))

    def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        raise NotImplementedError("this client reads streams synchronously")


PAGE_SHOWN = 2_000  # bytes of a web page read, to show in the error: not the whole page


def _head(pieces: Iterator[bytes], limit: int = PAGE_SHOWN) -> Iterator[bytes]:
    """The first `limit` bytes of `pieces`, and no more read."""
    read = 0
    for piece in pieces:
        yield piece[: limit - read]
        read += len(piece)
        if read >= limit:
            return


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _whole_reply_as_chunk(raw: bytes) -> dict[str, Any]:
    """A server that ignored `stream: true` sent one plain response: read it as one chunk.

    The message becomes the delta, so the assembler's rules (and its errors)
    apply to it as to any stream.
    """
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise BrokenStreamError(
            f"the provider answered a streamed request with a body that is not JSON: {raw[:200]!r}",
            body=raw.decode("utf-8", "replace"),
        ) from None
    if not isinstance(body, dict):
        raise BrokenStreamError(
            f"the provider answered a streamed request with JSON that is not an object: "
            f"{body!r:.200}"
        )
    chunk = dict(body)
    chunk["choices"] = [
        {**choice, "delta": choice.get("message") or {}}
        for choice in body.get("choices") or ()
        if isinstance(choice, dict)
    ]
    return chunk

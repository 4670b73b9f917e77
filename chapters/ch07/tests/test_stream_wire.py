"""The streaming client through the real `openai` SDK and real HTTP, against a local SSE server.

Every provider stream of provider_streams.py goes over the wire here: the SDK
frames the events (and skips the comments), and what reaches the assembler
must be exactly the JSON that was sent. Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import (
    SSE_DONE,
    ChatServer,
    Reply,
    StreamReply,
    openai_error,
    sse_data,
)
from chapters.ch07.assembly import BrokenStreamError, assemble
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests import provider_streams as streams
from chapters.ch07.tests.provider_streams import ProviderStream
from chapters.ch07.tests.support import err_text, recording_console, streaming_model
from shared.completion import ModelReply, ask_model, parse_completion
from shared.errors import EmptyReplyError, ProviderError, ProviderErrorKind
from shared.messages import Message, SystemMessage, UserMessage
from shared.openai_client import OpenAIChatModel
from shared.tools import ToolRegistry

HISTORY: list[Message] = [SystemMessage(content="You are a test agent."), UserMessage(content="hi")]


class ChunkRecorder(StreamingConsole):
    """A console that also keeps every chunk it was shown."""

    def __init__(self) -> None:
        super().__init__(fancy=False)
        self.chunks: list[Mapping[str, Any]] = []

    def chunk_received(self, number: int, chunk: Mapping[str, Any]) -> None:
        self.chunks.append(chunk)


def ask_over_wire(
    base_url: str, console: StreamingConsole | None = None, *, include_usage: bool = True
) -> ModelReply:
    model = streaming_model(base_url, include_usage=include_usage)
    observer = console or recording_console()
    return ask_model(model, HISTORY, ToolRegistry().snapshot(), observer, 1)


@pytest.mark.parametrize("stream", streams.EVERY_PROVIDER, ids=lambda s: s.provider)
def test_each_provider_stream_arrives_through_the_sdk_exactly_as_sent(
    stream: ProviderStream,
) -> None:
    recorder = ChunkRecorder()
    with ChatServer([StreamReply(stream.sse())]) as server:
        reply = ask_over_wire(server.base_url, recorder)

    assert recorder.chunks == stream.chunks()  # comments skipped, nothing else changed
    assert reply == parse_completion(assemble(stream.chunks()))
    assert len(server.completion_requests()) == 1


def test_the_request_asks_for_a_stream_and_for_usage_in_it() -> None:
    with ChatServer([StreamReply(streams.OPENROUTER.sse())]) as server:
        ask_over_wire(server.base_url)
    [request] = server.completion_requests()
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["model"] == "test-model"
    assert request.headers["authorization"] == "Bearer test-key"


def test_asking_for_usage_can_be_switched_off() -> None:
    """For providers that refuse `stream_options`."""
    with ChatServer([StreamReply(streams.OPENROUTER.sse())]) as server:
        ask_over_wire(server.base_url, include_usage=False)
    [request] = server.completion_requests()
    assert request.body["stream"] is True
    assert "stream_options" not in request.body


def test_sse_comments_never_reach_the_answer() -> None:
    with ChatServer([StreamReply(streams.OPENROUTER.sse())]) as server:
        reply = ask_over_wire(server.base_url)
    assert reply.message.content == "It is 42."


@pytest.mark.parametrize(
    ("stream", "said"),
    [
        (streams.OPENAI_ERROR, "The server had an error while processing your request"),
        (streams.OPENROUTER_ERROR, "Provider disconnected unexpectedly"),
    ],
    ids=lambda s: s.provider if isinstance(s, ProviderStream) else "",
)
def test_an_error_event_mid_stream_is_one_line_naming_what_the_provider_said(
    stream: ProviderStream, said: str
) -> None:
    with (
        ChatServer([StreamReply(stream.sse())]) as server,
        pytest.raises(BrokenStreamError) as caught,
    ):
        ask_over_wire(server.base_url)
    message = str(caught.value)
    assert said in message
    assert "middle of the stream" in message
    assert "\n" not in message
    assert caught.value.kind is ProviderErrorKind.SERVER


def test_a_connection_closed_before_the_finish_is_a_failed_turn() -> None:
    with (
        ChatServer([StreamReply(streams.CUT_OFF.sse())]) as server,
        pytest.raises(BrokenStreamError) as caught,
    ):
        ask_over_wire(server.base_url)
    assert "without a finish_reason" in str(caught.value)


def test_a_stream_that_says_nothing_is_an_empty_reply() -> None:
    with (
        ChatServer([StreamReply(streams.NOTHING_SAID.sse())]) as server,
        pytest.raises(EmptyReplyError),
    ):
        ask_over_wire(server.base_url)


def test_an_event_that_is_not_json_is_a_failed_turn() -> None:
    events = [sse_data(streams.OPENROUTER.chunks()[0]), sse_data("<html>502 Bad Gateway</html>")]
    with (
        ChatServer([StreamReply(events)]) as server,
        pytest.raises(BrokenStreamError) as caught,
    ):
        ask_over_wire(server.base_url)
    assert "not JSON" in str(caught.value)


def test_an_http_error_on_a_streamed_request_is_the_usual_provider_error() -> None:
    reply = Reply(429, openai_error("Rate limit reached"), {"retry-after": "7"})
    with ChatServer([reply]) as server, pytest.raises(ProviderError) as caught:
        ask_over_wire(server.base_url)
    assert str(caught.value).startswith("HTTP 429:")
    assert "Rate limit reached" in str(caught.value)
    assert caught.value.kind is ProviderErrorKind.RATE_LIMITED
    assert caught.value.retry_after == 7.0
    assert len(server.requests) == 1  # the SDK's own retries are off


def test_a_server_that_ignores_stream_true_is_read_as_one_reply() -> None:
    plain = {
        "id": "chatcmpl-plain",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Whole."},
                     "finish_reason": "stop"}],
    }  # fmt: skip
    console = recording_console()
    with ChatServer([(200, plain)]) as server:
        reply = ask_over_wire(server.base_url, console)
    assert reply.message.content == "Whole."
    assert "Whole." in err_text(console)  # shown like a stream of one piece


def test_ctrl_c_mid_stream_stops_reading_at_once() -> None:
    """SIGINT arrives while the server still holds the stream open: no waiting for its end."""
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs POSIX signals")
    main = threading.get_ident()
    release = threading.Event()
    held = threading.Event()  # set once the server stops holding the stream open

    def before_event(number: int) -> None:
        if number == 2:  # two events are out; interrupt, then hold the stream open
            signal.pthread_kill(main, signal.SIGINT)
            release.wait(10)
            held.set()

    endless = [sse_data(c) for c in streams.CUT_OFF.chunks()] * 50
    recorder = ChunkRecorder()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ChatServer([StreamReply(endless, before_event=before_event)]) as server:
            try:
                with pytest.raises(KeyboardInterrupt):
                    ask_over_wire(server.base_url, recorder)
                assert not held.is_set()  # stopped while the stream was still open
            finally:
                release.set()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(recorder.chunks) <= 2


DEEP = "[" * 100_000 + "]" * 100_000  # valid JSON that json.loads cannot read (RecursionError)


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (sse_data({"id": "chatcmpl-1", "choices": 5}), "choices that are not a list"),
        (sse_data('{"choices": ' + DEEP + "}"), "nested too deeply"),
    ],
    ids=["choices-5", "nested-100000-deep"],
)
def test_a_chunk_that_cannot_be_read_is_a_broken_stream_like_a_cut_one(
    event: str, said: str
) -> None:
    """One line, no traceback, and the kind of a cut stream: whoever retries may send again."""
    events = [sse_data(streams.OPENROUTER.chunks()[0]), event, SSE_DONE]
    with (
        ChatServer([StreamReply(events)]) as server,
        pytest.raises(BrokenStreamError) as caught,
    ):
        ask_over_wire(server.base_url)
    message = str(caught.value)
    assert said in message
    assert "nothing of the reply was kept" in message
    assert "\n" not in message
    assert caught.value.kind is ProviderErrorKind.CONNECTION


def test_a_web_page_instead_of_a_stream_names_the_base_url_as_a_plain_request_does() -> None:
    page = Reply(200, "<html><body>Welcome to nginx!</body></html>", {"Content-Type": "text/html"})
    with ChatServer([page, page]) as server:
        with pytest.raises(ProviderError) as streamed:
            ask_over_wire(server.base_url)
        with pytest.raises(ProviderError) as plain:
            OpenAIChatModel(streaming_model(server.base_url).settings).complete(
                {"model": "test-model", "messages": []}
            )
    assert str(streamed.value) == str(plain.value)  # the same diagnosis, word for word
    assert "Check OPENAI_BASE_URL" in str(streamed.value)
    assert "Welcome to nginx" in str(streamed.value)
    assert streamed.value.kind is ProviderErrorKind.BAD_RESPONSE  # not worth sending again
    assert not isinstance(streamed.value, BrokenStreamError)

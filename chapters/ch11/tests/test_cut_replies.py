"""A reply cut at its limit, or a stream that cannot be read, is retried like a cut stream.

Chapter 7's client cuts a reply that goes past `OPENAI_MAX_REPLY_SECONDS` or
`OPENAI_MAX_REPLY_CHARS`, and calls a chunk it cannot read (choices that are
not a list, JSON nested too deeply) a broken stream; chapter 11's taxonomy
puts all of them in the `connection` row, beside a stream cut before its
finish: sent again after a backoff, at most `max_retries` times. A web page
instead of a stream is not retried: it is OPENAI_BASE_URL, not bad luck.
Over real HTTP, on a clock that never sleeps.
"""

from __future__ import annotations

import pytest

from chapters.ch01.tests.chat_server import (
    SSE_DONE,
    ChatServer,
    Reply,
    ScriptedReply,
    StreamReply,
    endless,
    sse_comment,
    sse_data,
)
from chapters.ch07.streaming import StreamingChatModel
from chapters.ch07.tests import provider_streams as streams
from chapters.ch11.failures import Failure, diagnose
from chapters.ch11.retry import RetryingModel
from chapters.ch11.tests.support import FakeClock, ask, recording_console
from shared.config import Settings
from shared.errors import ProviderError

TEXT = sse_data(streams.OPENROUTER.chunks()[0])
FOR_EVER = sse_data({"choices": [{"index": 0, "delta": {"content": "again and "}}]})


def asked(replies: list[ScriptedReply], **limits: str) -> tuple[str | None, Failure | None, int]:
    """One request through `RetryingModel` around chapter 7's client: the answer, else the
    row of the error that ended it, and how many requests the server saw."""
    clock = FakeClock()
    with ChatServer(replies) as server:
        settings = Settings.model_validate(
            {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k",
             "OPENAI_MODEL": "test-model", **limits}
        )  # fmt: skip
        model = RetryingModel(
            StreamingChatModel(settings, timeout=10.0), clock=clock, draw=lambda: 0.0
        )
        try:
            reply = ask(model, recording_console(clock=clock))
        except ProviderError as error:
            return None, diagnose(error), len(server.completion_requests())
        return reply.message.content, None, len(server.completion_requests())


@pytest.mark.parametrize(
    ("cut", "limits"),
    [
        (endless(TEXT, FOR_EVER), {"OPENAI_MAX_REPLY_CHARS": "2000"}),
        (endless(sse_comment("keep-alive")), {"OPENAI_MAX_REPLY_SECONDS": "0.2"}),
        (StreamReply([TEXT, sse_data({"choices": 5}), SSE_DONE]), {}),
        (StreamReply([TEXT, sse_data("[" * 100_000 + "]" * 100_000), SSE_DONE]), {}),
    ],
    ids=["past-the-size-cap", "past-the-deadline", "choices-5", "nested-too-deeply"],
)
def test_a_reply_cut_or_unreadable_is_sent_again(cut: StreamReply, limits: dict[str, str]) -> None:
    answer, failure, requests = asked([cut, StreamReply(streams.OPENROUTER.sse())], **limits)
    assert (answer, failure, requests) == ("It is 42.", None, 2)


def test_a_web_page_instead_of_a_stream_is_not_sent_again() -> None:
    page = Reply(200, "<html><body>Welcome to nginx!</body></html>", {"Content-Type": "text/html"})
    answer, failure, requests = asked([page, StreamReply(streams.OPENROUTER.sse())])
    assert (answer, failure, requests) == (None, Failure.BAD_RESPONSE, 1)

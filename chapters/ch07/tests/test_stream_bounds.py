"""A streamed reply is bounded in time and in size, over the real `openai` SDK and real HTTP.

A server that never ends its stream (text, reasoning or arguments for ever,
keep-alive comments for ever, chunks that add nothing) used to hang the run
while memory grew: every chunk reset the read timeout. Now the reply is cut at
`OPENAI_MAX_REPLY_CHARS` characters (its text, reasoning and arguments) or at
`OPENAI_MAX_REPLY_SECONDS` of wall-clock time, whichever comes first, as one
line naming the limit; nothing of it reaches the history. The servers here
stream as fast as the client reads and the limits are small: no test sleeps.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer, endless, sse_comment, sse_data
from chapters.ch01.tests.cli_support import model_env
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import chunk
from chapters.ch07.tests.support import recording_console, streaming_model
from shared.completion import ask_model
from shared.errors import ProviderErrorKind, ReplyLimitError
from shared.messages import Message, SystemMessage, UserMessage
from shared.scripted import response
from shared.tools import ToolRegistry

HISTORY: list[Message] = [SystemMessage(content="You are a test agent."), UserMessage(content="hi")]
READ_TIMEOUT = 10.0  # the test client's per-read timeout: a test must end well before it
ROLE = sse_data(chunk({"role": "assistant", "content": ""}))
HEAD = {"index": 0, "id": "c1", "function": {"name": "shell", "arguments": ""}}
CALL = sse_data(chunk({"tool_calls": [HEAD]}))


def ask(base_url: str, **settings: str) -> None:
    model = streaming_model(base_url, include_usage=True, **settings)
    ask_model(model, HISTORY, ToolRegistry().snapshot(), recording_console(), 1)


def piece(delta: dict[str, Any]) -> str:
    return sse_data(chunk(delta))


@pytest.mark.parametrize(
    "events",
    [
        (ROLE, piece({"content": "All work and no play. "})),
        (ROLE, piece({"reasoning_content": "Let me think again. "})),
        (CALL, piece({"tool_calls": [{"index": 0, "function": {"arguments": '"x": 1, '}}]})),
    ],
    ids=["text", "reasoning", "arguments"],
)
def test_a_stream_that_never_ends_is_cut_at_the_size_cap(events: tuple[str, str]) -> None:
    first, repeated = events
    with ChatServer([endless(first, repeated)]) as server, pytest.raises(ReplyLimitError) as caught:
        ask(server.base_url, OPENAI_MAX_REPLY_CHARS="3000")
    message = str(caught.value)
    assert "OPENAI_MAX_REPLY_CHARS=3000" in message
    assert "\n" not in message
    assert caught.value.kind is ProviderErrorKind.CONNECTION  # cut, as a dropped stream is


@pytest.mark.parametrize(
    "events",
    [(sse_comment("keep-alive"),), (ROLE, piece({}))],
    ids=["keep-alive-comments", "chunks-that-add-nothing"],
)
def test_a_stream_that_never_ends_is_cut_at_the_deadline(events: tuple[str, ...]) -> None:
    started = time.monotonic()
    with ChatServer([endless(*events)]) as server, pytest.raises(ReplyLimitError) as caught:
        ask(server.base_url, OPENAI_MAX_REPLY_SECONDS="0.3")
    took = time.monotonic() - started
    assert "OPENAI_MAX_REPLY_SECONDS=0.3" in str(caught.value)
    assert 0.3 <= took < READ_TIMEOUT / 2


def test_a_whole_reply_sent_instead_of_a_stream_is_bounded_too() -> None:
    with (
        ChatServer([(200, response("x" * 200_000))]) as server,
        pytest.raises(ReplyLimitError) as caught,
    ):
        ask(server.base_url, OPENAI_MAX_REPLY_CHARS="5000")
    assert "OPENAI_MAX_REPLY_CHARS=5000" in str(caught.value)


@pytest.mark.usefixtures("isolated")
def test_a_stream_cut_at_a_limit_ends_the_run_with_one_line_naming_it() -> None:
    with ChatServer([endless(ROLE, piece({"content": "more "}))]) as server:
        result = tutorial(
            "run", "--chapter", "7", "--prompt", "hi",
            env={**model_env(server), "OPENAI_MAX_REPLY_CHARS": "2000"},
        )  # fmt: skip
    assert result.exit_code == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout == ""  # no answer: nothing of the cut reply is kept
    last = result.stderr.splitlines()[-1]
    assert last.startswith("ReplyLimitError: ")
    assert "OPENAI_MAX_REPLY_CHARS=2000" in last

"""Every reply is bounded in time and in size, over the real `openai` SDK and real HTTP.

`OPENAI_MAX_REPLY_SECONDS` is a wall-clock deadline on the whole reply and
`OPENAI_MAX_REPLY_CHARS` a cap on its size: a server that keeps sending (a
body that never ends, a huge one) is cut there, as one `ProviderError` line
naming the limit, instead of hanging the run while memory grows. The servers
here send as fast as the client reads, and the limits are small, so every
test ends in well under a second; none of them sleeps.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer, endless, sse_comment
from chapters.ch01.tests.test_wire import MODEL, failed_cli_run, real_model
from shared.errors import ProviderErrorKind, ReplyLimitError
from shared.scripted import response

REQUEST = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
# The per-read timeout of the test client (real_model): a test that ends near it was not
# cut by the limit it is about.
READ_TIMEOUT = 10.0


def test_a_body_past_the_size_cap_is_cut_there_naming_the_limit() -> None:
    with ChatServer([(200, response("x" * 200_000))]) as server:
        model = real_model(server.base_url, OPENAI_MAX_REPLY_CHARS="5000")
        with pytest.raises(ReplyLimitError) as caught:
            model.complete(REQUEST)
    message = str(caught.value)
    assert "OPENAI_MAX_REPLY_CHARS=5000" in message
    assert "\n" not in message
    assert caught.value.kind is ProviderErrorKind.CONNECTION  # cut, as a dropped reply is


def test_a_body_that_never_ends_is_cut_at_the_size_cap() -> None:
    with ChatServer([endless(sse_comment("keep-alive"))]) as server:
        model = real_model(server.base_url, OPENAI_MAX_REPLY_CHARS="20000")
        with pytest.raises(ReplyLimitError) as caught:
            model.complete(REQUEST)
    assert "OPENAI_MAX_REPLY_CHARS=20000" in str(caught.value)


def test_a_body_that_never_ends_is_cut_at_the_deadline() -> None:
    with ChatServer([endless(sse_comment("keep-alive"))]) as server:
        model = real_model(
            server.base_url, OPENAI_MAX_REPLY_SECONDS="0.3", OPENAI_MAX_REPLY_CHARS="1000000000"
        )
        started = time.monotonic()
        with pytest.raises(ReplyLimitError) as caught:
            model.complete(REQUEST)
        took = time.monotonic() - started
    assert "OPENAI_MAX_REPLY_SECONDS=0.3" in str(caught.value)
    assert 0.3 <= took < READ_TIMEOUT / 2


def test_a_reply_inside_both_limits_is_read_as_before() -> None:
    with ChatServer([(200, response("hi"))]) as server:
        model = real_model(
            server.base_url, OPENAI_MAX_REPLY_SECONDS="5", OPENAI_MAX_REPLY_CHARS="2000"
        )
        body = model.complete(REQUEST)
    assert body["choices"][0]["message"]["content"] == "hi"


def test_a_reply_past_a_limit_ends_the_run_with_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the repo
    with ChatServer([(200, response("x" * 200_000))]) as server:
        result = failed_cli_run(server.base_url, OPENAI_MAX_REPLY_CHARS="5000")
    last = result.stderr.splitlines()[-1]
    assert last.startswith("ReplyLimitError: ")
    assert "OPENAI_MAX_REPLY_CHARS=5000" in last

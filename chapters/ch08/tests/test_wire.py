"""Over the real wire: the `openai` SDK against a local server (chapters/ch01/tests/chat_server.py).

What the scripted model cannot prove: that the compaction request leaves the
SDK with `tool_choice: "none"`, the same tools and the same messages as the
request before it, and that the `usage` a provider sends, plainly or in a
stream, reaches the meter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer, StreamReply
from chapters.ch07.tests import provider_streams as streams
from chapters.ch07.tests.support import streaming_model
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from chapters.ch08.tests.support import Rig, answering, calling, emit, plain_console, summary
from shared.completion import ask_model
from shared.config import Settings
from shared.messages import UserMessage
from shared.openai_client import OpenAIChatModel
from shared.tools import ToolRegistry


def real_model(base_url: str) -> OpenAIChatModel:
    settings = Settings.model_validate(
        {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "test-model"}
    )
    return OpenAIChatModel(settings, timeout=10.0)


def test_the_compaction_request_on_the_wire(tmp_path: Path) -> None:
    replies = [
        (200, calling(emit("c1", 400))),
        (200, calling(emit("c2", 400))),
        (200, calling(emit("c3", 400), tokens=9_000)),  # the provider says: nearly full
        (200, summary()),
        (200, answering()),
    ]
    with ChatServer(replies) as server:
        rig = Rig(
            tmp_path,
            [],
            model=real_model(server.base_url),
            window=10_000,
            keep_tokens=200,
        )
        assert rig.run() == "done"
        sent = [request.body for request in server.completion_requests()]

    before, compaction, after = sent[2], sent[3], sent[4]
    assert compaction["tool_choice"] == "none"
    assert compaction["tools"] == before["tools"]
    assert compaction["model"] == before["model"] == "test-model"
    assert compaction["messages"][: len(before["messages"])] == before["messages"]
    assert compaction["messages"][-1]["role"] == "user"
    assert compaction["messages"][-1]["content"].startswith(COMPACT_MARK)
    assert "tool_choice" not in after
    assert after["messages"][2]["content"].startswith(SUMMARY_MARK)
    assert rig.compactor.compactions == 1


@pytest.mark.parametrize(
    ("stream", "prompt_tokens"), [(streams.OPENAI, 80), (streams.KIMI, 19)], ids=["top", "choice"]
)
def test_a_streamed_reply_carries_its_usage(
    stream: streams.ProviderStream, prompt_tokens: int
) -> None:
    """OpenAI sends usage in a last chunk with no choices; Kimi inside the choice."""
    with ChatServer([StreamReply(stream.sse())]) as server:
        reply = ask_model(
            streaming_model(server.base_url),
            [UserMessage(content="hi")],
            ToolRegistry().snapshot(),
            plain_console(),
            1,
        )
    assert reply.usage is not None and reply.usage.prompt_tokens == prompt_tokens

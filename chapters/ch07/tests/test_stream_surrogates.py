"""A lone surrogate in a streamed reply is cleaned like one in a plain reply, over the real wire.

The chunks carry `"\\ud800"` as a JSON escape in each place a reply can hold
text: a piece of the text beside a call, a piece of the arguments, the call's
id, its name, the reasoning. The assembled reply goes through the one parser
(shared/completion.py), which replaces each lone surrogate with U+FFFD, so the
next request goes out as valid UTF-8. A pair split over two chunks, one escape
in each, is joined first and stays one character.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import SSE_DONE, ChatServer, StreamReply, sse_data
from chapters.ch01.tests.harness import BASH, FakeRunner, ScriptedApprover
from chapters.ch01.tests.test_lone_surrogates import LONE, PLACES, check_cleaned_over_the_wire
from chapters.ch07.scripted_stream import chunk, text_stream
from chapters.ch07.tests.support import recording_console, streaming_model
from chapters.testing import agent_of


def ascii_sse(*chunks: dict[str, Any]) -> StreamReply:
    """The chunks as ASCII JSON, so a lone surrogate goes over the wire as its escape."""
    return StreamReply([*(sse_data(json.dumps(c)) for c in chunks), SSE_DONE])


def call_chunks(
    *,
    text: str = "",
    call_id: str = "c1",
    name: str = "shell",
    reasoning: str = "",
    command: str = "echo 1",
) -> list[dict[str, Any]]:
    """One shell call streamed in pieces; each argument given lands in its own delta."""
    head = {"index": 0, "id": call_id, "type": "function"}
    return [
        chunk({"role": "assistant", "content": None}),
        *([chunk({"reasoning_content": reasoning})] if reasoning else []),
        *([chunk({"content": text})] if text else []),
        chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"command": '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": f'"{command}"}}'}}]}),
        chunk({}, "tool_calls"),
    ]


PLACED = {
    "text": call_chunks(text=f"Let me look {LONE}"),
    "arguments": call_chunks(command=f"echo {LONE}"),
    "id": call_chunks(call_id="c" + LONE),
    "name": call_chunks(name="shell" + LONE),
    "reasoning": call_chunks(reasoning=f"thinking {LONE}"),
}


def run_streamed(base_url: str, runner: FakeRunner) -> str:
    spec = agent_of(
        1,
        model=streaming_model(base_url),
        console=recording_console(),
        approver=ScriptedApprover([True]),
        runner=runner,
        shell=BASH,
        cwd=Path.cwd(),
    )
    return run_agent("go", spec)


@pytest.mark.parametrize("where", PLACES)
def test_a_lone_surrogate_in_a_streamed_reply_is_replaced_and_the_next_request_goes_out(
    where: str,
) -> None:
    replies = [ascii_sse(*PLACED[where]), ascii_sse(*text_stream("done"))]
    check_cleaned_over_the_wire(where, replies, run_streamed)


def test_a_pair_split_over_two_chunks_is_one_character_again() -> None:
    replies = [ascii_sse(*text_stream("smile ", "\ud83d", "\ude00"))]
    with ChatServer(replies) as server:
        answer = run_streamed(server.base_url, FakeRunner())
    assert answer == "smile \U0001f600"

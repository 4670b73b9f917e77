"""A streamed reply in the one loop (chapters/ch01/loop.py), unchanged.

The streaming model is a `ReportingModelClient`: `ask_model` hands it the
observer and gets the plain response body back, so everything after the
model boundary (the parser, the finish-reason step, the tool calls, the
history) is chapter 1's. These tests run chapter 1's loop with a scripted
stream and check what reaches the history, and what never does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch07.assembly import BrokenStreamError
from chapters.ch07.scripted_stream import call_stream, chunk, text_stream
from chapters.ch07.tests import provider_streams as streams
from chapters.ch07.tests.provider_streams import ProviderStream
from chapters.ch07.tests.support import ShellAgent, err_text, out_text
from shared.errors import EmptyReplyError, OutputTruncatedError
from shared.messages import AssistantMessage, Message, ToolMessage

ECHO = json.dumps({"command": "echo hi"})


def gemini_style_shell_calls() -> list[dict[str, Any]]:
    """Two calls with no index, a thought signature, and finish_reason "stop"."""
    signature = {"google": {"thought_signature": "sig-1"}}
    return [
        chunk({"role": "assistant", "tool_calls": [
            {"id": "function-call-1", "type": "function", "extra_content": signature,
             "function": {"name": "shell", "arguments": ECHO}}]}),
        chunk({"tool_calls": [
            {"id": "function-call-2", "type": "function",
             "function": {"name": "shell", "arguments": json.dumps({"command": "pwd"})}}]}),
        chunk({}, "stop"),
    ]  # fmt: skip


def roles(history: list[Message]) -> list[str]:
    return [message.role for message in history]


def test_calls_run_when_the_stream_says_stop() -> None:
    agent = ShellAgent([gemini_style_shell_calls(), text_stream("Both ran.")])
    history: list[Message] = []
    assert run_agent("run two", agent.spec, history=history) == "Both ran."
    assert agent.runner.commands == ["echo hi", "pwd"]
    assert roles(history) == ["system", "user", "assistant", "tool", "tool", "assistant"]


def test_what_the_provider_needs_back_is_in_the_next_request() -> None:
    reasoning = chunk({"content": None, "reasoning_content": "Run echo first."})
    first = [reasoning, *gemini_style_shell_calls()]
    agent = ShellAgent([first, text_stream("ok")])
    run_agent("go", agent.spec)
    assistant = agent.model.requests[1]["messages"][2]
    assert assistant["reasoning_content"] == "Run echo first."
    assert assistant["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig-1"}}
    assert "extra_content" not in assistant["tool_calls"][1]


def test_every_request_asks_for_a_stream() -> None:
    agent = ShellAgent(
        [call_stream("c1", "shell", '{"command": ', '"echo hi"}'), text_stream("ok")]
    )
    run_agent("go", agent.spec)
    assert [r["stream"] for r in agent.model.requests] == [True, True]
    assert all(r["stream_options"] == {"include_usage": True} for r in agent.model.requests)


def test_length_with_half_streamed_arguments_stops_before_the_call_runs() -> None:
    half = [
        chunk({"role": "assistant", "tool_calls": [
            {"index": 0, "id": "c1", "type": "function",
             "function": {"name": "shell", "arguments": '{"command": "rm -rf bu'}}]}),
        chunk({}, "length"),
    ]  # fmt: skip
    agent = ShellAgent([half])
    history: list[Message] = []
    with pytest.raises(OutputTruncatedError, match="Model output reached the token limit"):
        run_agent("go", agent.spec, history=history)
    assert agent.runner.commands == []
    assert agent.approver.requests == []  # nobody was even asked
    assert roles(history) == ["system", "user"]  # the half message never entered


@pytest.mark.parametrize(
    ("stream", "error"),
    [
        (streams.CUT_OFF, BrokenStreamError),
        (streams.OPENAI_ERROR, BrokenStreamError),
        (streams.OPENROUTER_ERROR, BrokenStreamError),
        (streams.FINISH_ERROR_ONLY, BrokenStreamError),
        (streams.NOTHING_SAID, EmptyReplyError),
        (streams.ONLY_REASONING, EmptyReplyError),
    ],
    ids=lambda s: s.provider if isinstance(s, ProviderStream) else "",
)
def test_a_failed_turn_ends_the_run_with_nothing_partial_in_the_history(
    stream: ProviderStream, error: type[Exception]
) -> None:
    agent = ShellAgent([call_stream("c1", "shell", ECHO), stream.chunks()])
    history: list[Message] = []
    with pytest.raises(error):
        run_agent("go", agent.spec, history=history)
    assert roles(history) == ["system", "user", "assistant", "tool"]  # the first turn, whole
    assert out_text(agent.console) == ""  # no answer, empty or not


def test_ctrl_c_mid_stream_leaves_no_half_message() -> None:
    interrupted: list[Mapping[str, Any] | BaseException] = [
        *text_stream("The answer", " is")[:-1],
        KeyboardInterrupt(),
    ]
    agent = ShellAgent([call_stream("c1", "shell", ECHO), interrupted])
    history: list[Message] = []
    with pytest.raises(KeyboardInterrupt):
        run_agent("go", agent.spec, history=history)
    assert roles(history) == ["system", "user", "assistant", "tool"]
    assert isinstance(history[-1], ToolMessage)
    assert "The answer is" in err_text(agent.console)  # it was shown while it came


def test_the_trace_shows_the_request_as_sent_every_chunk_and_the_assembled_message() -> None:
    agent = ShellAgent([text_stream("Hel", "lo.")], trace=True)
    run_agent("hi", agent.spec)
    trace = err_text(agent.console)
    request = trace[trace.index("--- request 1 ---") : trace.index("chunk 1:")]
    assert '"stream": true' in request
    assert '"include_usage": true' in request
    chunk_lines = [line for line in trace.splitlines() if line.startswith("chunk ")]
    assert len(chunk_lines) == 4  # role, "Hel", "lo.", finish
    assert json.loads(chunk_lines[1].split(": ", 1)[1])["choices"][0]["delta"] == {"content": "Hel"}
    assembled = trace[trace.index("--- response 1 ---") :]
    assert '"content": "Hello."' in assembled
    assert trace.index("chunk 4:") < trace.index("--- response 1 ---")


def test_the_final_assistant_message_is_the_assembled_text() -> None:
    agent = ShellAgent(
        [
            text_stream("Hel", "lo", "."),
        ]
    )
    history: list[Message] = []
    run_agent("hi", agent.spec, history=history)
    final = history[-1]
    assert isinstance(final, AssistantMessage) and final.content == "Hello."

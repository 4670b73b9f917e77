"""Each assembly rule, proven on the stream of a provider that needs it.

The assembled body goes through the one parser (`parse_completion`), as it
does in a run, so each test checks the message the history would get.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from chapters.ch07.assembly import BrokenStreamError, StreamAssembler, assemble
from chapters.ch07.tests import provider_streams as streams
from chapters.ch07.tests.provider_streams import ProviderStream
from shared.completion import ModelReply, parse_completion
from shared.errors import EmptyReplyError, ProviderErrorKind
from shared.messages import AssistantMessage


def reply_of(stream: ProviderStream) -> ModelReply:
    return parse_completion(assemble(stream.chunks()))


def message_of(stream: ProviderStream) -> AssistantMessage:
    return reply_of(stream).message


def calls_of(stream: ProviderStream) -> list[tuple[str, str, Any]]:
    return [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in message_of(stream).tool_calls
    ]


# --- tool calls: keyed by index, by position, or new by id ------------------------------------


def test_openai_parallel_calls_are_keyed_by_index() -> None:
    assert calls_of(streams.OPENAI) == [
        ("call_A", "read_file", {"path": "a.py"}),
        ("call_B", "read_file", {"path": "b.py"}),
    ]


def test_an_index_is_a_key_not_a_list_position() -> None:
    """Indexes 5 and -1 (both seen from proxies) are keys; a list indexed by them breaks."""
    chunks = [
        {"choices": [{"delta": {"tool_calls": [
            {"index": 5, "id": "c5", "function": {"name": "glob", "arguments": '{"pattern"'}},
            {"index": -1, "id": "cm", "function": {"name": "grep", "arguments": '{"pattern"'}},
        ]}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"index": -1, "function": {"arguments": ': "b"}'}},
            {"index": 5, "function": {"arguments": ': "a"}'}},
        ]}, "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    message = parse_completion(assemble(chunks)).message
    assert [(c.id, c.function.arguments) for c in message.tool_calls] == [
        ("c5", '{"pattern": "a"}'),
        ("cm", '{"pattern": "b"}'),
    ]


def test_gemini_calls_without_index_are_keyed_by_position_and_split_arguments_join() -> None:
    assert calls_of(streams.GEMINI) == [
        ("function-call-1", "read_file", {"path": "a.py"}),
        ("function-call-2", "read_file", {"path": "b.py"}),
    ]


def test_ollama_calls_all_at_index_0_with_their_own_ids_are_separate_calls() -> None:
    assert calls_of(streams.OLLAMA) == [
        ("call_pnk3", "read_file", {"path": "a.py"}),
        ("call_x7q1", "read_file", {"path": "b.py"}),
    ]


def test_a_continuation_repeating_the_same_id_and_name_is_the_same_call() -> None:
    """vLLM's last delta repeats id, type and name beside the rest of the arguments."""
    assert calls_of(streams.VLLM) == [("chatcmpl-tool-9e3c", "grep", {"pattern": "def main"})]


# --- empty or missing fields on a continuation mean "unchanged" -------------------------------


def test_qwen_continuations_with_empty_id_and_no_name_keep_the_call() -> None:
    """DashScope sends `"id": ""` and no name on every continuation, and `"function": {}`."""
    assert calls_of(streams.QWEN) == [
        ("call_0bdc", "glob", {}),  # arguments "" and then none at all: {}
        ("call_1f2e", "grep", {"pattern": "TODO"}),
    ]


def test_all_empty_arguments_are_an_empty_object() -> None:
    [glob, _] = message_of(streams.QWEN).tool_calls
    assert glob.function.arguments == "{}"


def test_llama_cpp_name_repeated_in_every_delta_is_not_doubled() -> None:
    [call] = message_of(streams.LLAMA_CPP).tool_calls
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "a.py"}
    assert call.id  # its id came inside `function`, where no client looks: a fresh one


def test_a_call_streamed_without_any_id_gets_one() -> None:
    [call] = message_of(streams.VLLM_NO_ID).tool_calls
    assert call.id == "call_1"
    assert call.function.name == "glob"


def test_glm_call_and_finish_reason_in_one_chunk() -> None:
    reply = reply_of(streams.GLM)
    assert reply.finish_reason == "tool_calls"
    assert reply.message.content is not None and reply.message.content == "Let me look."
    assert [c.function.name for c in reply.message.tool_calls] == ["read_file"]


# --- chunks without choices, comments, usage wherever it is ------------------------------------


def test_azure_prompt_filter_chunk_and_choice_without_delta_are_skipped() -> None:
    body = assemble(streams.AZURE.chunks())
    assert body["id"] == "chatcmpl-az1"  # the filter chunk's id is ""
    assert body["choices"][0]["message"]["content"] == "Hello"
    assert body["choices"][0]["finish_reason"] == "stop"  # the trailing chunk's null kept it


def usage_of(stream: ProviderStream) -> Mapping[str, Any] | None:
    usage: Mapping[str, Any] | None = assemble(stream.chunks()).get("usage")
    return usage


def test_usage_from_a_chunk_with_no_choices() -> None:
    assert usage_of(streams.OPENAI) == {
        "prompt_tokens": 80,
        "completion_tokens": 30,
        "total_tokens": 110,
    }
    assert usage_of(streams.QWEN) == {
        "prompt_tokens": 300,
        "completion_tokens": 24,
        "total_tokens": 324,
    }


def test_kimi_usage_inside_the_choice_is_read() -> None:
    assert usage_of(streams.KIMI) == {
        "prompt_tokens": 19,
        "completion_tokens": 13,
        "total_tokens": 32,
    }


def test_usage_sent_on_every_chunk_is_the_newest() -> None:
    usage = usage_of(streams.VLLM)
    assert usage is not None and usage["total_tokens"] == 74


# --- what the provider wants back is kept -----------------------------------------------------


def test_deepseek_reasoning_content_is_kept_beside_its_calls() -> None:
    message = message_of(streams.DEEPSEEK)
    assert message.reasoning_content == "The user wants the file read."
    assert message.content is None
    assert message.wire["reasoning_content"] == "The user wants the file read."


def test_gemini_thought_signature_is_kept_on_its_call_and_sent_back() -> None:
    first, second = message_of(streams.GEMINI).tool_calls
    assert first.extra_content == streams.GEMINI_SIGNATURE  # it came alone, in a later delta
    assert second.extra_content is None
    wire_first, wire_second = message_of(streams.GEMINI).wire["tool_calls"]
    assert wire_first["extra_content"] == streams.GEMINI_SIGNATURE
    assert "extra_content" not in wire_second


def test_reasoning_under_another_name_is_shown_but_never_the_answer() -> None:
    message = message_of(streams.OPENROUTER)
    assert message.content == "It is 42."
    assert message.reasoning_content is None  # not kept on a message without calls


def test_a_streamed_reply_parses_to_the_same_message_as_the_plain_one() -> None:
    """The same Gemini reply, streamed and not: one message, signature included."""
    calls = [
        {"id": "function-call-1", "type": "function", "extra_content": streams.GEMINI_SIGNATURE,
         "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
        {"id": "function-call-2", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "b.py"}'}},
    ]  # fmt: skip
    plain = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls},
                          "finish_reason": "stop"}]}  # fmt: skip
    assert parse_completion(plain).message == message_of(streams.GEMINI)


# --- the follow-up decision ------------------------------------------------------------------


@pytest.mark.parametrize("stream", [streams.GEMINI, streams.OLLAMA], ids=lambda s: s.provider)
def test_follow_up_is_decided_by_the_assembled_calls(stream: ProviderStream) -> None:
    assembler = StreamAssembler()
    for chunk in stream.chunks():
        assembler.add(chunk)
    assert assembler.needs_follow_up
    assert assembler.finish_reason in ("stop", "tool_calls")


def test_no_follow_up_for_text_even_if_finish_reason_says_tool_calls() -> None:
    assembler = StreamAssembler()
    assembler.add({"choices": [{"delta": {"content": "Done."}, "finish_reason": "tool_calls"}]})
    assert not assembler.needs_follow_up


# --- failed turns ----------------------------------------------------------------------------


def test_a_stream_that_ends_without_a_finish_reason_is_a_failed_turn() -> None:
    with pytest.raises(BrokenStreamError) as caught:
        assemble(streams.CUT_OFF.chunks())
    assert "without a finish_reason" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.kind is ProviderErrorKind.CONNECTION


@pytest.mark.parametrize(
    ("stream", "said"),
    [
        (streams.OPENAI_ERROR, "The server had an error while processing your request"),
        (streams.OPENROUTER_ERROR, "Provider disconnected unexpectedly"),
        (streams.FINISH_ERROR_ONLY, "no message"),
    ],
    ids=lambda s: s.provider if isinstance(s, ProviderStream) else "",
)
def test_an_error_chunk_or_finish_reason_error_is_a_failed_turn(
    stream: ProviderStream, said: str
) -> None:
    with pytest.raises(BrokenStreamError) as caught:
        assemble(stream.chunks())
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.body is not None  # the chunk, for --trace


def test_the_error_stops_the_stream_at_its_chunk() -> None:
    read: list[object] = []

    def chunks() -> Any:
        for chunk in [*streams.OPENROUTER_ERROR.chunks(), {"choices": []}]:
            read.append(chunk)
            yield chunk

    with pytest.raises(BrokenStreamError):
        assemble(chunks())
    assert len(read) == 2  # the chunk after the error was never asked for


@pytest.mark.parametrize("stream", [streams.NOTHING_SAID, streams.ONLY_REASONING],
                         ids=lambda s: s.provider)  # fmt: skip
def test_a_stream_with_neither_text_nor_calls_is_a_failed_turn(stream: ProviderStream) -> None:
    with pytest.raises(EmptyReplyError):
        assemble(stream.chunks())


def test_length_with_half_streamed_arguments_goes_to_the_finish_reason_step() -> None:
    """The body says `length`; the loop's finish-reason step stops the run before any call."""
    reply = reply_of(streams.CUT_AT_LENGTH)
    assert reply.finish_reason == "length"
    [call] = reply.message.tool_calls
    assert call.function.arguments.endswith('"hal')  # half: kept only for --trace


def test_a_chunk_that_is_not_an_object_is_a_failed_turn() -> None:
    with pytest.raises(BrokenStreamError):
        assemble([["not", "a", "chunk"]])


def test_a_stream_that_stops_early_is_closed_at_once() -> None:
    closed: list[bool] = []

    def chunks() -> Any:
        try:
            yield from streams.OPENAI_ERROR.chunks()
        finally:
            closed.append(True)

    with pytest.raises(BrokenStreamError) as caught:
        assemble(chunks())
    assert closed == [True]  # before the caller even looked at the error
    assert caught.value is not None

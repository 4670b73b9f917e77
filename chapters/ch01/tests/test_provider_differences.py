"""What real providers send that OpenAI does not, and how the loop holds against it."""

from __future__ import annotations

import json

import pytest

from chapters.ch01.tests.harness import Harness
from shared.completion import parse_completion
from shared.errors import ProviderError
from shared.messages import AssistantMessage, ToolMessage
from shared.scripted import response, tool_call

ECHO = '{"command": "echo hi"}'


def test_empty_content_beside_tool_calls_is_null() -> None:
    reply = parse_completion(response("", [tool_call("c1", "shell", ECHO)]))
    assert reply.message.content is None
    assert reply.message.wire["content"] is None


def test_extra_fields_on_message_choice_and_body_are_ignored() -> None:
    body = response(
        "hello",
        message_extras={"refusal": None, "annotations": [], "audio": None, "function_call": None},
    )
    body["choices"][0]["logprobs"] = None
    body["usage"] = {"prompt_tokens": 3, "completion_tokens": 1}
    body["timings"] = {"predicted_ms": 12.5}  # llama.cpp
    body["system_fingerprint"] = "fp_x"
    reply = parse_completion(body)
    assert reply.message.content == "hello"
    assert set(reply.message.wire) == {"role", "content"}


def test_extra_fields_inside_a_tool_call_are_ignored() -> None:
    call = tool_call("c1", "shell", ECHO)
    call["index"] = 0
    call["function"]["parsed"] = None
    reply = parse_completion(response(None, [call]))
    assert reply.message.tool_calls[0].function.arguments == ECHO


def test_arguments_string_is_kept_byte_for_byte() -> None:
    odd = '{ "command" :  "echo   hi" ,"x":1 }'  # spacing a re-serialisation would lose
    reply = parse_completion(response(None, [tool_call("c1", "shell", odd)]))
    assert reply.message.tool_calls[0].function.arguments == odd


def test_arguments_object_becomes_a_json_string() -> None:
    reply = parse_completion(response(None, [tool_call("c1", "shell", {"command": "echo 你好"})]))
    arguments = reply.message.tool_calls[0].function.arguments
    assert json.loads(arguments) == {"command": "echo 你好"}


@pytest.mark.parametrize("arguments", ["", "  ", None])
def test_empty_arguments_mean_an_empty_object(arguments: str | None) -> None:
    reply = parse_completion(response(None, [tool_call("c1", "shell", arguments)]))
    assert reply.message.tool_calls[0].function.arguments == "{}"


def test_reasoning_content_is_kept_with_tool_calls_and_sent_back() -> None:
    """DeepSeek's thinking mode rejects the next request without it."""
    h = Harness(
        steps=[
            response(
                None,
                [tool_call("c1", "shell", ECHO)],
                message_extras={"reasoning_content": "I should run echo."},
            ),
            response("hi", message_extras={"reasoning_content": "Done thinking."}),
        ],
        answers=[True],
    )
    h.run()
    sent_assistant = h.model.requests[1]["messages"][2]
    assert sent_assistant["reasoning_content"] == "I should run echo."
    final = h.history[-1]
    assert isinstance(final, AssistantMessage) and final.reasoning_content is None


def test_a_tool_calls_extra_content_is_kept_and_sent_back() -> None:
    """Gemini 3 puts its thought signature there, and rejects the next request without it."""
    signature = {"google": {"thought_signature": "CiQB0e2Kb2"}}
    signed = tool_call("c1", "shell", ECHO)
    signed["extra_content"] = signature
    h = Harness(steps=[response(None, [signed, tool_call("c2", "shell", ECHO)]), response("hi")],
                answers=[True, True])  # fmt: skip
    h.run()
    first, second = h.model.requests[1]["messages"][2]["tool_calls"]
    assert first["extra_content"] == signature
    assert "extra_content" not in second  # no key at all where the provider sent none


def test_empty_and_repeated_ids_are_made_unique_in_call_and_result() -> None:
    """Gemini sends empty ids, Kimi repeats them across turns; the API needs them unique."""
    h = Harness(
        steps=[
            response(None, [tool_call("", "shell", ECHO), tool_call("", "shell", ECHO)]),
            response(None, [tool_call("functions.shell:0", "shell", ECHO)]),
            response(None, [tool_call("functions.shell:0", "shell", ECHO)]),
            response("done"),
        ],
        answers=[True] * 4,
    )
    assert h.run() == "done"
    call_ids = [c.id for m in h.history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    result_ids = [m.tool_call_id for m in h.history if isinstance(m, ToolMessage)]
    assert all(call_ids) and len(set(call_ids)) == 4
    assert result_ids == call_ids
    assert call_ids[2] == "functions.shell:0"  # a fresh id is kept as sent


def test_a_200_with_an_error_body_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="model is overloaded"):
        parse_completion({"error": {"message": "model is overloaded", "code": 503}})


@pytest.mark.parametrize("body", [{}, {"choices": []}, {"choices": None}, {"object": "list"}])
def test_a_response_without_choices_is_a_provider_error(body: dict[str, object]) -> None:
    with pytest.raises(ProviderError, match="no choices"):
        parse_completion(body)


def test_a_choice_without_a_message_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="without a message"):
        parse_completion({"choices": [{"index": 0, "finish_reason": "stop"}]})


def test_content_as_a_list_of_text_parts_is_joined() -> None:
    body = response(None)
    body["choices"][0]["message"]["content"] = [
        {"type": "text", "text": "forty"},
        {"type": "text", "text": "-two"},
    ]
    assert parse_completion(body).message.content == "forty-two"


def test_usage_is_read_at_the_top_or_inside_the_choice_and_odd_counts_are_dropped() -> None:
    body = response("hi")
    body["usage"] = {
        "prompt_tokens": 1200,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    usage = parse_completion(body).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (1200, 7, 1024)

    kimi = response("hi")
    kimi["choices"][0]["usage"] = {"prompt_tokens": 55, "completion_tokens": "3"}
    usage = parse_completion(kimi).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (55, None, None)

    assert parse_completion(response("hi")).usage is None
    odd = response("hi")
    odd["usage"] = {"prompt_tokens": True, "completion_tokens": -1}
    assert parse_completion(odd).usage is None

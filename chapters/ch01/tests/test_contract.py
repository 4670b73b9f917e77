"""The message contract: every tool call answered exactly once, checked before each request."""

from __future__ import annotations

import pytest

from chapters.ch01.tests.harness import plain_console
from shared.completion import ask_model
from shared.contract import ContractChecker
from shared.errors import MessageContractError
from shared.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from shared.scripted import ScriptedModel, response
from shared.tools import ToolRegistry


def calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        tool_calls=tuple(
            ToolCall(id=i, function=FunctionCall(name="shell", arguments="{}")) for i in ids
        )
    )


def result(call_id: str) -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, content="ok")


START: list[Message] = [SystemMessage(content="s"), UserMessage(content="u")]


def test_two_calls_with_one_result_raise_before_the_request_is_sent() -> None:
    """The chapter's second experiment: answer only the first of two calls."""
    history = [*START, calls("call_1", "call_2"), result("call_1")]
    model = ScriptedModel([response("never sent")])
    with pytest.raises(MessageContractError) as raised:
        ask_model(model, history, ToolRegistry().snapshot(), plain_console(), turn=2)
    assert str(raised.value) == 'missing tool results for ids: ["call_2"]'
    assert raised.value.cli_line() == (
        'MessageContractError: missing tool results for ids: ["call_2"]'
    )
    assert model.requests == []  # failed in our code, not as a 400 from the provider


def test_a_complete_history_passes() -> None:
    ContractChecker().check(
        [*START, calls("a", "b"), result("b"), result("a"), AssistantMessage(content="done")]
    )


def test_missing_result_before_the_next_user_message() -> None:
    with pytest.raises(MessageContractError, match=r'missing tool results for ids: \["a"\]'):
        ContractChecker().check([*START, calls("a"), UserMessage(content="next")])


def test_tool_message_without_its_call() -> None:
    with pytest.raises(MessageContractError, match=r'without a matching tool call: \["ghost"\]'):
        ContractChecker().check([*START, calls("a"), result("a"), result("ghost")])


def test_tool_message_for_an_earlier_turn_is_rejected() -> None:
    history = [*START, calls("a"), result("a"), calls("b"), result("a"), result("b")]
    with pytest.raises(MessageContractError, match=r'without a matching tool call: \["a"\]'):
        ContractChecker().check(history)


def test_two_results_for_one_call() -> None:
    with pytest.raises(MessageContractError, match=r'duplicate tool results for ids: \["a"\]'):
        ContractChecker().check([*START, calls("a"), result("a"), result("a")])


def test_duplicate_ids_in_one_message() -> None:
    with pytest.raises(MessageContractError, match=r'duplicate tool_call ids: \["a"\]'):
        ContractChecker().check([*START, calls("a", "a"), result("a")])


def test_duplicate_ids_across_turns() -> None:
    history = [*START, calls("a"), result("a"), calls("a"), result("a")]
    with pytest.raises(MessageContractError, match=r'duplicate tool_call ids: \["a"\]'):
        ContractChecker().check(history)


def test_a_message_replaced_in_the_middle_is_read_again_and_sent_as_it_now_is() -> None:
    """The checker reads only new messages; a message swapped anywhere must not be missed,
    or the request would carry the wire form of the message that was there before."""
    history: list[Message] = [*START, calls("a"), ToolMessage(tool_call_id="a", content="long")]
    history.append(AssistantMessage(content="read it"))
    history.append(UserMessage(content="and now?"))
    checker = ContractChecker()
    assert checker.check(history).messages[3]["content"] == "long"
    history[3] = ToolMessage(tool_call_id="a", content="short")  # same length, same ends
    assert checker.check(history).messages[3]["content"] == "short"
    history[3] = ToolMessage(tool_call_id="ghost", content="short")
    with pytest.raises(MessageContractError, match="ghost"):
        checker.check(history)

"""The promises of chapter 1's loop, each checked with a scripted model and a fake shell."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from chapters.ch01.tests.harness import Harness
from shared.errors import (
    AgentLimitError,
    ContentFilterError,
    EmptyReplyError,
    OutputTruncatedError,
    UnsupportedFinishReasonError,
)
from shared.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from shared.process import CommandOutcome
from shared.scripted import response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolResult

ECHO_42 = '{"command": "echo 42"}'


def shell_call(
    call_id: str = "call_1", arguments: str | dict[str, Any] | None = ECHO_42
) -> dict[str, Any]:
    return tool_call(call_id, "shell", arguments)


# -- the chapter's two-round exchange ---------------------------------------------------------


def test_two_round_exchange_message_by_message() -> None:
    h = Harness(
        steps=[response(None, [shell_call()]), response("It printed 42.")],
        answers=[True],
        outcomes=[CommandOutcome(0, "42\n", "")],
    )

    assert h.run("Run echo 42 and tell me what it printed") == "It printed 42."

    system, user, assistant, tool, final = h.history
    assert isinstance(system, SystemMessage)
    assert user == UserMessage(content="Run echo 42 and tell me what it printed")
    assert isinstance(assistant, AssistantMessage)
    assert assistant.content is None  # null stays null
    assert [c.id for c in assistant.tool_calls] == ["call_1"]
    assert assistant.tool_calls[0].function.arguments == ECHO_42  # byte-for-byte
    assert isinstance(tool, ToolMessage) and tool.tool_call_id == "call_1"
    assert "exit code 0" in tool.content and "42" in tool.content
    assert final == AssistantMessage(content="It printed 42.")
    assert h.runner.commands == ["echo 42"]

    first, second = h.model.requests
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    sent_assistant = second["messages"][2]
    assert sent_assistant["content"] is None
    assert sent_assistant["tool_calls"][0]["function"]["arguments"] == ECHO_42
    assert [t["function"]["name"] for t in first["tools"]] == ["shell"]


# -- the four combinations of text and tool calls --------------------------------------------


def test_text_and_tools_continue_the_loop() -> None:
    h = Harness(
        steps=[response("Let me run it.", [shell_call()]), response("Done.")], answers=[True]
    )
    assert h.run() == "Done."
    assert h.runner.commands == ["echo 42"]  # the text did not end the loop


def test_tools_only_continue_the_loop() -> None:
    h = Harness(steps=[response(None, [shell_call()]), response("Done.")], answers=[True])
    assert h.run() == "Done."
    assert len(h.model.requests) == 2


def test_text_only_returns_the_text() -> None:
    h = Harness(steps=[response("Just an answer.")])
    assert h.run() == "Just an answer."
    assert len(h.model.requests) == 1
    assert h.runner.commands == []


@pytest.mark.parametrize("content", [None, "", "   \n"])
def test_neither_text_nor_tools_is_an_explicit_failure(content: str | None) -> None:
    h = Harness(steps=[response(content)])
    with pytest.raises(EmptyReplyError, match="neither text nor tool calls"):
        h.run()


# -- finish_reason ------------------------------------------------------------------------


def test_length_is_a_token_limit_error() -> None:
    h = Harness(steps=[response("half an ans", finish_reason="length")])
    with pytest.raises(OutputTruncatedError, match="Model output reached the token limit"):
        h.run()


def test_length_with_tool_calls_runs_nothing() -> None:
    h = Harness(steps=[response(None, [shell_call()], finish_reason="length")])
    with pytest.raises(OutputTruncatedError):
        h.run()
    assert h.runner.commands == []
    assert h.approver.requests == []


def test_content_filter_is_an_explicit_failure() -> None:
    h = Harness(steps=[response("", finish_reason="content_filter")])
    with pytest.raises(ContentFilterError, match="content_filter"):
        h.run()


@pytest.mark.parametrize(("reason", "shown"), [("function_call", "function_call"), (None, "null")])
def test_unknown_finish_reason_is_unsupported(reason: str | None, shown: str) -> None:
    body = response("text")
    body["choices"][0]["finish_reason"] = reason
    h = Harness(steps=[body])
    with pytest.raises(UnsupportedFinishReasonError, match=f"Unsupported finish_reason: {shown}"):
        h.run()


def test_tool_calls_with_finish_reason_stop_still_run() -> None:
    h = Harness(
        steps=[response(None, [shell_call()], finish_reason="stop"), response("Done.")],
        answers=[True],
    )
    assert h.run() == "Done."
    assert h.runner.commands == ["echo 42"]


def test_text_with_finish_reason_tool_calls_but_no_calls_ends_the_loop() -> None:
    h = Harness(steps=[response("Answer.", finish_reason="tool_calls")])
    assert h.run() == "Answer."  # the exit is decided by tool_calls, not by finish_reason


# -- the three experiments of the chapter ---------------------------------------------------


def test_max_turns_one_with_a_tool_call_raises_after_the_tool_ran() -> None:
    h = Harness(steps=[response(None, [shell_call()])], answers=[True])
    with pytest.raises(AgentLimitError, match="Agent exceeded max_turns=1"):
        h.run(max_turns=1)
    assert h.runner.commands == ["echo 42"]
    assert isinstance(h.history[-1], ToolMessage)  # the result is in, but no request is left


def test_max_turns_counts_model_requests_not_tool_calls() -> None:
    three_calls = [shell_call(f"call_{i}") for i in (1, 2, 3)]
    h = Harness(steps=[response(None, three_calls), response("Done.")], answers=[True] * 3)
    assert h.run(max_turns=2) == "Done."
    assert len(h.runner.commands) == 3


def test_non_zero_exit_is_data_and_the_loop_goes_on() -> None:
    h = Harness(
        steps=[response(None, [shell_call(arguments='{"command": "ls missing"}')]), response("ok")],
        answers=[True],
        outcomes=[CommandOutcome(1, "", "ls: missing: No such file or directory\n")],
    )
    assert h.run() == "ok"
    (tool,) = h.tool_messages()
    assert "shell_failed" in tool.content
    assert "code 1" in tool.content
    assert "No such file or directory" in tool.content
    assert "shell_failed" in h.model.requests[1]["messages"][-1]["content"]


# -- every call gets exactly one result, failures included ----------------------------------


def run_one_bad_call(arguments: str, name: str = "shell") -> tuple[Harness, str]:
    h = Harness(steps=[response(None, [tool_call("call_1", name, arguments)]), response("ok")])
    h.run()
    (tool,) = h.tool_messages()
    assert tool.tool_call_id == "call_1"
    assert h.runner.commands == [] and h.approver.requests == []  # nothing ran, nobody asked
    return h, tool.content


def test_unknown_tool_is_a_result() -> None:
    _, content = run_one_bad_call(ECHO_42, name="bash")
    assert content.startswith("unknown_tool")
    assert "'bash'" in content and "shell" in content


def test_bad_json_is_an_invalid_arguments_result() -> None:
    _, content = run_one_bad_call('{"command": "echo 42"')
    assert content.startswith("invalid_arguments") and "not valid JSON" in content


@pytest.mark.parametrize(
    "arguments",
    [
        "[" * 5000,  # the reproduction: unbalanced, and too deep for json's recursion
        "[" * 5000 + "]" * 5000,  # balanced, still too deep
        '{"command": ' + '{"a": ' * 5000 + "1" + "}" * 5001,  # deep inside an object
    ],
    ids=["open-brackets", "balanced-brackets", "nested-objects"],
)
def test_arguments_nested_too_deeply_to_parse_are_invalid_not_a_crash(arguments: str) -> None:
    # json.loads raises RecursionError here, which is not a JSONDecodeError: it used to
    # escape prepare and end the run with a traceback.
    h, content = run_one_bad_call(arguments)
    assert content.startswith("invalid_arguments: the arguments of shell are nested too deeply")
    assert h.model.requests[1]["messages"][-1]["content"] == content  # the loop went on


def test_a_number_too_long_to_convert_is_invalid_not_a_crash() -> None:
    # Python refuses to convert integers of more than 4300 digits: a ValueError, not a
    # JSONDecodeError.
    _, content = run_one_bad_call('{"command": ' + "1" * 5000 + "}")
    assert content.startswith("invalid_arguments: the arguments of shell cannot be read (")
    assert "integer string conversion" in content


def test_arguments_that_are_not_an_object_are_invalid() -> None:
    _, content = run_one_bad_call('["echo 42"]')
    assert content.startswith("invalid_arguments") and "JSON object" in content


def test_extra_field_is_rejected() -> None:
    _, content = run_one_bad_call('{"command": "echo 42", "sudo": true}')
    assert content.startswith("invalid_arguments") and "sudo" in content


@pytest.mark.parametrize("arguments", ['{"command": ""}', '{"command": "   "}', '{"command": 42}'])
def test_empty_or_non_string_command_is_rejected(arguments: str) -> None:
    _, content = run_one_bad_call(arguments)
    assert content.startswith("invalid_arguments") and "command" in content


def test_empty_arguments_string_means_empty_object_and_fails_validation() -> None:
    h, content = run_one_bad_call("")
    assert content.startswith("invalid_arguments") and "command" in content
    sent = h.model.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent == "{}"


def test_denied_call_does_not_run_and_the_model_is_told() -> None:
    h = Harness(steps=[response(None, [shell_call()]), response("Fine, I won't.")], answers=[False])
    assert h.run() == "Fine, I won't."
    assert h.runner.commands == []
    (request,) = h.approver.requests
    assert request.tool_name == "shell"
    assert request.arguments == {"command": "echo 42"}
    assert "execute" in request.reason
    (tool,) = h.tool_messages()
    assert tool.content.startswith("denied")


def test_an_approver_that_crashes_denies() -> None:
    class BrokenApprover:
        def approve(self, request: object) -> bool:
            raise RuntimeError("terminal vanished")

    h = Harness(steps=[response(None, [shell_call()]), response("ok")])
    h.approver = BrokenApprover()  # type: ignore[assignment]
    h.run()
    assert h.runner.commands == []
    assert h.tool_messages()[0].content.startswith("denied")
    assert "approval failed" in h.console_text()


def test_a_tool_that_raises_still_answers_its_call() -> None:
    class NoArgs(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def explode(args: NoArgs) -> ToolResult:
        raise OSError("disk on fire")

    h = Harness(steps=[response(None, [tool_call("call_1", "boom", "{}")]), response("ok")])
    h.tools.register(PydanticTool("boom", "Always fails.", NoArgs, SideEffect.READ, explode))
    assert h.run() == "ok"
    (tool,) = h.tool_messages()
    assert tool.content.startswith("tool_error") and "disk on fire" in tool.content


def test_two_calls_each_get_a_result() -> None:
    """The chapter's second experiment breaks this test: answer only the first call."""
    calls = [shell_call("call_1"), shell_call("call_2", '{"command": "echo 43"}')]
    h = Harness(steps=[response(None, calls), response("ok")], answers=[True, True])
    assert h.run() == "ok"
    assert [m.tool_call_id for m in h.tool_messages()] == ["call_1", "call_2"]


def test_several_calls_run_in_order_each_with_its_result() -> None:
    calls = [
        shell_call("call_1", '{"command": "echo one"}'),
        shell_call("call_2", '{"command": "echo two"}'),
        tool_call("call_3", "nope", "{}"),
    ]
    h = Harness(steps=[response(None, calls), response("ok")], answers=[True, False])
    h.run()
    assert h.runner.commands == ["echo one"]
    results = h.tool_messages()
    assert [m.tool_call_id for m in results] == ["call_1", "call_2", "call_3"]
    assert [m.content.split(":")[0] for m in results] == ["ok", "denied", "unknown_tool"]


# -- the snapshot -------------------------------------------------------------------------


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def test_a_tool_registered_after_the_snapshot_is_invisible_and_cannot_run() -> None:
    ran: list[str] = []

    def late(args: Empty) -> ToolResult:
        ran.append("late")
        return ToolResult.success("ok: late ran")

    h = Harness(steps=[])

    def install(args: Empty) -> ToolResult:
        h.tools.register(PydanticTool("late", "Registered mid-turn.", Empty, SideEffect.READ, late))
        return ToolResult.success("ok: installed")

    h.tools.register(PydanticTool("install", "Registers `late`.", Empty, SideEffect.READ, install))
    h.model.steps = [
        response(None, [tool_call("call_1", "install", "{}"), tool_call("call_2", "late", "{}")]),
        response(None, [tool_call("call_3", "late", "{}")]),
        response("done"),
    ]
    h.run()

    first, second, _ = h.model.requests
    assert "late" not in [t["function"]["name"] for t in first["tools"]]
    assert h.tool_messages()[1].content.startswith("unknown_tool")  # same turn: cannot run
    assert "late" in [t["function"]["name"] for t in second["tools"]]  # next request sees it
    assert ran == ["late"]  # and only the call made after seeing it ran


def test_arguments_object_is_accepted_and_sent_back_as_a_string() -> None:
    h = Harness(
        steps=[response(None, [shell_call(arguments={"command": "echo 42"})]), response("ok")],
        answers=[True],
    )
    h.run()
    assert h.runner.commands == ["echo 42"]
    sent = h.model.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(sent, str) and json.loads(sent) == {"command": "echo 42"}

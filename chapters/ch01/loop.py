"""Chapter 1: the agent loop, the only thing between a model and the real world.

Read `run_agent` beside docs/ch01-agent-loop.md, "五个步骤": the numbered
comments are the five steps of the text. The loop succeeds in one way only, a
reply without tool calls that has text; every other way out is a named error
from shared/errors.py (an empty reply, a finish_reason it cannot continue from,
a broken message contract, a provider error, or `AgentLimitError`).
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

from chapters.ch01.prompt import SYSTEM_PROMPT
from shared.approval import ApprovalRequest, Approver
from shared.completion import ModelClient, ask_model, check_finish_reason
from shared.console import Console
from shared.contract import ContractChecker
from shared.errors import AgentLimitError, EmptyReplyError
from shared.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from shared.tools import PreparedCall, ToolRegistry, ToolResult, ToolSnapshot

DEFAULT_MAX_TURNS = 20


class CallHandler(Protocol):
    """Step 4 for one tool call: whatever happens, it returns the call's one result."""

    def __call__(self, call: ToolCall, snapshot: ToolSnapshot) -> ToolResult: ...


def run_agent(
    prompt: str,
    *,
    model: ModelClient,
    tools: ToolRegistry,
    console: Console,
    approver: Approver | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    history: list[Message] | None = None,
    system_prompt: str = SYSTEM_PROMPT,
    handle_call: CallHandler | None = None,
) -> str:
    """Run the loop until the model answers in text; return that text.

    `handle_call` is step 4 for one call: by default `run_tool_call`, which asks
    `approver`. Chapter 3 passes a permission policy instead; the loop stays the same.
    """
    if handle_call is None:
        if approver is None:
            raise TypeError("run_agent needs an approver, or a handle_call that decides")
        handle_call = partial(run_tool_call, approver=approver, console=console)
    history = [] if history is None else history  # pass a list in to watch it grow
    if not history:
        history.append(SystemMessage(content=system_prompt))
    history.append(UserMessage(content=prompt))  # 1. the prompt enters the history
    contract = ContractChecker()  # checks each request; remembers what it already checked

    for turn in range(1, max_turns + 1):  # max_turns counts model requests
        snapshot = tools.snapshot()  # 2. freeze the tools this request may see and use
        reply = ask_model(model, history, snapshot, console, turn, contract)
        check_finish_reason(reply)  # length, content_filter, unknown: stop with an error
        history.append(reply.message)  # 3. the assistant message, as it came

        if not reply.message.tool_calls:  # the only exit: no tool calls
            return final_answer(reply.message)

        for call in reply.message.tool_calls:  # 4. each call, in order, gets one result
            result = handle_call(call, snapshot)
            history.append(ToolMessage(tool_call_id=call.id, content=result.content))
        # 5. the results are in the history; the `for` goes back to step 2

    raise AgentLimitError(max_turns)


def final_answer(message: AssistantMessage) -> str:
    """Text only: the answer. Neither text nor tool calls: an explicit failure."""
    if message.content is None or not message.content.strip():
        raise EmptyReplyError()
    return message.content


def run_tool_call(
    call: ToolCall, snapshot: ToolSnapshot, *, approver: Approver, console: Console
) -> ToolResult:
    """Look up, parse, validate, approve, execute: every failure comes back as a result."""
    prepared = snapshot.prepare(call)  # no side effects: nothing runs before approval
    if isinstance(prepared, ToolResult):
        result = prepared
    elif not is_approved(prepared, approver, console):
        result = DENIED
    else:
        result = prepared.invoke()
    console.tool_result(call.function.name, result.status, result.content)
    return result


DENIED = ToolResult(
    "denied",
    "denied: the human refused this call, so it did not run; asking again will be refused "
    "too. Tell the user in plain text that it was not run, or take a different approach.",
)


def is_approved(prepared: PreparedCall, approver: Approver, console: Console) -> bool:
    """Ask the human when the tool has a side effect. If asking itself fails, deny."""
    effect = prepared.tool.side_effect
    if not effect.needs_approval:
        return True
    request = ApprovalRequest(
        tool_name=prepared.tool.name,
        reason=effect.approval_reason,
        arguments=prepared.args.model_dump(),
        preview=prepared.preview,
    )
    try:
        return approver.approve(request)
    except Exception as error:  # a safety check that fails must not let the call through
        console.error(f"approval failed ({type(error).__name__}: {error}); the call is denied")
        return False

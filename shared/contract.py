"""The message contract, checked before every request.

Chat Completions requires that every tool call of an assistant message is
answered by exactly one `role: "tool"` message, right after it, before the next
user or assistant message. A history that breaks this gets a 400 from the
provider whose wording differs per provider; checking it here turns that into
one clear `MessageContractError` that points at our own bug.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import MessageContractError, quoted_ids
from shared.messages import AssistantMessage, Message, ToolMessage


def check_message_contract(history: Sequence[Message]) -> None:
    """Raise `MessageContractError` unless every tool call has exactly one result."""
    seen_call_ids: set[str] = set()
    open_calls: list[str] = []  # calls of the latest assistant message not yet answered
    answered: set[str] = set()

    for message in history:
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            if call_id in answered:
                raise MessageContractError(
                    f"duplicate tool results for ids: {quoted_ids([call_id])}"
                )
            if call_id not in open_calls:
                raise MessageContractError(
                    f"tool result without a matching tool call: {quoted_ids([call_id])}"
                )
            open_calls.remove(call_id)
            answered.add(call_id)
            continue

        _require_answered(open_calls)  # any other role closes the previous calls
        answered.clear()
        if isinstance(message, AssistantMessage):
            call_ids = [call.id for call in message.tool_calls]
            repeated = [cid for cid in call_ids if cid in seen_call_ids or call_ids.count(cid) > 1]
            if repeated:
                raise MessageContractError(
                    f"duplicate tool_call ids: {quoted_ids(dict.fromkeys(repeated))}"
                )
            seen_call_ids.update(call_ids)
            open_calls = call_ids

    _require_answered(open_calls)


def _require_answered(open_calls: list[str]) -> None:
    if open_calls:
        raise MessageContractError(f"missing tool results for ids: {quoted_ids(open_calls)}")

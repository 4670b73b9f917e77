"""The message contract, checked before every request.

Chat Completions requires that every tool call of an assistant message is
answered by exactly one `role: "tool"` message, right after it, before the next
user or assistant message. A history that breaks this gets a 400 from the
provider whose wording differs per provider; checking it here turns that into
one clear `MessageContractError` that points at our own bug.

The loop checks before every request, and the history usually only grows, so
the `ContractChecker` remembers the messages it checked and reads only the new
ones: re-reading the whole history each turn would make a long session
quadratic. A history that is not the checked one plus new messages (a feature
replaced or removed a message anywhere, not only at its ends) is read again
from the start. It hands back the checked messages in wire form, so what is
sent is exactly what was checked, also after a history was rewritten.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from shared.errors import MessageContractError, quoted_ids
from shared.messages import Message


@dataclass(frozen=True)
class CheckedHistory:
    messages: list[dict[str, Any]]  # the wire form of exactly the messages checked
    call_ids: Collection[str]  # every tool-call id so far; new ids must not repeat them


class ContractChecker:
    """Checks a growing history incrementally; starts over if it was not just appended to."""

    _checked: list[Message]  # the messages read so far, in order
    _seen: set[str]  # every tool-call id so far
    _open: list[str]  # calls of the latest assistant message not yet answered
    _answered: set[str]
    _wire: list[dict[str, Any]]

    def __init__(self) -> None:
        self._start_over()

    def check(self, history: Sequence[Message]) -> CheckedHistory:
        """Raise `MessageContractError` unless every tool call has exactly one result."""
        if not self._extends_what_was_checked(history):
            self._start_over()
        try:
            for message in history[len(self._checked) :]:
                self._read(message)
                self._checked.append(message)
        except MessageContractError:
            self._start_over()
            raise
        if self._open:  # the next request would go out with calls unanswered
            raise MessageContractError(f"missing tool results for ids: {quoted_ids(self._open)}")
        return CheckedHistory(messages=list(self._wire), call_ids=self._seen)

    def _start_over(self) -> None:
        self._checked = []
        self._seen, self._open, self._answered, self._wire = set(), [], set(), []

    def _extends_what_was_checked(self, history: Sequence[Message]) -> bool:
        """Whether every checked message is still there, in its place.

        One pass in C comparing references: for an untouched history it costs a
        pointer comparison per message, and a message replaced by another object,
        wherever it is, is always noticed.
        """
        return len(history) >= len(self._checked) and all(map(operator.is_, history, self._checked))

    def _read(self, message: Message) -> None:
        self._wire.append(message.wire)
        if message.role == "tool":
            call_id = message.tool_call_id
            if call_id in self._open:
                self._open.remove(call_id)
                self._answered.add(call_id)
            elif call_id in self._answered:
                raise MessageContractError(
                    f"duplicate tool results for ids: {quoted_ids([call_id])}"
                )
            else:
                raise MessageContractError(
                    f"tool result without a matching tool call: {quoted_ids([call_id])}"
                )
            return
        if self._open:  # any other role closes the previous calls
            raise MessageContractError(f"missing tool results for ids: {quoted_ids(self._open)}")
        if message.role == "assistant" and message.tool_calls:
            call_ids = [call.id for call in message.tool_calls]
            repeated = [c for c in call_ids if c in self._seen or call_ids.count(c) > 1]
            if repeated:
                raise MessageContractError(
                    f"duplicate tool_call ids: {quoted_ids(dict.fromkeys(repeated))}"
                )
            self._seen.update(call_ids)
            self._open = call_ids
            self._answered = set()

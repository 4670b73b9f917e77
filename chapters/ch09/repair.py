"""Repairing a history a run left unfinished, so that the next request keeps the message contract.

A run killed in the middle of step 4 leaves an assistant message whose tool
calls have no results yet (or only some); a line lost from the log can leave
a result whose call is gone. Either way the provider would refuse the next
request (shared/contract.py), so before a resumed run sends anything:

    a tool call with no result       gets one tool message, right after the results it
                                     has: the call was interrupted and may or may not
                                     have run (a write may be half done, a command may
                                     have finished: the model should look, not assume)
    a tool message without its call  is dropped (and so is a second result for a call)

    before:  system │ prompt │ a1(call c1, c2) │ tool c1 │ tool c9
    after:   system │ prompt │ a1(call c1, c2) │ tool c1 │ tool c2 "interrupted: ..."

A repaired history needs no repair: running it again changes nothing, so
resuming the same session twice adds one repair, not two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.messages import Message, ToolMessage

INTERRUPTED_CALL = (
    "interrupted: the session stopped before this call's result was recorded, so it may or "
    "may not have run. Check what it would have changed before you call it again."
)


@dataclass(frozen=True)
class Repair:
    """The repaired history, and what was done to it."""

    history: list[Message]
    answered: tuple[str, ...] = ()  # ids of the calls given an "interrupted" result
    dropped: tuple[str, ...] = ()  # tool_call ids of the tool messages dropped

    @property
    def changed(self) -> bool:
        return bool(self.answered or self.dropped)

    @property
    def note(self) -> str:
        """What was done, in one line: for the log and the console; "" if nothing."""
        done = []
        if self.answered:
            done.append(
                f"{_count(self.answered, 'interrupted call')} answered ({', '.join(self.answered)})"
            )
        if self.dropped:
            done.append(
                f"{_count(self.dropped, 'result')} without its call dropped "
                f"({', '.join(self.dropped)})"
            )
        return f"repair: {'; '.join(done)}" if done else ""


def repair_history(history: Sequence[Message]) -> Repair:
    """`history` with every call answered and every result matched to its call."""
    repaired: list[Message] = []
    answered: list[str] = []
    dropped: list[str] = []
    open_calls: list[str] = []  # calls of the latest assistant message still without a result

    def close() -> None:
        for call_id in open_calls:
            repaired.append(ToolMessage(tool_call_id=call_id, content=INTERRUPTED_CALL))
            answered.append(call_id)
        open_calls.clear()

    for message in history:
        if message.role == "tool":
            if message.tool_call_id in open_calls:
                open_calls.remove(message.tool_call_id)
                repaired.append(message)
            else:
                dropped.append(message.tool_call_id)
            continue
        close()  # any other message ends the results of the calls before it
        repaired.append(message)
        if message.role == "assistant":
            open_calls.extend(dict.fromkeys(call.id for call in message.tool_calls))
    close()
    return Repair(repaired, tuple(answered), tuple(dropped))


def _count(items: Sequence[str], what: str) -> str:
    return f"1 {what}" if len(items) == 1 else f"{len(items)} {what}s"

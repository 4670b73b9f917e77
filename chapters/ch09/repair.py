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
    a call id used before            gets a fresh one, as a reply's would (shared/completion.py:
                                     `c1` becomes `c1_1`), and so do the results that follow
                                     it: the provider requires every id to be used once

    before:  system │ prompt │ a1(call c1, c2) │ tool c1 │ tool c9
    after:   system │ prompt │ a1(call c1, c2) │ tool c1 │ tool c2 "interrupted: ..."

A result belongs to the first call of its message with its id that has none
yet: with `c1` twice in one message, the first `c1` result answers the first
call and the second answers the one renamed `c1_1`.

A repaired history needs no repair: running it again changes nothing, so
resuming the same session twice adds one repair, not two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.completion import unique_call_id
from shared.messages import AssistantMessage, Message, ToolCall, ToolMessage

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
    renamed: tuple[tuple[str, str], ...] = ()  # (id used before, its fresh id), per call

    @property
    def changed(self) -> bool:
        return bool(self.answered or self.dropped or self.renamed)

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
        if self.renamed:
            pairs = ", ".join(f"{old} -> {new}" for old, new in self.renamed)
            done.append(f"{_count(self.renamed, 'repeated call id')} renamed ({pairs})")
        return f"repair: {'; '.join(done)}" if done else ""


def repair_history(history: Sequence[Message]) -> Repair:
    """`history` with every call answered, every result matched to its call, every id used once."""
    repaired: list[Message] = []
    answered: list[str] = []
    dropped: list[str] = []
    renamed: list[tuple[str, str]] = []
    taken: set[str] = set()  # every call id in `repaired`
    # The calls of the latest assistant message still without a result, in order:
    # (the id its results name, the id it has now).
    open_calls: list[tuple[str, str]] = []

    def close() -> None:
        for _, call_id in open_calls:
            repaired.append(ToolMessage(tool_call_id=call_id, content=INTERRUPTED_CALL))
            answered.append(call_id)
        open_calls.clear()

    for message in history:
        if message.role == "tool":
            call = next((c for c in open_calls if c[0] == message.tool_call_id), None)
            if call is None:
                dropped.append(message.tool_call_id)
                continue
            open_calls.remove(call)
            same = call[1] == message.tool_call_id
            repaired.append(message if same else _answering(message, call[1]))
            continue
        close()  # any other message ends the results of the calls before it
        if message.role == "assistant" and message.tool_calls:
            message, ids = _with_unique_ids(message, taken)
            renamed += [(was, now) for was, now in ids if was != now]
            open_calls += ids
        repaired.append(message)
    close()
    return Repair(repaired, tuple(answered), tuple(dropped), tuple(renamed))


def _with_unique_ids(
    message: AssistantMessage, taken: set[str]
) -> tuple[AssistantMessage, list[tuple[str, str]]]:
    """`message` with each call whose id is taken (or repeats one before it) given a fresh
    id, and (the id each call had, the id it has now), in call order."""
    calls: list[ToolCall] = []
    for call in message.tool_calls:
        fresh = unique_call_id(call.id, taken, {c.id for c in calls})
        calls.append(
            call if fresh == call.id else ToolCall.model_validate({**dict(call), "id": fresh})
        )
    taken.update(call.id for call in calls)
    ids = [(was.id, now.id) for was, now in zip(message.tool_calls, calls, strict=True)]
    if all(was == now for was, now in ids):
        return message, ids
    return AssistantMessage.model_validate({**dict(message), "tool_calls": tuple(calls)}), ids


def _answering(message: ToolMessage, call_id: str) -> ToolMessage:
    """`message` as the result of the call now named `call_id` (a new message: the wire
    form of a message is kept with it, so it is never copied and changed)."""
    return ToolMessage.model_validate({**dict(message), "tool_call_id": call_id})


def _count(items: Sequence[object], what: str) -> str:
    return f"1 {what}" if len(items) == 1 else f"{len(items)} {what}s"

"""Where a history may be cut: the boundary rule of compaction.

Compaction keeps the start of the history (the system prompt and the user's
prompt), replaces the middle by a summary, and keeps the most recent messages.
Where the kept part starts is the whole difficulty. The message contract
(shared/contract.py) wants every tool call answered by its tool messages right
after it, so a cut between an assistant message with tool calls and its
results leaves either calls without results or results without a call, and
every later request is a 400. Because results always follow their call at
once, one rule is enough:

    the kept part may start at any message but a tool message

    ... assistant(calls a, b) │ tool a │ tool b │ user │ assistant(call c) │ tool c
                  ▲ ok           ✗        ✗      ▲ ok       ▲ ok            ✗

A turn, for dropping the oldest one, is cut the same way: an assistant
message, its results and whatever follows them, up to the next assistant
message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.messages import Message

Count = Callable[[Message], int]


def clean_start(history: Sequence[Message], index: int) -> bool:
    """Whether kept messages may start at `index`: never at a tool result, whose call
    would be left behind (and with it, any other result of the same call)."""
    return history[index].role != "tool"


def head_end(history: Sequence[Message]) -> int:
    """How many messages at the start are never summarised: up to the first user message
    (the system prompt and the user's prompt, verbatim)."""
    for index, message in enumerate(history):
        if message.role == "user":
            return index + 1
    return len(history)


def kept_start(history: Sequence[Message], budget: int, count: Count, *, after: int) -> int:
    """Where the kept recent messages start: the earliest clean start at or after `after`
    from which everything to the end fits in `budget`; `len(history)` if none does."""
    start, used = len(history), 0
    for index in range(len(history) - 1, after - 1, -1):
        used += count(history[index])
        if used > budget:
            break
        if clean_start(history, index):
            start = index
    return start


def without_oldest_turn(messages: Sequence[Message], *, after: int) -> list[Message] | None:
    """`messages` without their oldest turn at or after `after`; None if fewer than two
    turns are left there (the newest turn is never dropped)."""
    turns = [i for i in range(after, len(messages)) if messages[i].role == "assistant"]
    if len(turns) < 2:
        return None
    return [*messages[: turns[0]], *messages[turns[1] :]]

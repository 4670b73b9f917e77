"""A model that replays a script: for tests, benchmarks and `--demo`.

Each scripted step is a Chat Completions *response body*, exactly what a
provider sends, so the scripted run goes through the same parser and the same
loop as a real one. A step may also be a function of the request, which is how
the demo quotes the real output of the command it asked for.

The scripted model labels itself as scripted wherever it speaks: in its
`label` (shown by the spinner) and in the text of its messages, when built
with `scripted_text`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from shared.errors import AgentError

Step = Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]
SCRIPTED_MARK = "[scripted]"


class ScriptExhaustedError(AgentError):
    """The loop asked for more turns than the script has."""


class ScriptedModel:
    def __init__(self, steps: Sequence[Step], *, name: str = "scripted-model") -> None:
        self.steps = list(steps)
        self.name = name
        self.label = f"{name} (scripted, no network)"
        self.requests: list[dict[str, Any]] = []  # deep copies, as each request was sent

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.requests.append(copy.deepcopy(dict(request)))
        if len(self.requests) > len(self.steps):
            raise ScriptExhaustedError(
                f"the scripted model has {len(self.steps)} replies and was asked for more"
            )
        step = self.steps[len(self.requests) - 1]
        return step(request) if callable(step) else step


def tool_call(call_id: str, name: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """One tool call as it appears on the wire. A dict `arguments` stays a dict on purpose:
    some providers send an object, and tests use this to check the loop accepts it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def response(
    content: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    *,
    finish_reason: str | None = None,
    message_extras: Mapping[str, Any] | None = None,
    model: str = "scripted-model",
) -> dict[str, Any]:
    """A Chat Completions response body with one choice.

    `finish_reason` defaults to what OpenAI sends: "tool_calls" when there are
    tool calls, else "stop". Tests override it to play other providers.
    """
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    message.update(message_extras or {})
    if finish_reason is None:
        finish_reason = "tool_calls" if tool_calls else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def scripted_text(text: str) -> str:
    """Text a scripted model says, marked so no reader mistakes it for a real model."""
    return f"{SCRIPTED_MARK} {text}"


def last_tool_result(request: Mapping[str, Any]) -> str:
    """The content of the newest tool message in a request (what the demo quotes)."""
    for message in reversed(request["messages"]):
        if message["role"] == "tool":
            return str(message["content"])
    raise ValueError(f"no tool message in request: {json.dumps(request)[:200]}")

"""The four message roles of the history, as frozen pydantic models.

The history is the agent's whole memory: a list of these, appended to and never
edited. Freezing each message makes "never edited" a property of the code, not
a habit. `message.wire` is the dict the Chat Completions API expects; it is
computed once per message, because the same history is sent again every turn.
"""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _HistoryMessage(_Frozen):
    """A message that can be sent: its wire dict is built once, on first use.

    The same history goes out again on every turn, so serialising each message
    once keeps the per-turn cost flat as the history grows (scripts/bench_loop.py).
    """

    omitted_when_empty: ClassVar[tuple[str, ...]] = ()

    @cached_property
    def wire(self) -> dict[str, Any]:
        """The dict the API expects. Shared between turns: never mutate it."""
        wire = self.model_dump(mode="json")
        for key in self.omitted_when_empty:
            if not wire.get(key):
                del wire[key]
        return wire


class FunctionCall(_Frozen):
    name: str
    arguments: str  # a JSON string, kept byte-for-byte as the model wrote it


class ToolCall(_Frozen):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall
    # A provider's own data on the call, which it wants back unchanged with the next
    # request (Gemini's thought signature: `{"google": {"thought_signature": ...}}`).
    extra_content: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _without_absent_extra(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No `extra_content` key at all when the provider sent none."""
        wire = handler(self)
        if isinstance(wire, dict) and wire.get("extra_content") is None:
            wire.pop("extra_content", None)
        return wire


class SystemMessage(_HistoryMessage):
    role: Literal["system"] = "system"
    content: str


class UserMessage(_HistoryMessage):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(_HistoryMessage):
    omitted_when_empty = ("tool_calls", "reasoning_content")

    role: Literal["assistant"] = "assistant"
    content: str | None = None  # null stays null: a tools-only turn has no text
    tool_calls: tuple[ToolCall, ...] = ()
    # DeepSeek's thinking mode rejects the next request unless this comes back
    # with the tool calls it led to; kept only on messages that carry tool calls.
    reasoning_content: str | None = None


class ToolMessage(_HistoryMessage):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage,
    Field(discriminator="role"),
]

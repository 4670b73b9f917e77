"""What chapter 8's tests share: an agent with the chapter's pieces, a tool whose output size
the script chooses, replies that carry usage, and ways to build histories by hand.

The pieces are put together the way a composition module would: the offloader
as the last finisher, then the features transcript → old results → compactor.
Only the model (a `ScriptedModel`) and, where a test needs one, the authorizer
are scripted.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch01.loop import run_agent
from chapters.ch08.compaction import Compactor
from chapters.ch08.offload import Offloader
from chapters.ch08.old_results import OldResults
from chapters.ch08.transcript import Transcript
from shared.agent import AgentSpec, Feature, Run
from shared.calls import Authorizer, CallPipeline, PendingCall
from shared.console import Console
from shared.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from shared.scripted import ScriptedModel, Step, response, tool_call
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolRegistry, ToolResult

SYSTEM = "You are a test agent."
PROMPT = "Read the logs and tell me what broke. Do not touch prod."
RUN_ID = "run-1"


# --- the tools ------------------------------------------------------------------------------


class EmitArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: int = Field(description="How many characters to return; negative: fail.")
    fill: str = Field(default="x", min_length=1, max_length=1)


def emitted(size: int, fill: str = "x") -> str:
    """The exact text `emit` returns: numbered lines of `fill`, `size` characters in all."""
    line = f"{fill * 59}\n"
    text = "".join(f"{n:07d} {line}" for n in range((size + 67) // 68))
    return ("ok: " + text)[:size]


def emit_tool() -> PydanticTool:
    """A read-only tool whose result is exactly as long as the model asks."""

    def emit(args: EmitArgs) -> ToolResult:
        if args.size < 0:
            return ToolResult.failed("emit_failed", "x" * -args.size)
        return ToolResult.success(emitted(args.size, args.fill))

    return PydanticTool(
        name="emit",
        description="Return some text.",
        args_model=EmitArgs,
        side_effect=SideEffect.READ,
        run=emit,
        key=KeyArgument("fill", KeyKind.TEXT),
    )


class PageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str


def page_tool(root: Path) -> PydanticTool:
    """A stand-in for read_file: the whole file, with a path key as read_file has."""

    def page(args: PageArgs) -> ToolResult:
        return ToolResult.success((root / args.path).read_text(encoding="utf-8"))

    return PydanticTool(
        name="page",
        description="Read a file.",
        args_model=PageArgs,
        side_effect=SideEffect.READ,
        run=page,
        key=KeyArgument("path", KeyKind.PATH),
    )


class DenyFill:
    """An authorizer that refuses every call with one `fill`: a rule, or a human saying no."""

    def __init__(self, fill: str) -> None:
        self.fill = fill

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        if pending.prepared.arguments.plain.get("fill") == self.fill:
            return ToolResult.denied(f"fill {self.fill!r} is not allowed")
        return None


# --- what the scripted model sends ------------------------------------------------------------


def emit(call_id: str, size: int, fill: str = "x") -> dict[str, Any]:
    return tool_call(call_id, "emit", json.dumps({"size": size, "fill": fill}))


def with_usage(body: dict[str, Any], prompt_tokens: int | None) -> dict[str, Any]:
    if prompt_tokens is not None:
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": 10}
    return body


def calling(*calls: Mapping[str, Any], tokens: int | None = None) -> dict[str, Any]:
    """A reply with tool calls and, when given, the prompt tokens the provider counted."""
    return with_usage(response(None, list(calls)), tokens)


def answering(text: str = "done", tokens: int | None = None) -> dict[str, Any]:
    return with_usage(response(text), tokens)


def summary(text: str = "SUMMARY: the task, what was done, what is left.") -> dict[str, Any]:
    return response(text)


# --- the agent ------------------------------------------------------------------------------


def plain_console() -> Console:
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=False)


def printed(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


class Rig:
    """The chapter's pieces around one scripted model, in a workspace of their own."""

    def __init__(
        self,
        root: Path,
        steps: Sequence[Step],
        *,
        window: int = 32_000,
        compact_at: float = 0.8,
        keep_tokens: int | None = None,
        keep_results: int = 6,
        offload_over: int = 20_000,
        authorize: Sequence[Authorizer] = (),
        max_turns: int = 50,
        model: Any = None,
        more_features: Sequence[Feature] = (),
        tools: Callable[[Path], Sequence[PydanticTool]] | None = None,
    ) -> None:
        self.root = root
        self.model = model if model is not None else ScriptedModel(steps)
        self.console = plain_console()
        self.offloader = Offloader(root, self.console, over=offload_over)
        self.transcript = Transcript(root, RUN_ID)
        self.old_results = OldResults(self.offloader, self.transcript, keep=keep_results)
        self.compactor = Compactor(
            self.transcript, window=window, compact_at=compact_at, keep_tokens=keep_tokens
        )
        self.history: list[Message] = []
        self.spec = AgentSpec(
            model=self.model,
            tools=ToolRegistry(tools(root) if tools else [emit_tool(), page_tool(root)]),
            calls=CallPipeline(authorize=authorize, finish=[self.offloader]),
            console=self.console,
            system_prompt=SYSTEM,
            features=[*more_features, self.transcript, self.old_results, self.compactor],
            max_turns=max_turns,
        )

    def run(self, prompt: str = PROMPT) -> str:
        return run_agent(prompt, self.spec, history=self.history)

    @property
    def requests(self) -> list[dict[str, Any]]:
        requests: list[dict[str, Any]] = self.model.requests
        return requests

    def printed(self) -> str:
        return printed(self.console)

    def transcript_lines(self) -> list[dict[str, Any]]:
        text = self.transcript.path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]


class EveryMessage(Feature):
    """Writes down every message that enters the history, with its turn."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, dict[str, Any]]] = []

    def on_message(self, run: Run, message: Message) -> None:
        self.seen.append((run.turn, message.wire))


def is_compaction(request: Mapping[str, Any]) -> bool:
    last = request["messages"][-1]
    return last["role"] == "user" and str(last["content"]).startswith("[compact]")


# --- histories built by hand --------------------------------------------------------------------


def assistant(*ids: str, text: str | None = None) -> AssistantMessage:
    calls = tuple(ToolCall(id=i, function=FunctionCall(name="emit", arguments="{}")) for i in ids)
    return AssistantMessage(content=text, tool_calls=calls)


def tool(call_id: str, content: str = "ok: fine") -> ToolMessage:
    return ToolMessage(tool_call_id=call_id, content=content)


def start() -> list[Message]:
    return [SystemMessage(content=SYSTEM), UserMessage(content=PROMPT)]

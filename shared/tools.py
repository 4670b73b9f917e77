"""Tools, the registry that holds them, and the snapshot a request sees.

A tool is a name, a description, a pydantic model for its arguments, the side
effect it has, and a function that runs it. The JSON schema the model sees is
generated from the same pydantic model that validates the call, so the two can
never drift apart.

Two phases keep validation free of side effects:
    `prepare` looks the tool up, parses the JSON, validates; it touches nothing.
    `invoke`  runs the tool; it is only reached after approval.
Both return failures as a `ToolResult`: a failed call is information for the
model, never an exception that ends the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from shared.messages import ToolCall


class SideEffect(StrEnum):
    """What a tool does to the world; decides whether a human must approve it."""

    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"

    @property
    def needs_approval(self) -> bool:
        return self is not SideEffect.READ

    @property
    def approval_reason(self) -> str:
        """Why a human is asked, in the words the approval prompt shows."""
        return {
            SideEffect.READ: "read: only reads",
            SideEffect.WRITE: "write: changes files on disk",
            SideEffect.EXECUTE: "execute: runs a program on your machine with your permissions",
        }[self]


@dataclass(frozen=True)
class ToolResult:
    """What the model reads back. `status` is a stable keyword a test or a policy can match."""

    # "ok", "shell_failed", "timeout", "denied", "unknown_tool", "invalid_arguments", "tool_error"
    status: str
    content: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def failed(cls, status: str, detail: str) -> ToolResult:
        """A failure the model reads: the status keyword first, then what to do."""
        return cls(status, f"{status}: {detail}")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args_model: type[BaseModel]
    side_effect: SideEffect
    run: Callable[[Any], ToolResult]  # receives a validated `args_model` instance
    # Optional, no side effects: what the human is shown before approving (a diff, say),
    # or a ToolResult when the call is bound to fail, so nobody is asked about it.
    preview: Callable[[Any], str | ToolResult] | None = None

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool definition, generated from `args_model` once."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _without_titles(self.args_model.model_json_schema()),
            },
        }


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed lookup and validation; nothing has run yet."""

    call: ToolCall
    tool: Tool
    args: BaseModel
    preview: str | None = None  # shown with the approval prompt

    def invoke(self) -> ToolResult:
        """Run the tool. A bug inside it is still a result, so the call still gets its answer."""
        try:
            return self.tool.run(self.args)
        except Exception as error:
            return ToolResult(
                "tool_error",
                f"tool_error: {self.tool.name} failed inside the harness "
                f"({type(error).__name__}: {error}); the call may not have completed.",
            )


class ToolSnapshot:
    """The tools visible to one request, frozen when the request is built.

    The model saw exactly these schemas, so exactly these tools may run for its
    answer: a tool registered afterwards is invisible here and cannot run.
    """

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self._tools = MappingProxyType(dict(tools))
        self._schemas = tuple(tool.schema for tool in self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def schemas(self) -> tuple[dict[str, Any], ...]:
        return self._schemas

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        """Look up, parse, validate, preview a call. No side effects; failures are results."""
        name = call.function.name
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return ToolResult(
                "unknown_tool",
                f"unknown_tool: there is no tool named {name!r}; the call did not run. "
                f"Available tools: {available}.",
            )
        try:
            raw_args = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError as error:
            return ToolResult(
                "invalid_arguments",
                f"invalid_arguments: the arguments of {name} are not valid JSON ({error.msg} "
                f"at position {error.pos}); the call did not run. Send one JSON object.",
            )
        except RecursionError:  # `"[" * 5000`: too deep for json's recursion
            return ToolResult(
                "invalid_arguments",
                f"invalid_arguments: the arguments of {name} are nested too deeply to read; "
                "the call did not run. Send one flat JSON object.",
            )
        except ValueError as error:  # a number of more than 4300 digits, say
            return ToolResult(
                "invalid_arguments",
                f"invalid_arguments: the arguments of {name} cannot be read ({error}); "
                "the call did not run. Send one JSON object.",
            )
        if not isinstance(raw_args, dict):
            return ToolResult(
                "invalid_arguments",
                f"invalid_arguments: the arguments of {name} must be a JSON object, "
                f"got {type(raw_args).__name__}; the call did not run.",
            )
        try:
            args = tool.args_model.model_validate(raw_args)
        except ValidationError as error:
            return ToolResult(
                "invalid_arguments",
                f"invalid_arguments: {name} rejected its arguments; the call did not run. "
                f"{_describe(error)}",
            )
        return _with_preview(PreparedCall(call=call, tool=tool, args=args))


def _with_preview(prepared: PreparedCall) -> PreparedCall | ToolResult:
    """Compute the tool's preview, if it has one; a call bound to fail becomes its result."""
    if prepared.tool.preview is None:
        return prepared
    try:
        preview = prepared.tool.preview(prepared.args)
    except Exception as error:
        return ToolResult(
            "tool_error",
            f"tool_error: {prepared.tool.name} could not prepare the call "
            f"({type(error).__name__}: {error}); it did not run.",
        )
    if isinstance(preview, ToolResult):
        return preview
    return replace(prepared, preview=preview)


class ToolRegistry:
    """The tools an agent has. Mutable; a request only ever sees a `snapshot()`."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def snapshot(self) -> ToolSnapshot:
        return ToolSnapshot(self._tools)


def _without_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the model should see it: no pydantic titles, no docstring, no `$ref`.

    Nested models (chapter 5's todo items) come out of pydantic as `$defs` and
    `$ref`; they are inlined, because not every OpenAI-compatible provider
    resolves references in tool schemas. The tool description says what the
    model docstring would.
    """
    definitions = schema.get("$defs", {})

    def clean(node: Any, top: bool = False) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        dropped = {"title", "$defs", "$ref"} | ({"description"} if top else set())
        cleaned = {}
        if "$ref" in node:  # the definition, then what pydantic put beside the reference
            cleaned = clean(definitions[node["$ref"].rsplit("/", 1)[-1]])
        for key, value in node.items():
            if key == "properties":  # its keys are field names, and a field may be "title"
                cleaned[key] = {name: clean(prop) for name, prop in value.items()}
            elif key not in dropped:
                cleaned[key] = clean(value)
        return cleaned

    return dict(clean(schema, top=True))


def _describe(error: ValidationError) -> str:
    """One readable line per problem, e.g. `command: field required`."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return "Problems: " + "; ".join(problems) + "."

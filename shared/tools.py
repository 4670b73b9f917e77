"""Tools, the registry that holds them, and the snapshot a request sees.

A tool states, as data, everything the harness needs to know about it: its
name and description, the JSON Schema of its arguments, how raw arguments are
validated, the side effect it has, which argument a permission rule matches,
and whether it may run at the same time as other calls. `Tool` is that
protocol, so the harness never depends on how a tool is written. The tools
this course writes are `PydanticTool`s: their arguments are a pydantic model,
so the schema the model sees and the validation are generated from the same
class and can never drift apart.

Two phases keep validation free of side effects:
    `prepare` looks the tool up, parses the JSON, validates; it touches nothing.
    `invoke`  runs the tool; it is only reached after approval.
Both return failures as a `ToolResult`: a failed call is information for the
model, never an exception that ends the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from shared.errors import AgentLimitError
from shared.messages import ToolCall


class SideEffect(StrEnum):
    """What a tool does to the world; decides whether a human must approve it."""

    READ = "read"  # looks, changes nothing
    STATE = "state"  # changes only the agent's own state (a plan, say), nothing on the machine
    WRITE = "write"  # changes files
    EXECUTE = "execute"  # runs a program

    @property
    def needs_approval(self) -> bool:
        return self in (SideEffect.WRITE, SideEffect.EXECUTE)

    @property
    def approval_reason(self) -> str:
        """Why a human is asked, in the words the approval prompt shows."""
        return {
            SideEffect.READ: "read: only reads",
            SideEffect.STATE: "state: changes only the agent's own state",
            SideEffect.WRITE: "write: changes files on disk",
            SideEffect.EXECUTE: "execute: runs a program on your machine with your permissions",
        }[self]


class Status(StrEnum):
    """How a call ended, as the harness reasons about it: a closed set.

    The finer reason (`not_read`, `no_match`, `timeout`, ...) is the result's
    `keyword`, the word the model reads first; the harness never branches on it.
    """

    OK = "ok"  # the tool did what was asked
    FAILED = "failed"  # it ran, or tried to, and says why it did not do what was asked
    DENIED = "denied"  # refused by a person, a rule, a hook or a mode: it did not run
    INVALID = "invalid"  # no such tool, or arguments that do not validate: it did not run
    ERROR = "error"  # the tool or the harness broke; the call may not have completed


@dataclass(frozen=True)
class ToolResult:
    """What the model reads back: `content`, which starts with `keyword` when it is a failure."""

    status: Status
    content: str
    keyword: str = ""  # e.g. "not_read"; empty means the status itself ("ok", "denied")

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):  # a word outside the closed set: ValueError
            object.__setattr__(self, "status", Status(self.status))
        if not self.keyword:
            object.__setattr__(self, "keyword", self.status.value)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @classmethod
    def success(cls, content: str) -> ToolResult:
        return cls(Status.OK, content)

    @classmethod
    def failed(cls, keyword: str, detail: str, status: Status = Status.FAILED) -> ToolResult:
        """A failure the model reads: the keyword first, then what to do."""
        return cls(status, f"{keyword}: {detail}", keyword)

    @classmethod
    def denied(cls, detail: str) -> ToolResult:
        return cls.failed("denied", detail, Status.DENIED)

    def with_notes(self, notes: Sequence[str]) -> ToolResult:
        """The same result with lines added for the model (what a hook said, say)."""
        if not notes:
            return self
        return replace(self, content="\n".join([self.content, *notes]))


class KeyKind(StrEnum):
    """How a permission rule reads a tool's key argument."""

    COMMAND = "command"  # a command line: a rule matches each command it runs
    PATH = "path"  # a file path: resolved in the workspace, matched by gitignore patterns
    TEXT = "text"  # any other string: matched exactly, or as a prefix with `:*`


@dataclass(frozen=True)
class KeyArgument:
    """The one argument a permission rule `tool(spec)` is matched against."""

    name: str
    kind: KeyKind = KeyKind.TEXT


@dataclass(frozen=True)
class Arguments:
    """Validated arguments: what the tool's function receives, and the same as plain JSON data."""

    value: Any  # what the tool's own function receives (a pydantic model instance, say)
    plain: Mapping[str, Any]  # what approval, policy, audit and hooks look at


class Tool(Protocol):
    """What the harness needs to know about a tool, whatever defines it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def side_effect(self) -> SideEffect: ...
    @property
    def key(self) -> KeyArgument | None: ...
    @property
    def concurrency_safe(self) -> bool: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...

    def validate(self, raw: Mapping[str, Any]) -> Arguments | str:
        """The validated arguments, or one line per problem (the call then does not run)."""
        ...

    def preview_call(self, arguments: Arguments) -> str | ToolResult | None:
        """No side effects: what a human sees before approving (a diff, say), or a result
        when the call is bound to fail, so that nobody is asked about it."""
        ...

    def invoke(self, arguments: Arguments) -> ToolResult: ...


@dataclass(frozen=True)
class PydanticTool:
    """A tool whose arguments are a pydantic model: one class is both schema and validator."""

    name: str
    description: str
    args_model: type[BaseModel]
    side_effect: SideEffect
    run: Callable[[Any], ToolResult]  # receives a validated `args_model` instance
    preview: Callable[[Any], str | ToolResult] | None = None
    key: KeyArgument | None = None
    concurrency_safe: bool = False

    @cached_property
    def parameters(self) -> Mapping[str, Any]:
        return _inlined(self.args_model.model_json_schema())

    def validate(self, raw: Mapping[str, Any]) -> Arguments | str:
        try:
            value = self.args_model.model_validate(raw)
        except ValidationError as error:
            return _describe(error)
        return Arguments(value, value.model_dump())

    def preview_call(self, arguments: Arguments) -> str | ToolResult | None:
        return None if self.preview is None else self.preview(arguments.value)

    def invoke(self, arguments: Arguments) -> ToolResult:
        return self.run(arguments.value)


def function_definition(tool: Tool) -> dict[str, Any]:
    """The OpenAI function-tool definition the model sees."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed lookup and validation; nothing has run yet."""

    call: ToolCall
    tool: Tool
    arguments: Arguments
    preview: str | None = None  # shown with the approval prompt

    def invoke(self) -> ToolResult:
        """Run the tool. A bug inside it is still a result, so the call still gets its answer.

        One error is not the tool's to answer: a limit of the whole run reached
        inside it (a request budget that an agent started by the tool shares with
        this one). That ends the run, as running out of turns does.
        """
        try:
            return self.tool.invoke(self.arguments)
        except AgentLimitError:
            raise
        except Exception as error:
            return ToolResult.failed(
                "tool_error",
                f"{self.tool.name} failed inside the harness ({type(error).__name__}: {error}); "
                "the call may not have completed.",
                Status.ERROR,
            )


class ToolSnapshot:
    """The tools visible to one request, frozen when the request is built.

    The model saw exactly these schemas, so exactly these tools may run for its
    answer: a tool registered afterwards is invisible here and cannot run.
    """

    def __init__(self, tools: Mapping[str, Tool], definitions: Sequence[dict[str, Any]]) -> None:
        self._tools = MappingProxyType(dict(tools))
        self._definitions = tuple(definitions)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def schemas(self) -> tuple[dict[str, Any], ...]:
        return self._definitions

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        """Look up, parse, validate, preview a call. No side effects; failures are results."""
        name = call.function.name
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return ToolResult.failed(
                "unknown_tool",
                f"there is no tool named {name!r}; the call did not run. "
                f"Available tools: {available}.",
                Status.INVALID,
            )
        raw = _parse_json(name, call.function.arguments)
        if isinstance(raw, ToolResult):
            return raw
        arguments = tool.validate(raw)
        if isinstance(arguments, str):
            return _invalid(f"{name} rejected its arguments; the call did not run. {arguments}")
        return _with_preview(PreparedCall(call=call, tool=tool, arguments=arguments))


def _parse_json(name: str, text: str) -> dict[str, Any] | ToolResult:
    try:
        raw = json.loads(text or "{}")
    except json.JSONDecodeError as error:
        return _invalid(
            f"the arguments of {name} are not valid JSON ({error.msg} at position {error.pos}); "
            "the call did not run. Send one JSON object."
        )
    except RecursionError:  # `"[" * 5000`: too deep for json's recursion
        return _invalid(
            f"the arguments of {name} are nested too deeply to read; the call did not run. "
            "Send one flat JSON object."
        )
    except ValueError as error:  # a number of more than 4300 digits, say
        return _invalid(
            f"the arguments of {name} cannot be read ({error}); the call did not run. "
            "Send one JSON object."
        )
    if not isinstance(raw, dict):
        return _invalid(
            f"the arguments of {name} must be a JSON object, got {type(raw).__name__}; "
            "the call did not run."
        )
    return raw


def _invalid(detail: str) -> ToolResult:
    return ToolResult.failed("invalid_arguments", detail, Status.INVALID)


def _with_preview(prepared: PreparedCall) -> PreparedCall | ToolResult:
    """Compute the tool's preview, if it has one; a call bound to fail becomes its result."""
    try:
        preview = prepared.tool.preview_call(prepared.arguments)
    except Exception as error:
        return ToolResult.failed(
            "tool_error",
            f"{prepared.tool.name} could not prepare the call "
            f"({type(error).__name__}: {error}); it did not run.",
            Status.ERROR,
        )
    if preview is None:
        return prepared
    if isinstance(preview, ToolResult):
        return preview
    return replace(prepared, preview=preview)


class ToolRegistry(Mapping[str, Tool]):
    """The tools an agent has, by name. Mutable; a request only ever sees a `snapshot()`."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._definitions: dict[str, dict[str, Any]] = {}
        for tool in tools:
            self.register(tool)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._definitions[tool.name] = function_definition(tool)  # built once, sent every turn

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry of some of these tools (the same objects); an unknown name is an error."""
        wanted = list(names)
        unknown = [name for name in wanted if name not in self._tools]
        if unknown:
            raise KeyError(f"no tool named {', '.join(map(repr, unknown))}")
        return ToolRegistry(self._tools[name] for name in wanted)

    def without(self, *names: str) -> ToolRegistry:
        """These tools minus some (those not here are ignored)."""
        return ToolRegistry(tool for name, tool in self._tools.items() if name not in names)

    def snapshot(self) -> ToolSnapshot:
        return ToolSnapshot(self._tools, list(self._definitions.values()))


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the model should see it: no pydantic titles, no docstring, no `$ref`.

    Nested models come out of pydantic as `$defs` and `$ref`; they are inlined,
    because not every OpenAI-compatible provider resolves references in tool
    schemas. The tool description says what the model docstring would.
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

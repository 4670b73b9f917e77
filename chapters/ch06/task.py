"""`task`: start a sub-agent on a fresh history, and hand back only its answer.

The child is a second run of the one loop (chapters/ch01/loop.py), built with
`AgentSpec.child` from the parent's parts:

    shared with the parent    the model, the call pipeline (so the same policy,
                              hooks, audit and human judge each of its calls), the
                              request budget, the Stop hooks
    its own                   a history that starts with its system prompt and the
                              task's prompt; a fresh set of tools cut to its
                              definition (its own read ledger, its own plan); its
                              max_turns, capped by the parent's; a nested console
    never                     the task tool: sub-agents do not start sub-agents

What bounds a child: its turns, at most its definition's max_turns and never more
than the parent's (`--max-turns`), so no agent of the run takes more turns than
the user allowed; and the request budget the whole family shares (`--max-requests`,
chapters/ch06/budget.py). The cap is the parent's max_turns, not the turns it has
left: a child's turns are not the parent's (the child's requests count against
the budget, not against the parent's turns), and a limit that shrank as the parent
went on would give the same task a different bound depending on when it was
started, which nobody could predict. The budget already bounds the family's total.

The parent gets exactly one tool message for the call: the child's answer and
one line on what it used, or `subagent_failed: ...` in one line when the child
ended without an answer. Only the family's request budget running out is not
the child's failure: it ends the whole run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch01.loop import run_agent
from chapters.ch06.budget import LIMIT_NAME
from chapters.ch06.definitions import DEFAULT_AGENT, TASK_TOOL, AgentCatalog, AgentDefinition
from shared.agent import AgentSpec, Feature, Run
from shared.errors import AgentError, AgentLimitError, one_line
from shared.messages import Message, ToolMessage
from shared.tools import (
    KeyArgument,
    KeyKind,
    PydanticTool,
    SideEffect,
    Status,
    ToolRegistry,
    ToolResult,
)

FAILED = "subagent_failed"
MAX_TURNS_HELP = (
    "How many model requests each agent may make: the main agent, and each sub-agent too "
    "(its definition's max_turns, but never more than this). --max-requests bounds them "
    "all together."
)


class TaskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    description: str = Field(
        min_length=1, max_length=80, description="A short label for the task, shown to the user."
    )
    prompt: str = Field(
        min_length=1,
        description=(
            "The whole assignment. The sub-agent sees nothing of this conversation: say what "
            "to find or do, and what to report."
        ),
    )
    agent: str = Field(default=DEFAULT_AGENT, description="Which agent does it (listed above).")


Start = Callable[[AgentDefinition, TaskArgs], ToolResult]


def make_task_tool(agents: AgentCatalog, start: Start) -> PydanticTool:
    """`task`, whose description lists every agent in `agents`; `start` runs a child.

    Delegating changes nothing by itself: each call the child makes is judged on
    its own by the same pipeline. So the policy sees `task` as a `state` call
    (allowed in every mode, asked about in none), and a rule can still name it,
    by agent: `--deny 'task(general)'`.
    """

    def check_agent(args: TaskArgs) -> ToolResult | str:
        """In prepare, before anyone is asked: an unknown agent is invalid. The preview a
        human sees, if a rule asks, is the whole prompt (arguments are shown shortened)."""
        if agents.get(args.agent) is None:
            return ToolResult.failed(
                "invalid_arguments",
                f"there is no agent named {args.agent!r}, so nothing ran. Available agents: "
                f"{', '.join(agents.names)}.",
                Status.INVALID,
            )
        return args.prompt

    def run(args: TaskArgs) -> ToolResult:
        definition = agents.get(args.agent)
        if definition is None:  # prepare refused it already; a direct call is refused too
            checked = check_agent(args)
            assert isinstance(checked, ToolResult)
            return checked
        return start(definition, args)

    return PydanticTool(
        name=TASK_TOOL,
        description=(
            "Hand a side task to a sub-agent. It works in a context of its own (it sees only "
            "your prompt, nothing of this conversation), with its own tools, and sends back "
            "only its final answer: use it for searches and reading that would otherwise fill "
            "your context. Sub-agents cannot start sub-agents. Agents:\n" + agents.listed()
        ),
        args_model=TaskArgs,
        side_effect=SideEffect.STATE,
        run=run,
        preview=check_agent,
        key=KeyArgument("agent", KeyKind.TEXT),
    )


@dataclass
class Tally(Feature):
    """What one child used: its model requests and its tool calls."""

    requests: int = 0
    tool_calls: int = 0

    def before_request(self, run: Run) -> None:
        self.requests += 1

    def on_message(self, run: Run, message: Message) -> None:
        if isinstance(message, ToolMessage):
            self.tool_calls += 1

    def __str__(self) -> str:
        return f"{_count(self.requests, 'model request')}, {_count(self.tool_calls, 'tool call')}"


@dataclass(frozen=True)
class Delegation:
    """How the task tool starts a child of `parent`."""

    parent: AgentSpec
    tools: Callable[[], ToolRegistry]  # a fresh set of the parent's tools, without task
    features: Callable[[AgentDefinition], Sequence[Feature]]  # the budget first

    def start(self, definition: AgentDefinition, args: TaskArgs) -> ToolResult:
        console = self.parent.console
        console.info(f"子智能体 sub-agent {definition.name}: {args.description}")
        tally = Tally()
        child = self.parent.child(
            name=definition.name,
            tools=self.child_tools(definition),
            system_prompt=definition.system_prompt,
            max_turns=min(definition.max_turns, self.parent.max_turns),  # never above the parent's
            features=[*self.features(definition), tally],
            console=console.nested(definition.name),
        )
        try:
            answer = run_agent(args.prompt, child)  # a fresh history: nothing of the parent's
        except AgentLimitError as error:
            if error.limit == LIMIT_NAME:  # the family's budget, not the child's: the run ends
                raise
            return _failed(definition, tally, _out_of_turns(definition, error.max_turns))
        except AgentError as error:
            return _failed(definition, tally, f"{type(error).__name__}: {error}")
        return ToolResult.success(f"{answer.rstrip()}\n\n[sub-agent {definition.name}: {tally}]")

    def child_tools(self, definition: AgentDefinition) -> ToolRegistry:
        tools = self.tools().without(TASK_TOOL)
        return tools if definition.tools is None else tools.subset(definition.tools)


def _failed(definition: AgentDefinition, tally: Tally, why: str) -> ToolResult:
    return ToolResult.failed(
        FAILED,
        one_line(
            f"{definition.name} ended without an answer after {tally}: {why}. Nothing else of "
            "its work reaches you; try a narrower prompt or another agent, or do it yourself.",
            600,
        ),
    )


def _out_of_turns(definition: AgentDefinition, max_turns: int) -> str:
    """Why a child stopped: its turns ran out, and whose limit they were."""
    why = f"it used all {max_turns} turns its max_turns allows"
    if max_turns < definition.max_turns:
        why += f" (its definition says {definition.max_turns}; the parent's caps it)"
    return why


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def not_started(definition: AgentDefinition, args: TaskArgs) -> ToolResult:
    """The start of a task tool that only describes itself, for rules and `check`."""
    return ToolResult.failed(
        "tool_error", "this task tool is not connected to an agent; nothing ran.", Status.ERROR
    )

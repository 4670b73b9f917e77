"""Which of its tools the agent gets: all of them, or the ones `--tools` names.

Every tool is a line of the system prompt and a schema in every request, and
every tool is a way to go wrong. A strong model ignores what it does not need;
a 1.5B model does not: given `task` it hands a two-line fix to a sub-agent and
chats with it until the turns run out, and given `todo_write` it plans a task
of one step and says the plan is the work. `--tools read_file,edit_file,...`
leaves the rest out of the registry, so they are neither offered nor described
(chapter 10 writes a tool's guidance only for the tools there are).

A name that is not one of the chapter's tools is a usage error naming them all,
before anything starts: a misspelt name must not quietly leave a tool out.

A sub-agent gets the chosen tools its definition lists: `--tools read_file,task`
starts explore (read_file, glob, grep) with read_file alone. An agent left with
no tool at all is not offered (task's description leaves it out, and a call for
it is answered that there is no such agent); with no agent left, task is not
offered either. The start says which agents lost which tools, so a reader who
chose the tools sees what the choice took from the agents.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace

import click

from chapters.ch06.definitions import TASK_TOOL, AgentCatalog, AgentDefinition
from shared.tools import ToolRegistry

SEPARATOR = ","

tools_option = click.option(
    "--tools",
    "tool_names",
    metavar="NAMES",
    help="Only these tools, separated by commas, e.g. read_file,edit_file (default: all).",
)


def parse_tool_names(text: str | None, known: Iterable[str]) -> frozenset[str] | None:
    """The names `--tools` lists (None: every tool); an unknown or empty one is exit 2."""
    if text is None:
        return None
    known = tuple(known)
    names = [name.strip() for name in text.split(SEPARATOR)]
    if not any(names) or not all(names):
        raise click.BadParameter(
            f"list tool names separated by commas, like read_file,edit_file; the tools are: "
            f"{', '.join(known)}",
            param_hint="--tools",
        )
    unknown = [name for name in names if name not in known]
    if unknown:
        raise click.BadParameter(
            f"no tool named {', '.join(map(repr, unknown))}; the tools are: {', '.join(known)}",
            param_hint="--tools",
        )
    return frozenset(names)


def keep_only(tools: ToolRegistry, chosen: Collection[str] | None) -> ToolRegistry:
    """The tools of `tools` that are chosen (all when nothing was chosen), in their order."""
    if chosen is None:
        return tools
    return tools.subset(name for name in tools.names if name in chosen)


@dataclass(frozen=True)
class ChosenAgents:
    """The agents a run with chosen tools can start, and what the choice took from the others."""

    agents: AgentCatalog  # each with the tools it keeps; none is left without a tool
    lost: Mapping[str, tuple[str, ...]]  # agent -> the tools its definition lists, not chosen
    left_out: Mapping[str, tuple[str, ...] | None]  # agent -> its definition's tools (None: all)

    def described(self) -> str:
        """What the choice took, for the start's `tools:` line ("" when nothing)."""
        parts = [f"{name} without {', '.join(tools)}" for name, tools in self.lost.items()]
        for name, listed in self.left_out.items():
            needs = "a tool besides task" if listed is None else f"one of {', '.join(listed)}"
            parts.append(f"{name} left out (it needs {needs})")
        if self.left_out and not self.agents.names:
            parts.append(f"no agent left: {TASK_TOOL} is not offered")
        return " · ".join(parts)


def choose_agents(agents: AgentCatalog, child_tools: Collection[str]) -> ChosenAgents:
    """`agents`, each cut to `child_tools` (the tools a child of this run can have: the
    chosen ones, without task); an agent left with none is left out."""
    kept: dict[str, AgentDefinition] = {}
    lost: dict[str, tuple[str, ...]] = {}
    left_out: dict[str, tuple[str, ...] | None] = {}
    for name, definition in agents.agents.items():
        listed = definition.tools
        tools = tuple(child_tools if listed is None else (t for t in listed if t in child_tools))
        if not tools:
            left_out[name] = listed
            continue
        if listed is not None and len(tools) < len(listed):
            lost[name] = tuple(t for t in listed if t not in child_tools)
            definition = replace(definition, tools=tools)
        kept[name] = definition
    return ChosenAgents(AgentCatalog(kept, agents.hidden), lost, left_out)

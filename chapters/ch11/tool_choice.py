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
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import click

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

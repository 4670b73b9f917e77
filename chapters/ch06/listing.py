"""`python -m tutorial agents --chapter N`: the sub-agents a run would see from here.

The definitions are loaded exactly as the chapter's agent loads them (built in,
then `~/.tutorial/agents/`, then the workspace's `.tutorial/agents/`), so a
definition with a problem fails here the same way (exit 2), before any run.
Nothing is started and no model is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch02.options import workspace_option
from chapters.ch06.definitions import AgentDefinition
from shared.cli import FriendlyCommand
from shared.recipe import listed_tools

if TYPE_CHECKING:
    from shared.recipe import Recipe


def make_agents_command(recipe: Recipe) -> click.Command:
    """`agents` for a chapter's recipe: the agents its task tool can start from here."""

    @click.command(name="agents", cls=FriendlyCommand)
    @workspace_option
    def agents_command(workspace: Path | None) -> None:
        """List the agents the task tool can start: name, source file, tools, max_turns."""
        from chapters.ch06.parts import AGENTS

        setup = recipe.setup({"workspace": workspace})
        tools = listed_tools(setup, child=True).names
        catalog = setup.get(AGENTS)
        for definition in catalog.agents.values():
            click.echo(describe(definition, tools))
        for hidden in catalog.hidden:
            winner = catalog.agents[hidden.name].source
            click.echo(f"(not used: {hidden.name} from {hidden.source}; {winner} has that name)")

    return agents_command


def describe(definition: AgentDefinition, parent_tools: tuple[str, ...]) -> str:
    if definition.tools is None:
        tools = f"{', '.join(parent_tools)} (the parent's, minus task)"
    else:
        tools = ", ".join(definition.tools) or "(none)"
    return (
        f"{definition.name}\n"
        f"  source: {definition.source}\n"
        f"  tools: {tools}\n"
        f"  max_turns: {definition.max_turns}\n"
        f"  {definition.description}"
    )

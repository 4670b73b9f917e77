"""Chapter 6's parts: sub-agents, started by a `task` tool, and one budget for the family.

agents  the agent definitions (built in, ~/.tutorial/agents/, .tutorial/agents/),
        checked against the tools a child may have (exit 2 if malformed); their
        folders become control files; `agents` lists them
budget  --max-requests: one request budget for the agent and all its children,
        the first feature of each (chapters/ch06/budget.py)
task    the task tool, made once the agent it starts children of exists
        (chapters/ch06/task.py); each agent's name in the Stop event
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chapters.ch02.parts import WORKSPACE
from chapters.ch03.parts import POLICY
from chapters.ch04.parts import STOP_FIELDS
from chapters.ch06.budget import MAX_REQUESTS
from chapters.ch06.task import MAX_TURNS_HELP
from shared.cli import count_option
from shared.parts import Build, Later, Part, Setup, Subcommand
from shared.recipe import FEATURES, TOOLS, child_parts, home_folder, listed_tools
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch06.definitions import AgentCatalog
    from chapters.ch06.task import Delegation
    from shared.agent import AgentSpec, Feature
    from shared.tools import ToolRegistry

AGENTS: Key[AgentCatalog] = Key("the agents the task tool can start")


class AgentsPart(Part):
    """The agent definitions, loaded and checked once per command."""

    name = "agents"
    summary = "the agent definitions the task tool can start; `agents` lists them"

    def setup(self, setup: Setup) -> None:
        from chapters.ch06.definitions import agent_folders, load_agents

        def made() -> AgentCatalog:
            children = listed_tools(setup, child=True).names  # what a definition may list
            return load_agents(setup.get(WORKSPACE).root, home_folder(setup), children)

        setup.provide(AGENTS, made)
        setup.decorate(
            POLICY,
            lambda p: p.protecting(agent_folders(setup.get(WORKSPACE).root, home_folder(setup))),
        )
        setup.add_banner("agents", lambda: f"agents: {', '.join(setup.get(AGENTS).names)}")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch06.listing import make_agents_command

        return {
            "agents": Subcommand(
                make_agents_command,
                help="List the sub-agents a chapter's task tool can start from here; nothing runs.",
                absent="Chapter {n} has no sub-agents; use chapter 6 or later",
            )
        }


class BudgetPart(Part):
    """--max-requests: the family's model requests, counted first in every agent."""

    name = "budget"
    summary = "--max-requests: one budget for the agent and all its children"
    options = (
        count_option(
            "--max-requests",
            MAX_REQUESTS,
            "Model requests the agent and all its sub-agents may make together.",
        ),
    )

    def setup(self, setup: Setup) -> None:
        setup.add_banner(
            "agents", lambda: f"max_requests: {setup.option('max_requests')}", after=["agents"]
        )

    def contribute(self, build: Build) -> None:
        budget = build.shared(BUDGET, lambda: self.budget(build.setup.option("max_requests")))
        build.add(FEATURES, budget, phase=Phase.FIRST, children=True)

    def budget(self, max_requests: int) -> Feature:
        from chapters.ch06.budget import RequestBudget

        return RequestBudget(max_requests)


BUDGET: Key[Feature] = Key("the family's request budget")


class TaskPart(Part):
    """task: a sub-agent in a fresh context; each agent names itself in the Stop event."""

    name = "task"
    summary = "task: run a sub-agent in a fresh context; only its answer returns"
    starts_children = True
    max_turns_help = MAX_TURNS_HELP

    def contribute(self, build: Build) -> None:
        from chapters.ch06.task import not_started

        name = build.name
        build.add(
            STOP_FIELDS, lambda: {"agent": name}, phase=Phase.FIRST, label="agent", children=True
        )
        if build.child:
            return
        agents = build.get(AGENTS)
        if not agents.names:
            return
        later = Later(
            "task",
            make=lambda agent: self.tool(agents, self.delegation(build, agent)),
            stand_in=lambda: self.stand_in(agents, not_started),
        )
        build.add(TOOLS, later, phase=Phase.LAST, label="task")

    def delegation(self, build: Build, agent: AgentSpec) -> Delegation:
        """How task starts a child of `agent`: a child's tools and features from the recipe."""
        from chapters.ch06.task import Delegation

        def tools() -> ToolRegistry:
            return child_parts(build, "child")[0]

        def features(definition: Any) -> list[Feature]:
            return child_parts(build, definition.name)[1]

        return Delegation(agent, tools, features)

    def tool(self, agents: AgentCatalog, delegation: Delegation) -> Any:
        from chapters.ch06.task import make_task_tool

        return make_task_tool(agents, delegation.start)

    def stand_in(self, agents: AgentCatalog, start: Any) -> Any:
        from chapters.ch06.task import make_task_tool

        return make_task_tool(agents, start)

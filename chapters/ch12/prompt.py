"""The built-in general sub-agent's prompt, without chapter 5's todo_write line.

Chapter 6 gave the general sub-agent chapter 5's prompt, whose last line says
to plan with todo_write. This chapter's agents have no todo_write: the task
tools took its place, for the agent and its children alike. A prompt that
names a tool the agent lacks invites a call to it, which fails as an unknown
tool and costs a turn. The main agent's prompt needs no change: chapter 10
writes a tool's line only when the agent has the tool. The general agent's
prompt is a fixed text, so here it becomes chapter 2's prompt and the
sub-agent's rules, exactly what it was without the plan's line. A definition
from a file keeps its own prompt: what it says is its author's.
"""

from __future__ import annotations

from dataclasses import replace

from chapters.ch02.prompt import SYSTEM_PROMPT as FILE_TOOLS_PROMPT
from chapters.ch06.definitions import BUILT_IN, AgentCatalog
from chapters.ch06.prompt import GENERAL_PROMPT, SUB_AGENT_RULES

GENERAL_WITHOUT_PLAN = f"{FILE_TOOLS_PROMPT}\n{SUB_AGENT_RULES}"


def without_todo_write(catalog: AgentCatalog) -> AgentCatalog:
    """`catalog` with each built-in definition that has chapter 6's general prompt given
    `GENERAL_WITHOUT_PLAN` instead; every other definition as it was."""
    agents = {
        name: replace(definition, system_prompt=GENERAL_WITHOUT_PLAN)
        if definition.source == BUILT_IN and definition.system_prompt == GENERAL_PROMPT
        else definition
        for name, definition in catalog.agents.items()
    }
    return replace(catalog, agents=agents)

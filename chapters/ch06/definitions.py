"""Agent definitions: which sub-agents the `task` tool can start, and what each one gets.

Two are built in:

    general   the parent's tools minus task, max_turns 10, chapter 5's prompt plus
              what a sub-agent must know
    explore   read_file, glob and grep only, max_turns 10, a prompt for finding things
              and reporting them with file paths and line numbers

More come from Markdown files, in the format Claude Code uses for its subagents:

    .tutorial/agents/<name>.md      in the workspace: the project's agents
    ~/.tutorial/agents/<name>.md    in your home folder: yours, for every project

front matter (chapters/ch06/frontmatter.py) with `name`, `description`,
optional `tools` and optional `max_turns`, and a body that is the agent's
system prompt. On a name clash the project's definition wins over yours, and
yours over a built-in one. A file is read as read_file would read it: a link
that leads out of the workspace (or, for yours, the home folder) is refused, and
so is anything but a regular file of at most `MAX_DEFINITION_BYTES`. A
definition with a problem stops the run before any request (exit 2), naming the
file and the problem: an agent that silently lost a tool, or gained all of
them, is worse than none.

A definition decides what a sub-agent is told and which tools it gets, so both
folders are control files of the harness (chapters/ch03/control.py): the agent
writes into them only with a human's yes (`agent_folders`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from chapters.ch03.control import ControlFile, in_workspace_and_home
from chapters.ch06.frontmatter import FrontMatterError, Value, parse_front_matter
from chapters.ch06.prompt import EXPLORE_PROMPT, GENERAL_PROMPT
from chapters.ch06.written_files import (
    WORKSPACE,
    YOUR_HOME,
    UnreadableFile,
    as_text,
    read_written_file,
    too_large,
)
from shared.agent import MAIN_AGENT
from shared.errors import ConfigError

AGENTS_FOLDER = Path(".tutorial") / "agents"  # below the workspace, and below your home folder
DEFAULT_AGENT = "general"
DEFAULT_MAX_TURNS = 10
MAX_DEFINITION_BYTES = 64 * 1024  # of a definition file: a system prompt of some 16,000 tokens
TASK_TOOL = "task"
BUILT_IN = "built in"
FIELDS = ("name", "description", "tools", "max_turns")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str  # what the task tool's description says about it
    system_prompt: str
    tools: tuple[str, ...] | None  # None: the parent's tools minus task
    max_turns: int = DEFAULT_MAX_TURNS
    source: str = BUILT_IN  # where it was defined: "built in", ".tutorial/agents/x.md", ...


def built_in_agents() -> list[AgentDefinition]:
    return [
        AgentDefinition(
            name=DEFAULT_AGENT,
            description=(
                "A general-purpose agent with your tools (except task) for a side task "
                "of several steps."
            ),
            system_prompt=GENERAL_PROMPT,
            tools=None,
        ),
        AgentDefinition(
            name="explore",
            description=(
                "Read-only (read_file, glob, grep): finds where things are in the workspace "
                "and reports file paths and line numbers."
            ),
            system_prompt=EXPLORE_PROMPT,
            tools=("read_file", "glob", "grep"),
        ),
    ]


@dataclass(frozen=True)
class AgentCatalog:
    """The agents a run can start, by name; and the definitions a closer one hid."""

    agents: Mapping[str, AgentDefinition]
    hidden: tuple[AgentDefinition, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.agents)

    def listed(self) -> str:
        """One line per agent, `- name: description`, for the task tool's description."""
        return "\n".join(f"- {a.name}: {a.description}" for a in self.agents.values())


def agent_folders(workspace: Path, home: Path) -> list[ControlFile]:
    """Where definitions are loaded from, for the policy's control files."""
    return in_workspace_and_home(workspace, home, AGENTS_FOLDER, folder=True)


def load_agents(workspace: Path, home: Path, known_tools: Collection[str]) -> AgentCatalog:
    """Built-in agents, then yours, then the project's; a later one of the same name wins.

    `known_tools` are the tools a definition may list: the parent's, minus task.
    """
    by_name: dict[str, AgentDefinition] = {}
    hidden: list[AgentDefinition] = []
    folders = [(home, "~/", YOUR_HOME), (workspace, "", WORKSPACE)]
    seen: set[Path] = set()
    loaded = list(built_in_agents())
    for base, prefix, where in folders:
        folder = base / AGENTS_FOLDER
        if folder.is_dir() and folder.resolve() not in seen:  # run in your home: one folder
            seen.add(folder.resolve())
            loaded += read_folder(base, prefix, known_tools, where)
    for definition in loaded:
        if definition.name in by_name:
            hidden.append(by_name[definition.name])
        by_name[definition.name] = definition
    return AgentCatalog(by_name, tuple(hidden))


def read_folder(
    base: Path, prefix: str, known_tools: Collection[str], where: str = WORKSPACE
) -> list[AgentDefinition]:
    """Every `*.md` file directly in `base`'s agents folder, by file name; two of one name are
    an error. `prefix` is how people write `base` ("~/", or "" for the workspace)."""
    definitions: dict[str, AgentDefinition] = {}
    for path in sorted((base / AGENTS_FOLDER).glob("*.md")):
        if path.is_dir():
            continue
        relative = AGENTS_FOLDER / path.name
        definition = read_definition(
            base, relative, f"{prefix}{relative.as_posix()}", known_tools, where
        )
        if (other := definitions.get(definition.name)) is not None:
            raise ConfigError(
                f"{definition.source}: the name {definition.name} is taken by {other.source}; "
                "give one of them another name"
            )
        definitions[definition.name] = definition
    return list(definitions.values())


def read_definition(
    base: Path,
    relative: Path,
    shown: str,
    known_tools: Collection[str],
    where: str = WORKSPACE,
) -> AgentDefinition:
    """One definition file, `base / relative`; any problem is a ConfigError that names it.

    Read as read_file would read it (chapters/ch06/written_files.py): never from
    outside `base`, only a regular file, at most `MAX_DEFINITION_BYTES`.
    """
    try:
        data = read_written_file(base, relative, limit=MAX_DEFINITION_BYTES, where=where)
        if len(data) > MAX_DEFINITION_BYTES:
            raise too_large(MAX_DEFINITION_BYTES, "a definition")
        text = as_text(data)
    except (UnreadableFile, UnicodeDecodeError) as error:
        raise ConfigError(f"{shown}: cannot be read ({error})") from None
    try:
        parsed = parse_front_matter(text)
        return definition_from(parsed.fields, parsed.body, shown, known_tools)
    except (FrontMatterError, DefinitionError) as error:
        raise ConfigError(f"{shown}: {error}") from None


class DefinitionError(ValueError):
    """The front matter parsed, but says something an agent cannot be."""


def definition_from(
    fields: Mapping[str, Value], body: str, source: str, known_tools: Collection[str]
) -> AgentDefinition:
    unknown = [key for key in fields if key not in FIELDS]
    if unknown:
        raise DefinitionError(f"unknown field {unknown[0]}; the fields are {', '.join(FIELDS)}")
    name = _text(fields, "name")
    if not _NAME.fullmatch(name):
        raise DefinitionError(
            f"name {name!r} must be 1 to 40 lowercase letters, digits, - or _, "
            "starting with a letter or digit"
        )
    if name == MAIN_AGENT:
        raise DefinitionError(f"the name {MAIN_AGENT} is the agent you start; choose another")
    if not body:
        raise DefinitionError("no system prompt: write it below the closing --- line")
    return AgentDefinition(
        name=name,
        description=_text(fields, "description"),
        system_prompt=body,
        tools=_tools(fields["tools"], known_tools) if "tools" in fields else None,
        max_turns=_max_turns(fields["max_turns"]) if "max_turns" in fields else DEFAULT_MAX_TURNS,
        source=source,
    )


def _text(fields: Mapping[str, Value], key: str) -> str:
    value = fields.get(key)
    if value is None:
        raise DefinitionError(f"{key} is missing; every definition needs a name and a description")
    if value == "":
        raise DefinitionError(f"{key} has no value")
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"{key} must be one line of text")
    return value.strip()


def _tools(value: Value, known_tools: Collection[str]) -> tuple[str, ...]:
    """`read_file, grep` (as Claude Code writes it) or a list; every name a known tool."""
    if value == "":
        raise DefinitionError(
            "tools has no value: list tool names, or leave the line out for all of them"
        )
    names = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if any(not name for name in names):
        raise DefinitionError("tools has an empty name (two commas in a row?)")
    for name in names:
        if name == TASK_TOOL:
            raise DefinitionError(
                f"tools: {TASK_TOOL} is not allowed: sub-agents do not start sub-agents"
            )
        if name not in known_tools:
            raise DefinitionError(
                f"tools: no tool named {name!r}; the tools are {', '.join(known_tools)}"
            )
    return tuple(dict.fromkeys(names))


def _max_turns(value: Value) -> int:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9]+", value) or int(value) < 1:
        shown = value if isinstance(value, str) else f"[{', '.join(value)}]"
        raise DefinitionError(f"max_turns must be a positive whole number, not {shown!r}")
    return int(value)

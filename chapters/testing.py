"""The one test harness: any chapter's agent, built from its recipe, with test-given parts.

A test names what it gives by the words the chapters use (`approver`, `workspace`,
`policy`, `plan`, `max_turns`, ...): the name of a `Key` a parts module declares, in
lower case, or an option's; `agent_of` hands each to the recipe as the service or the
option it is, and everything not given is made by the recipe's own parts, as the
command line makes it. So a promise test of chapter K runs against every later
chapter's recipe unchanged, and a new chapter's keys need no entry here:

    agent = agent_of(chapter, model=model, console=console, workspace=Workspace(tmp_path),
                     asker=ScriptedAsker([...]), max_turns=5)

A name the recipe has no part for is simply not used (chapter 1 has no policy),
so one call serves every chapter that keeps the promise; a name nobody knows is a
TypeError, so a typo does not pass silently.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Generic, TypeVar

from chapters.ch02.workspace import Workspace
from shared.agent import AgentSpec
from shared.completion import ModelClient
from shared.console import Console
from shared.messages import AssistantMessage, Message, ToolMessage
from shared.parts import Setup
from shared.recipe import Recipe, build_agent
from shared.slots import Key

M = TypeVar("M", bound=ModelClient)  # the model a rig makes

# Every `Key` a chapter's parts module (or the spine) declares may be given by its name
# in lower case (`WORKSPACE` as `workspace=`), as these other names too.
ALIASES = {"cwd": "folder", "log": "transcript"}


def recipe_of(chapter: int) -> Recipe:
    recipe: Recipe = import_module(f"chapters.ch{chapter:02d}.agent").RECIPE
    return recipe


def _chapters() -> list[int]:
    """The chapters that have a recipe: a package that holds only a chapter's first modules,
    before its agent exists, is not one yet."""
    found = []
    for chapter in range(1, 100):
        if find_spec(f"chapters.ch{chapter:02d}") is None:
            break
        if find_spec(f"chapters.ch{chapter:02d}.agent") is not None:
            found.append(chapter)
    return found


@cache
def known_keys() -> dict[str, Key[Any]]:
    """Every key a test may give, by name: the spine's and every chapter's parts'."""
    modules = ["shared.recipe"] + [
        f"chapters.ch{n:02d}.parts"
        for n in _chapters()
        if find_spec(f"chapters.ch{n:02d}.parts") is not None
    ]
    keys: dict[str, Key[Any]] = {}
    for module in modules:
        for name, value in vars(import_module(module)).items():
            if isinstance(value, Key):
                keys.setdefault(name.lower(), value)
    keys.update({alias: keys[name] for alias, name in ALIASES.items() if name in keys})
    return keys


@cache
def _options_of_any_chapter() -> frozenset[str]:
    """The options of every chapter's recipe: one a later chapter has is not a typo."""
    return frozenset(p.name for n in _chapters() for p in recipe_of(n).params() if p.name)


def _sorted_out(
    recipe: Recipe, given: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[Key[Any], Any]]:
    """`given` as (options of this recipe, services)."""
    keys = known_keys()
    options = {p.name for p in recipe.params() if p.name}
    unknown = set(given) - set(keys) - _options_of_any_chapter()
    if unknown:
        raise TypeError(
            f"chapters/testing.py knows no {sorted(unknown)}: not the name of a Key in a "
            f"chapter's parts.py (in lower case) nor an option of any chapter"
        )
    chosen: dict[str, Any] = {}
    services: dict[Key[Any], Any] = {}
    for name, value in given.items():
        if name == "workspace" and isinstance(value, Path):
            chosen[name] = value  # --workspace, not the Workspace itself
        elif name in keys:
            services[keys[name]] = value
        elif name in options:
            chosen[name] = value
    return chosen, services


def setup_of(
    chapter: int,
    options: Mapping[str, Any] | None = None,
    services: Mapping[Key[Any], Any] | None = None,
    **given: Any,
) -> Setup:
    """Chapter `chapter`'s command set up with `options` (the rest: defaults) and `given`
    (services and options by name; `services` by key)."""
    recipe = recipe_of(chapter)
    chosen, by_name = _sorted_out(recipe, given)
    return recipe.setup({**dict(options or {}), **chosen}, {**by_name, **dict(services or {})})


def agent_of(
    chapter: int,
    *,
    model: ModelClient,
    console: Console,
    options: Mapping[str, Any] | None = None,
    services: Mapping[Key[Any], Any] | None = None,
    **given: Any,
) -> AgentSpec:
    """Chapter `chapter`'s main agent for one run, as its command would build it. What a
    test gives wins over what the parts would make, for the run and for every child."""
    setup = setup_of(chapter, options, services, **given)
    return build_agent(setup, model, console)


def quiet_console() -> Console:
    """A plain console that records what it prints."""
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=False)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class AgentRun(Generic[M]):
    """A test's rig for one chapter's agent: the workspace in tmp_path/ws and the home
    folder in tmp_path/home, the agent built from the recipe on the first `run`, and what
    its runs did. A chapter's rig is a dataclass that subclasses this one: it sets
    `chapter`, adds its own fields (after `tmp_path`; the fields below it are keyword-only),
    makes its model in `make_model` and says what it gives `agent_of` in `given`.
    `options` are more of the same, for one test."""

    tmp_path: Path
    _: KW_ONLY
    console: Console = field(default_factory=quiet_console)
    options: Mapping[str, Any] = field(default_factory=dict)  # agent_of's names, for one test
    history: list[Message] = field(default_factory=list)
    model: M | None = None  # the rig's model, once built
    spec: AgentSpec | None = None

    @property
    def chapter(self) -> int:
        """Whose recipe builds the agent: a rig sets it (`chapter = 8`)."""
        raise NotImplementedError(f"{type(self).__name__} names no chapter")

    @property
    def root(self) -> Path:
        folder = self.tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        return folder

    @property
    def home(self) -> Path:
        folder = self.tmp_path / "home"
        folder.mkdir(exist_ok=True)
        return folder

    def make_model(self) -> M:
        raise NotImplementedError(f"{type(self).__name__} makes no model")

    def given(self) -> dict[str, Any]:
        """What this rig hands `agent_of` besides the workspace, home, model and console."""
        return {}

    def build(self) -> AgentSpec:
        """The chapter's agent, as its command builds it, with what the rig gives."""
        self.model = self.make_model()
        self.spec = agent_of(
            self.chapter,
            model=self.model,
            console=self.console,
            workspace=Workspace(self.root),
            home=self.home,
            **{**self.given(), **self.options},
        )
        return self.spec

    def run(self, prompt: str = "do the task") -> str:
        from chapters.ch01.loop import run_agent

        return run_agent(prompt, self.spec or self.build(), history=self.history)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request the model received, in order."""
        requests: list[dict[str, Any]] | None = getattr(self.model, "requests", None)
        if requests is None:
            raise AssertionError("the rig's model keeps no requests (or the agent has not run)")
        return requests

    def results(self) -> list[str]:
        """The tool messages' contents, in the history's order."""
        return [m.content for m in self.history if isinstance(m, ToolMessage)]

    def result(self, call_id: str) -> str:
        """The content of the one tool message that answers `call_id`."""
        found = [
            m.content
            for m in self.history
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id
        ]
        assert len(found) == 1, f"{call_id}: {found}"
        return found[0]

    def said(self) -> list[str | None]:
        """The assistant messages' text, in the history's order."""
        return [m.content for m in self.history if isinstance(m, AssistantMessage)]

    def printed(self) -> str:
        """What the run printed on stderr, without colour codes."""
        err = self.console.err
        if not isinstance(err, io.StringIO):
            raise AssertionError("the rig's console does not record: give it StringIO streams")
        return ANSI.sub("", err.getvalue())

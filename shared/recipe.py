"""A chapter's recipe: the previous chapter's parts, with its own added, replaced or removed.

From a recipe this module builds everything a chapter would otherwise write by
hand: the command (the common options, then each part's), the agent of one run
(`build_agent`), a child's tools and features (`child_parts`), the tool
list that only reads names (`listed_tools`), and the resolved composition a
reader reads (`python -m tutorial recipe`, tutorial/recipe_listing.py).

The spine's slots and services are defined here; a chapter that needs a new
one defines it in its own module, and names no later chapter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from shared.parts import Build, Later, Part, Setup
from shared.slots import Key, RecipeError, Slot, in_order

if TYPE_CHECKING:
    from shared.agent import AgentSpec
    from shared.completion import ModelClient
    from shared.config import Settings
    from shared.console import Console
    from shared.tools import ToolRegistry

# --- the spine's slots: where the loop and the call pipeline take entries ------------------

TOOLS = Slot[Any](
    "tools",
    "the tools the model may call (a Tool, or `Later` for one that needs the finished agent)",
)
TOOL_FILTERS = Slot[Callable[[Sequence[str]], Sequence[str]]](
    "tool filters", "which of the tools' names the agent keeps"
)
AUTHORIZE = Slot[Any]("authorize", "step 4: who may refuse a call before it runs")
FINISH = Slot[Any]("finish", "step 4: what sees each result after the call")
PIPELINE = Slot[Callable[..., Any]](
    "pipeline", "how a reply's calls are run: (authorize, finish) -> pipeline", single=True
)
CALL_LAYERS = Slot[Callable[[Any], Any]]("call layers", "wrappers around the call pipeline")
FEATURES = Slot[Any]("features", "what the loop calls at its named moments")
VIEWS = Slot[Callable[[], Any]]("views", "what the console keeps in view under its spinner")
MODEL_LAYERS = Slot[Callable[[Any], Any]](
    "model layers", "wrappers around the model client, innermost first"
)
REPLY_CHECK = Slot[Any](
    "reply check", "what the loop does with each reply's finish_reason", single=True
)
PROMPT = Slot[Any]("prompt", "the system prompt (text, or made from the tools' names)", single=True)
SPINE = (
    TOOLS,
    TOOL_FILTERS,
    AUTHORIZE,
    FINISH,
    PIPELINE,
    CALL_LAYERS,
    FEATURES,
    VIEWS,
    MODEL_LAYERS,
    REPLY_CHECK,
    PROMPT,
)

# --- the spine's services: what every command needs from some part -------------------------

FOLDER: Key[Path] = Key("the folder the agent works in")
HOME: Key[Path] = Key("the home folder")
RUN: Key[Callable[[str, Runner], str]] = Key("how a task is run")
CONSOLE: Key[Callable[[bool], Console]] = Key("the console (given --trace)")
CONNECT: Key[Callable[[Settings], ModelClient]] = Key("the model client for an endpoint")


def home_folder(setup: Setup) -> Path:
    """The home folder: the one a test gave, else the user's."""
    return setup.find(HOME, None) or Path.home()


@dataclass(frozen=True)
class Demo:
    """What `--demo` runs: the prompt, the scripted model, the folder it works in."""

    prompt: str
    model: Callable[[Setup], ModelClient]
    workspace: Callable[[], Path] | None = None
    script: Callable[..., str] | None = None  # a demo of several runs: (run one, console)


@dataclass(frozen=True)
class Recipe:
    """The parts of one chapter's agent, in order, and what its command says of itself."""

    chapter: int
    help: str
    demo: Demo
    parts: tuple[Part, ...]
    base: Recipe | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        return f"chapter {self.chapter}"

    def extend(
        self,
        *,
        chapter: int,
        help: str,
        demo: Demo,
        add: Sequence[Part] = (),
        replace: Mapping[str, Part] = {},
        remove: Sequence[str] = (),
    ) -> Recipe:
        """This recipe with `replace`d parts in their places, `remove`d ones gone, `add`ed
        ones at the end; a name that is not in the recipe is a `RecipeError`."""
        names = [part.name for part in self.parts]
        for name in [*replace, *remove]:
            if name not in names:
                raise RecipeError(f"chapter {chapter} changes part {name!r}, not in {self.title}")
        parts = [replace.get(p.name, p) for p in self.parts if p.name not in remove]
        parts += add
        seen: set[str] = set()
        for part in parts:
            if part.name in seen:
                raise RecipeError(f"chapter {chapter}'s recipe has two parts named {part.name!r}")
            seen.add(part.name)
        return Recipe(chapter, help, demo, tuple(parts), base=self)

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    def chapter_of(self, name: str) -> int:
        part = self.part(name)
        return part.chapter if part else self.chapter

    def where(self, name: str) -> str:
        return f"part {name!r} (chapter {self.chapter_of(name)})"

    # --- the command line ------------------------------------------------------------------

    def params(self) -> list[click.Parameter]:
        """The common options (shared/cli.py), then each part's, in the recipe's order."""
        from shared.cli import common_params

        helps = [p.max_turns_help for p in self.parts if p.max_turns_help]
        params: list[click.Parameter] = list(common_params(helps[-1] if helps else None))
        for part in self.parts:
            params += part.options
        return params

    def option_default(self, name: str) -> Any:
        """What the command gives `name` when the option is not on the command line."""
        if name not in self._defaults:
            raise RecipeError(f"{self.title}'s recipe has no option {name!r}")
        return self._defaults[name]

    @cached_property
    def _defaults(self) -> dict[str, Any]:
        """Every option's default, as the command gives it (made once: a recipe is frozen)."""
        return dict(self.command().make_context("recipe", [], resilient_parsing=True).params)

    def command(self) -> click.Command:
        """The chapter's command: `python -m chapters.chNN` and `tutorial run --chapter N`."""
        from shared.cli import FriendlyCommand

        def callback(**options: Any) -> None:
            run_command(self, options)

        return FriendlyCommand(
            name=f"ch{self.chapter:02d}", params=self.params(), callback=callback, help=self.help
        )

    def main(self, argv: Sequence[str] | None = None) -> int:
        """`python -m chapters.chNN`."""
        prog = f"python -m chapters.ch{self.chapter:02d}"
        return int(self.command().main(argv, prog_name=prog))

    def subcommands(self) -> dict[str, click.Command]:
        """The dispatcher's subcommands the parts bring, by the words that name them."""
        made: dict[str, click.Command] = {}
        for part in self.parts:
            for words, make in part.commands().items():
                made[words] = make(self)
        return made

    def setup(
        self, options: Mapping[str, Any], services: Mapping[Key[Any], Any] | None = None
    ) -> Setup:
        """Every part set up for these options (missing ones: their defaults); services are
        made when first asked for."""
        setup = Setup(self, options, services)
        for part in self.parts:
            setup.part = part.name
            part.setup(setup)
        setup.part = ""
        return setup


# --- one command ---------------------------------------------------------------------------


def run_command(recipe: Recipe, options: Mapping[str, Any]) -> None:
    """What a chapter's command does: check, set up, then run the session (shared/cli.py)."""
    from shared.cli import Session, require_prompt, run_session

    checking = Setup(recipe, options)
    for part in recipe.parts:
        checking.part = part.name
        part.check(checking)
    require_prompt(options.get("prompt"), bool(options.get("demo")))
    setup = recipe.setup(options)
    setup.make_all()

    def run(task: str, model: ModelClient, console: Console) -> str:
        show_banner(setup, console)
        return setup.get(RUN)(task, Runner(setup, model, console))

    session = Session(
        chapter=recipe.chapter,
        folder=setup.get(FOLDER),
        demo_model=lambda: recipe.demo.model(setup),
        demo_prompt=recipe.demo.prompt,
        run=run,
        console=setup.find(CONSOLE, None),
        connect=setup.find(CONNECT, None),
    )
    run_session(session, prompt=options.get("prompt"), trace=options["trace"], demo=setup.demo)


def show_banner(setup: Setup, console: Console) -> None:
    """The banner's lines, each made of its items in order, joined with " · "."""
    lines: dict[str, list[str]] = {}
    for entry in in_order(setup.banner, "the banner"):
        text = entry.value()
        if text:
            lines.setdefault(entry.label, []).append(text)
    for items in lines.values():
        console.info(" · ".join(items))


@dataclass(frozen=True)
class Runner:
    """What a part that runs tasks (RUN) is given: the model, the console, and the agent."""

    setup: Setup
    model: ModelClient
    console: Console

    def agent(
        self, services: Mapping[Key[Any], Any] | None = None, console: Console | None = None
    ) -> AgentSpec:
        """A new main agent for one run, with these per-run services."""
        return build_agent(self.setup, self.model, console or self.console, services)


# --- one agent -----------------------------------------------------------------------------


def contributed(build: Build) -> Build:
    """Every part's entries in `build`, in the recipe's order."""
    for part in build.setup.recipe.parts:
        build.part = part.name
        part.contribute(build)
    build.part = ""
    return build


def _tools(build: Build, filtered: bool = True) -> tuple[ToolRegistry, list[Later]]:
    """The tools `build` keeps after the filters, and those that wait for the finished agent."""
    from shared.tools import ToolRegistry

    tools = build.values(TOOLS)
    names = [tool.name for tool in tools]
    for keep in build.values(TOOL_FILTERS) if filtered else ():
        names = list(keep(names))
    kept = [tool for tool in tools if tool.name in names]
    return (
        ToolRegistry([t for t in kept if not isinstance(t, Later)]),
        [t for t in kept if isinstance(t, Later)],
    )


def build_agent(
    setup: Setup,
    model: ModelClient,
    console: Console,
    services: Mapping[Key[Any], Any] | None = None,
) -> AgentSpec:
    """The main agent of one run, from every part's entries."""
    from shared.agent import MAIN_AGENT, AgentSpec, stop_on_unfinished_reply
    from shared.calls import CallPipeline

    build = contributed(
        Build(setup, console=console, model=model, name=MAIN_AGENT, services=services)
    )
    tools, later = _tools(build)
    for view in build.values(VIEWS):
        console.keep_in_view(view)
    for layer in build.values(MODEL_LAYERS):
        model = layer(model)
    pipeline_of = build.only(PIPELINE, CallPipeline)
    calls = pipeline_of(
        authorize=tuple(build.values(AUTHORIZE)), finish=tuple(build.values(FINISH))
    )
    for layer in build.values(CALL_LAYERS):
        calls = layer(calls)
    prompt = build.only(PROMPT, "")
    names = (*tools.names, *(t.name for t in later))
    agent = AgentSpec(
        model=model,
        tools=tools,
        calls=calls,
        console=console,
        system_prompt=prompt if isinstance(prompt, str) else prompt(names),
        features=tuple(build.values(FEATURES)),
        max_turns=setup.option("max_turns"),
        check_reply=build.only(REPLY_CHECK, stop_on_unfinished_reply),
    )
    for tool in later:
        tools.register(tool.make(agent))
    return agent


def child_parts(
    build: Build,
    name: str,
    services: Mapping[Key[Any], Any] | None = None,
    console: Console | None = None,
) -> tuple[ToolRegistry, list[Any]]:
    """A child of `build`'s agent: its tools (never those made `Later`) and its features.
    `services`: the child's own, which a part may look for to know what kind of child it
    makes; `console`: the child's, when it prints elsewhere than the parent."""
    child = contributed(
        Build(
            build.setup,
            console=console or build.console,
            model=build.model,
            name=name,
            parent=build,
            services=services,
        )
    )
    return _tools(child)[0], child.values(FEATURES)


def listed_tools(setup: Setup, *, child: bool = False, filtered: bool = False) -> ToolRegistry:
    """The tools an agent (or a child) of this command has, for what only reads their
    names, keys and side effects: the rules, `permissions check`, the prompt's tool list.
    `filtered`: only those the tool filters keep (what a run offers), not every one."""
    from shared.agent import MAIN_AGENT

    root = Build(setup, console=None, model=None, name=MAIN_AGENT, listing=True)
    build = root
    if child:
        build = Build(setup, console=None, model=None, name="child", parent=root, listing=True)
    tools, later = _tools(contributed(build), filtered)
    for tool in later:
        tools.register(tool.stand_in())
    return tools


def spine_slots(build: Build) -> Iterable[Slot[Any]]:
    """The slots `build` has entries in: the spine's first, then the chapters' own."""
    return [
        *(s for s in SPINE if s in build.entries),
        *(s for s in build.entries if s not in SPINE),
    ]

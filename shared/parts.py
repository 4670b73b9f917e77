"""A part: one feature, with everything it brings to a chapter's agent.

A part declares, in the module of the chapter that introduces it:

    options       its click options (`options`)
    check         what it refuses in the options before anything starts (`check`)
    once          per command, before anything starts: read and check what it needs,
                  provide services to later parts, decorate an earlier part's (`setup`)
    per run       the entries it adds to the agent's slots (`contribute`), called once
                  for the agent and once for each child it starts (`Build.child`)
    commands      subcommands of the dispatcher (`commands`)

`Setup` is what a command knows once: the options and the services. `Build` is
one agent being made: its slots and its per-run services (a plan, a session
log), kept apart from the command's, as a run's state is kept apart from the
settings it runs with. Neither names a feature: the slots and keys a chapter
adds are defined in that chapter's modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import click

from shared.slots import Entry, Key, Phase, RecipeError, Slot

if TYPE_CHECKING:
    from shared.completion import ModelClient
    from shared.console import Console
    from shared.recipe import Recipe

T = TypeVar("T")
D = TypeVar("D")  # what `find` gives when nothing provides the service
Make = Callable[[], Any]


class Part:
    """One feature of an agent. Subclasses set `name` and override what they bring."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # one line for `tutorial recipe`
    options: Sequence[click.Parameter] = ()
    max_turns_help: ClassVar[str | None] = None  # what --max-turns bounds, if this part changes it
    # Whether the part starts child agents (each made by every part's `contribute` again,
    # `Build.child`): then `tutorial recipe` also lists what a child gets.
    starts_children: ClassVar[bool] = False

    from_chapter: int | None = None  # set by a part made for a later chapter's recipe

    @property
    def chapter(self) -> int:
        """The chapter the part comes from: the one whose module defines it (chapters/chNN/),
        unless the part was made for a later chapter's recipe."""
        if self.from_chapter is not None:
            return self.from_chapter
        module = type(self).__module__.split(".")
        return int(module[1][2:]) if len(module) > 1 and module[1].startswith("ch") else 0

    def check(self, setup: Setup) -> None:
        """Refuse a combination of options (a `click.UsageError`), before the prompt is."""

    def setup(self, setup: Setup) -> None:
        """Once per command: provide or decorate services, add banner items."""

    def contribute(self, build: Build) -> None:
        """Once per agent: add entries to its slots."""

    def commands(self) -> Mapping[str, Subcommand]:
        """Dispatcher subcommands, by the words that name them ("agents", "permissions check")."""
        return {}


@dataclass(frozen=True)
class Subcommand:
    """A dispatcher subcommand a part brings: `python -m tutorial WORDS --chapter N ...`.

    The dispatcher knows it, without importing a chapter, from the recipe listings
    (their `commands` section: the words, the part, `help`); it reads the rest only
    when it has to say it, from the first chapter whose recipe brings it.
    """

    make: Callable[[Recipe], click.Command]  # the command, made from a chapter's recipe
    help: str  # one line, for the dispatcher's --help
    absent: str  # said of a chapter before the first that has it ({n}: its number)
    example_args: str = ""  # after `WORDS --chapter N` in the example when --chapter is missing
    group_help: str = ""  # of two words: the help of the group the first names

    def __call__(self, recipe: Recipe) -> click.Command:
        """The command for `recipe` (`Recipe.subcommands` calls it)."""
        return self.make(recipe)


@dataclass(frozen=True)
class Later:
    """A tool that needs the finished agent (one that starts children, say).

    `stand_in` is the same tool for what only reads its name, key and side effects:
    the rules, `permissions check`, the tools a prompt lists.
    """

    name: str
    make: Callable[[Any], Any]  # AgentSpec -> Tool
    stand_in: Callable[[], Any]  # -> Tool


class Setup:
    """What one command knows before anything starts: its options and its services."""

    def __init__(
        self,
        recipe: Recipe,
        options: Mapping[str, Any],
        services: Mapping[Key[Any], Any] | None = None,
    ) -> None:
        self.recipe = recipe
        self.options = dict(options)
        self._given = dict(services or {})  # a test's or a caller's: they win
        self._makers: dict[Key[Any], tuple[str, Make]] = {}
        self._decorators: dict[Key[Any], list[tuple[str, Callable[[Any], Any]]]] = {}
        self._made: dict[Key[Any], Any] = {}
        self._making: list[Key[Any]] = []
        self.banner: list[Entry[Callable[[], str | None]]] = []
        self.part = ""  # the part being set up

    @property
    def demo(self) -> bool:
        return bool(self.options.get("demo"))

    def option(self, name: str) -> Any:
        """The option's value; for a command that lacks it (a subcommand), its default."""
        if name in self.options:
            return self.options[name]
        return self.recipe.option_default(name)

    def provide(self, key: Key[T], make: Callable[[], T]) -> None:
        """`key` is made by `make`, when first asked for (and surely before the run starts)."""
        if key in self._makers:
            raise RecipeError(
                f"{self.recipe.where(self.part)} provides {key.name}, which "
                f"{self.recipe.where(self._makers[key][0])} provides already: replace that part"
            )
        self._makers[key] = (self.part, make)

    def decorate(self, key: Key[T], change: Callable[[T], T]) -> None:
        """When `key` is made, `change` gets it and returns what later parts see."""
        self._decorators.setdefault(key, []).append((self.part, change))

    def has(self, key: Key[Any]) -> bool:
        return key in self._given or key in self._makers

    def get(self, key: Key[T]) -> T:
        if key in self._given:
            return cast(T, self._given[key])
        if key in self._made:
            return cast(T, self._made[key])
        if key not in self._makers:
            raise RecipeError(
                f"nothing in {self.recipe.title}'s recipe provides {key.name} "
                f"(asked for by {self.part or 'the recipe'})"
            )
        if key in self._making:
            cycle = " -> ".join(k.name for k in [*self._making, key])
            raise RecipeError(f"{self.recipe.title}'s services need each other: {cycle}")
        self._making.append(key)
        try:
            value = self._makers[key][1]()
            for _, change in self._decorators.get(key, ()):
                value = change(value)
        finally:
            self._making.pop()
        self._made[key] = value
        return cast(T, value)

    def find(self, key: Key[T], default: D) -> T | D:
        """`key`'s service, or `default` when no part of the recipe provides it."""
        return self.get(key) if self.has(key) else default

    def make_all(self) -> None:
        """Make every service now, in the order they were provided: a problem with one
        (a malformed settings file, say) ends the command before anything starts."""
        for key in list(self._makers):
            self.get(key)

    def add_banner(
        self,
        line: str,
        text: Callable[[], str | None],
        *,
        phase: Phase = Phase.NORMAL,
        before: Iterable[str] = (),
        after: Iterable[str] = (),
    ) -> None:
        """An item of the banner line `line` (items of one line are joined with " · "),
        placed as slot entries are."""
        chapter = self.recipe.chapter_of(self.part)
        entry = Entry(text, self.part, chapter, line, phase, tuple(before), tuple(after))
        self.banner.append(entry)

    def provided_by(self) -> dict[str, str]:
        """Each service's name and the part that provides it: `recipe --explain`."""
        return {key.name: part for key, (part, _) in self._makers.items()}

    def decorated_by(self) -> dict[str, list[str]]:
        """Each decorated service's name and the parts that decorate it, in order."""
        return {key.name: [part for part, _ in made] for key, made in self._decorators.items()}


class Build:
    """One agent being made: the entries of its slots and its per-run services."""

    def __init__(
        self,
        setup: Setup,
        *,
        console: Console | None,
        model: ModelClient | None,
        name: str,
        parent: Build | None = None,
        services: Mapping[Key[Any], Any] | None = None,
        listing: bool = False,
    ) -> None:
        self.setup = setup
        self.console = console
        self.model = model
        self.name = name  # the agent's name: "main", or the child's definition
        self.parent = parent
        self.listing = listing  # only names, keys and side effects are read: nothing runs
        self._services: dict[Key[Any], Any] = dict(services or {})
        self.entries: dict[Slot[Any], list[Entry[Any]]] = {}
        self.part = ""

    @property
    def child(self) -> bool:
        return self.parent is not None

    @property
    def root(self) -> Build:
        return self.parent.root if self.parent else self

    def add(
        self,
        slot: Slot[Any],
        value: Any,
        *,
        phase: Phase = Phase.NORMAL,
        before: Iterable[str] = (),
        after: Iterable[str] = (),
        children: bool = False,
        label: str | None = None,
    ) -> None:
        """Add `value` to `slot`. `children`: a child agent gets it too (made again for
        the child, since `contribute` runs again for it: a fresh plan, a fresh ledger)."""
        if self.child and not children:
            return
        if isinstance(value, Lazy) and label is None:
            raise RecipeError(
                f"{self.setup.recipe.where(self.part)} adds a value made later: label it"
            )
        entry = Entry(
            value,
            self.part,
            self.setup.recipe.chapter_of(self.part),
            label or describe(value),
            phase,
            tuple(before),
            tuple(after),
        )
        self.entries.setdefault(slot, []).append(entry)

    def later(self, make: Callable[[], T]) -> Lazy[T]:
        """A value made when a run reads the slots, once every part has contributed (and
        provided what it reads); a listing names it (its label) and never makes it. Put
        the same one in several slots, or `provide` it."""
        return Lazy(make)

    @property
    def run_console(self) -> Console:
        """The console of the run being built; a listing has none, so only what is made
        `later` may ask for it."""
        if self.console is None:
            raise RecipeError(f"{self.setup.recipe.where(self.part)} needs a run's console")
        return self.console

    def provide(self, key: Key[T], value: T | Lazy[T]) -> None:
        """A per-run service: this agent's (a child makes its own). A `later` value is
        made when first asked for."""
        self._services[key] = value

    def shared(self, key: Key[T], make: Callable[[], T]) -> T:
        """A per-run service shared by the agent and all its children (made once)."""
        root = self.root
        if key not in root._services:
            root._services[key] = self.setup.get(key) if self.setup.has(key) else make()
        return cast(T, root._services[key])

    def get(self, key: Key[T]) -> T:
        """This agent's service, else its parent's, else the command's."""
        build: Build | None = self
        while build is not None:
            if key in build._services:
                return cast(T, made(build._services[key]))
            build = build.parent
        return self.setup.get(key)

    def find(self, key: Key[T], default: D) -> T | D:
        """This agent's service, else its parent's, else the command's, else `default`."""
        build: Build | None = self
        while build is not None:
            if key in build._services:
                return cast(T, made(build._services[key]))
            build = build.parent
        return self.setup.find(key, default)

    def slot(self, slot: Slot[T]) -> list[Entry[T]]:
        """The entries of `slot`, in order."""
        from shared.slots import in_order

        return in_order(self.entries.get(slot, []), slot.name)

    def values(self, slot: Slot[T]) -> list[T]:
        return [made(entry.value) for entry in self.slot(slot)]

    def only(self, slot: Slot[T], default: T) -> T:
        """A single slot's value: its last entry's, else `default`."""
        entries = self.slot(slot)
        return made(entries[-1].value) if entries else default


class Lazy(Generic[T]):
    """A value `Build.later` makes on first use, then keeps."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: list[T] = []

    def __call__(self) -> T:
        if not self._made:
            self._made.append(self._make())
        return self._made[0]


def made(value: Any) -> Any:
    """An entry's value, made now if it was left for later."""
    return value() if isinstance(value, Lazy) else value


def describe(value: Any) -> str:
    """How the recipe listing names an entry: a tool's name, else its class or function."""
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    if callable(value) and hasattr(value, "__qualname__"):
        return str(value.__qualname__)
    return type(value).__name__

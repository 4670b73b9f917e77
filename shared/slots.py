"""Where a part's contributions go: named slots, typed service keys, and the order rule.

A feature is wired into the loop by adding entries to named slots (the tools,
the authorizers of step 4, the features, ...). An entry never edits a central
list: it says where it goes by a phase (first, normal, last) and, when that is
not enough, by `before=`/`after=` another part's name. `in_order` sorts the
entries of one slot by those rules, keeping the order the parts were added in
wherever the rules leave a choice, so a recipe that says nothing is read top
to bottom.

A `Key` names a service one part provides and others use (the workspace, the
policy, ...). Its name is what an error says when nothing provides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class RecipeError(Exception):
    """A recipe that cannot be built: the message names the part and what is missing."""


class Phase(IntEnum):
    """Where in its slot an entry goes, before any `before=`/`after=`."""

    FIRST = 0
    NORMAL = 1
    LAST = 2


@dataclass(frozen=True, eq=False)
class Key(Generic[T]):
    """A service's name: one part provides it, later parts read or decorate it."""

    name: str

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


@dataclass(frozen=True, eq=False)
class Slot(Generic[T]):
    """A place in the agent where parts add entries; `single`: only the last entry counts."""

    name: str
    doc: str
    single: bool = False

    def __repr__(self) -> str:
        return f"Slot({self.name!r})"


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One contribution: its value, which part made it, and where it goes."""

    value: T
    part: str
    chapter: int
    label: str
    phase: Phase = Phase.NORMAL
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def in_order(entries: Sequence[Entry[Any]], slot: str = "a slot") -> list[Entry[Any]]:
    """Sort by phase, then honour `before`/`after` (which name parts); ties keep their order.

    A `before`/`after` that names a part with no entry here is ignored: the part may not
    be in this recipe, or may contribute nothing to this run. A cycle is a `RecipeError`.
    """
    ranked = sorted(range(len(entries)), key=lambda at: (entries[at].phase, at))
    edges: dict[int, set[int]] = {at: set() for at in ranked}  # at -> what must come first
    for at in ranked:
        entry = entries[at]
        for other in ranked:
            name = entries[other].part
            if name in entry.after:
                edges[at].add(other)
            if name in entry.before:
                edges[other].add(at)
    placed: list[int] = []
    waiting = list(ranked)
    while waiting:
        ready = next((at for at in waiting if edges[at] <= set(placed)), None)
        if ready is None:
            names = ", ".join(sorted({entries[at].part for at in waiting}))
            raise RecipeError(f"the entries of {slot} from {names} ask to go before each other")
        placed.append(ready)
        waiting.remove(ready)
    return [entries[at] for at in placed]

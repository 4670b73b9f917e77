"""The one test harness: any chapter's agent, built from its recipe, with test-given parts.

A test names what it gives by the words the chapters use (`approver`, `workspace`,
`policy`, `plan`, `runner`, ...) and `agent_of` hands each to the recipe as the
service, per-run service or option it is; everything not given is made by the
recipe's own parts, as the command line makes it. So a promise test of chapter
K runs against every later chapter's recipe unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from shared.agent import AgentSpec
from shared.completion import ModelClient
from shared.console import Console
from shared.parts import Setup
from shared.recipe import Recipe, build_agent
from shared.slots import Key

# What a test may give, by name: (module, key) of a command's service...
SERVICES: dict[str, tuple[str, str]] = {
    "approver": ("chapters.ch01.parts", "APPROVER"),
    "cwd": ("shared.recipe", "FOLDER"),
    "runner": ("chapters.ch01.parts", "RUNNER"),
    "shell": ("chapters.ch01.parts", "SHELL"),
    "home": ("shared.recipe", "HOME"),
}
# ...and of a run's own (made fresh for each run: a plan, a session log).
PER_RUN: dict[str, tuple[str, str]] = {}


def recipe_of(chapter: int) -> Recipe:
    recipe: Recipe = import_module(f"chapters.ch{chapter:02d}.agent").RECIPE
    return recipe


def _key(where: tuple[str, str]) -> Key[Any]:
    key: Key[Any] = getattr(import_module(where[0]), where[1])
    return key


def setup_of(chapter: int, options: Mapping[str, Any] | None = None, **given: Any) -> Setup:
    """Chapter `chapter`'s command set up with `options` (the rest: defaults) and `given`."""
    recipe = recipe_of(chapter)
    unknown = set(given) - set(SERVICES) - set(PER_RUN)
    if unknown:
        raise TypeError(f"chapters/testing.py does not know {sorted(unknown)}")
    services = {_key(SERVICES[name]): value for name, value in given.items() if name in SERVICES}
    return recipe.setup(dict(options or {}), services)


def agent_of(
    chapter: int,
    *,
    model: ModelClient,
    console: Console,
    options: Mapping[str, Any] | None = None,
    **given: Any,
) -> AgentSpec:
    """Chapter `chapter`'s main agent for one run, as its command would build it."""
    options = dict(options or {})
    if "max_turns" in given:
        options["max_turns"] = given.pop("max_turns")
    setup = setup_of(chapter, options, **{k: v for k, v in given.items() if k not in PER_RUN})
    per_run = {_key(PER_RUN[name]): value for name, value in given.items() if name in PER_RUN}
    return build_agent(setup, model, console, per_run)

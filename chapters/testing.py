"""The one test harness: any chapter's agent, built from its recipe, with test-given parts.

A test names what it gives by the words the chapters use (`approver`, `workspace`,
`policy`, `plan`, `max_turns`, ...) and `agent_of` hands each to the recipe as the
service, per-run service or option it is; everything not given is made by the
recipe's own parts, as the command line makes it. So a promise test of chapter
K runs against every later chapter's recipe unchanged:

    agent = agent_of(chapter, model=model, console=console, workspace=Workspace(tmp_path),
                     asker=ScriptedAsker([...]), max_turns=5)

A name the recipe has no part for is simply not used (chapter 1 has no policy),
so one call serves every chapter that keeps the promise; a name nobody knows is a
TypeError, so a typo does not pass silently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from shared.agent import AgentSpec
from shared.completion import ModelClient
from shared.console import Console
from shared.parts import Setup
from shared.recipe import Recipe, build_agent
from shared.slots import Key

# What a test may give, by name: (module, key) of a command's service...
SERVICES: dict[str, tuple[str, str]] = {
    "cwd": ("shared.recipe", "FOLDER"),
    "home": ("shared.recipe", "HOME"),
    "approver": ("chapters.ch01.parts", "APPROVER"),
    "runner": ("chapters.ch01.parts", "RUNNER"),
    "shell": ("chapters.ch01.parts", "SHELL"),
    "output_limit": ("chapters.ch01.parts", "OUTPUT_LIMIT"),
    "workspace": ("chapters.ch02.parts", "WORKSPACE"),
    "search_hidden": ("chapters.ch02.parts", "SEARCH_HIDDEN"),
    "policy": ("chapters.ch03.parts", "POLICY"),
    "asker": ("chapters.ch03.parts", "ASKER"),
    "audit": ("chapters.ch03.parts", "AUDIT"),
    "hooks": ("chapters.ch04.parts", "HOOKS"),
    "agents": ("chapters.ch06.parts", "AGENTS"),
    "run_id": ("chapters.ch08.parts", "RUN_ID"),
    "memory": ("chapters.ch09.parts", "MEMORY"),
    "skills": ("chapters.ch10.parts", "SKILLS"),
    "today": ("chapters.ch10.parts", "TODAY"),
    "environment": ("chapters.ch10.parts", "ENVIRONMENT"),
    "clock": ("chapters.ch11.parts", "CLOCK"),
    "draw": ("chapters.ch11.parts", "DRAW"),
    "fallbacks": ("chapters.ch11.parts", "FALLBACKS"),
}
# ...and of a run's own (made fresh for each run: a plan, a session log).
PER_RUN: dict[str, tuple[str, str]] = {
    "plan": ("chapters.ch05.parts", "PLAN"),
    "budget": ("chapters.ch06.parts", "BUDGET"),
    "transcript": ("chapters.ch08.parts", "TRANSCRIPT"),
    "log": ("chapters.ch08.parts", "TRANSCRIPT"),  # from chapter 9 on, the session log
}


def recipe_of(chapter: int) -> Recipe:
    recipe: Recipe = import_module(f"chapters.ch{chapter:02d}.agent").RECIPE
    return recipe


def _key(where: tuple[str, str]) -> Key[Any]:
    key: Key[Any] = getattr(import_module(where[0]), where[1])
    return key


@cache
def _options_of_any_chapter() -> frozenset[str]:
    """The options of every chapter's recipe: one a later chapter has is not a typo."""
    names: set[str] = set()
    for chapter in range(1, 100):
        if find_spec(f"chapters.ch{chapter:02d}") is None:
            break
        names |= {p.name for p in recipe_of(chapter).params() if p.name}
    return frozenset(names)


def _sorted_out(
    recipe: Recipe, given: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[Key[Any], Any], dict[Key[Any], Any]]:
    """`given` as (options of this recipe, services, per-run services)."""
    options = {p.name for p in recipe.params() if p.name}
    unknown = set(given) - set(SERVICES) - set(PER_RUN) - _options_of_any_chapter()
    if unknown:
        raise TypeError(
            f"chapters/testing.py knows no {sorted(unknown)}: not a service in SERVICES, "
            f"a per-run one in PER_RUN, or an option of any chapter"
        )
    chosen: dict[str, Any] = {}
    services: dict[Key[Any], Any] = {}
    per_run: dict[Key[Any], Any] = {}
    for name, value in given.items():
        if name == "workspace" and isinstance(value, Path):
            chosen[name] = value  # --workspace, not the Workspace itself
        elif name in SERVICES:
            services[_key(SERVICES[name])] = value
        elif name in PER_RUN:
            per_run[_key(PER_RUN[name])] = value
        elif name in options:
            chosen[name] = value
    return chosen, services, per_run


def setup_of(
    chapter: int,
    options: Mapping[str, Any] | None = None,
    services: Mapping[Key[Any], Any] | None = None,
    **given: Any,
) -> Setup:
    """Chapter `chapter`'s command set up with `options` (the rest: defaults) and `given`
    (services and options by name; `services` by key, for what has no name here)."""
    recipe = recipe_of(chapter)
    chosen, by_name, per_run = _sorted_out(recipe, given)
    if per_run:
        raise TypeError("setup_of makes no run: give per-run services to agent_of")
    return recipe.setup({**dict(options or {}), **chosen}, {**by_name, **dict(services or {})})


def agent_of(
    chapter: int,
    *,
    model: ModelClient,
    console: Console,
    options: Mapping[str, Any] | None = None,
    services: Mapping[Key[Any], Any] | None = None,
    per_run: Mapping[Key[Any], Any] | None = None,
    **given: Any,
) -> AgentSpec:
    """Chapter `chapter`'s main agent for one run, as its command would build it.
    `services` and `per_run` give, by key, what has no name in the tables above."""
    recipe = recipe_of(chapter)
    chosen, by_name, run_own = _sorted_out(recipe, given)
    setup = recipe.setup({**dict(options or {}), **chosen}, {**by_name, **dict(services or {})})
    return build_agent(setup, model, console, {**run_own, **dict(per_run or {})})


def with_demo_folder(chapter: int, folder: Path) -> Recipe:
    """Chapter `chapter`'s recipe whose --demo works in `folder` (filled by the test)."""
    recipe = recipe_of(chapter)
    return dataclasses.replace(
        recipe, demo=dataclasses.replace(recipe.demo, workspace=lambda: folder)
    )


def keep_demo_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A --demo's folder is left for the test to look inside, not removed at the end."""
    import chapters.ch02.options as options

    monkeypatch.setattr(options, "remove_demo_folder", lambda folder: None)


def demo_main(
    chapter: int, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[list[str]], int]:
    """`python -m chapters.chNN` whose --demo runs in `folder` and leaves it there."""
    keep_demo_folder(monkeypatch)
    return with_demo_folder(chapter, folder).main

"""A recipe's resolved composition, as plain text: `python -m tutorial recipe --chapter N`.

A chapter's recipe says what it changes; what the agent ends up with (which tools,
in which order, who may refuse a call, which options) is spread over every earlier
chapter. The listing is that end state, read from the parts themselves: the same
`contribute` the run calls, in listing mode (`Build.listing`), so it cannot drift
from what runs. It is made in an empty temporary folder with an empty temporary
home, so no part reads this machine's files, and those folders' paths never show.

The text is deterministic (no paths, no dates, fixed columns), so it is checked in
beside each chapter (chapters/chNN/recipe.txt, scripts/write_recipes.py) and
`tutorial diff` shows a chapter's change to it as a plain diff.
"""

from __future__ import annotations

import contextlib
import importlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from shared.parts import Build, Setup
from shared.recipe import FOLDER, HOME, Recipe, contributed, spine_slots
from shared.slots import Entry, Phase, in_order
from tutorial.catalog import COMMANDS

CHAPTERS_ROOT = Path(__file__).resolve().parent.parent / "chapters"
LABEL = 26  # fixed columns: a long new name does not re-align every line of a chapter's diff
NAME = 16
SERVICE = 44


def recipe_of(chapter: int) -> Recipe | None:
    """Chapter `chapter`'s recipe, or None while its agent.py has none yet."""
    module = importlib.import_module(f"chapters.ch{chapter:02d}.agent")
    recipe = getattr(module, "RECIPE", None)
    return recipe if isinstance(recipe, Recipe) else None


def recipe_chapters() -> list[int]:
    """The chapters whose agent.py has a recipe, in order. Only an agent.py that names
    RECIPE is imported: a chapter written before recipes need not import at all."""
    found = sorted(CHAPTERS_ROOT.glob("ch[0-9][0-9]/agent.py"))
    numbers = [int(p.parent.name[2:]) for p in found if "RECIPE" in p.read_text("utf-8")]
    return [n for n in numbers if recipe_of(n) is not None]


def listing(recipe: Recipe, explain: bool = False) -> str:
    """The parts, the slots' entries (the agent's and a child's), the options and the
    banner; `explain` adds what each slot is for and which part provides each service."""
    with _empty_folders() as (folder, home):
        setup = recipe.setup(_defaults(recipe), {FOLDER: folder, HOME: home})
        root = contributed(Build(setup, console=None, model=None, name="main", listing=True))
        child = Build(setup, console=None, model=None, name="child", parent=root, listing=True)
        children = []
        if any(part.starts_children for part in recipe.parts):
            children = [
                "children",
                *(_slots(contributed(child), explain, indent="  ") or ["  (nothing)"]),
            ]
        lines = [
            *_header(recipe),
            *_parts(recipe),
            *_slots(root, explain, indent=""),
            *children,
            *_options(recipe, explain),
            *_commands(recipe, explain),
            *_banner(setup, explain),
            *(_services(setup) if explain else []),
        ]
        text = "\n".join(line.rstrip() for line in lines) + "\n"
        for path, name in ((folder, "<folder>"), (home, "<home>")):
            text = text.replace(str(path.resolve()), name).replace(str(path), name)
    return text


def _defaults(recipe: Recipe) -> dict[str, Any]:
    """The options of the command given no arguments: what click hands a run, so a
    part reads None (not click's own "unset" marker) for an option with no default."""
    command = recipe.command()
    return dict(command.make_context(command.name, [], resilient_parsing=True).params)


@contextlib.contextmanager
def _empty_folders() -> Iterator[tuple[Path, Path]]:
    """An empty folder to stand in (the current one, too) and an empty home."""
    with (
        tempfile.TemporaryDirectory() as folder,
        tempfile.TemporaryDirectory() as home,
        contextlib.chdir(folder),
    ):
        yield Path(folder), Path(home)


def _header(recipe: Recipe) -> list[str]:
    count = f"{len(recipe.parts)} part{'s' if len(recipe.parts) != 1 else ''}"
    base = f", extending {recipe.base.title}'s" if recipe.base else ""
    return [f"{recipe.title}'s recipe: {count}{base}"]


def _parts(recipe: Recipe) -> list[str]:
    return ["parts"] + [
        _row(part.name, f"{_chapter(part.chapter)}  {part.summary}", NAME) for part in recipe.parts
    ]


def _slots(build: Build, explain: bool, indent: str) -> list[str]:
    lines: list[str] = []
    for slot in spine_slots(build):
        lines.append(f"{indent}{slot.name}" + (f": {slot.doc}" if explain else ""))
        entries = build.slot(slot)
        for at, entry in enumerate(entries):
            unused = slot.single and at < len(entries) - 1
            lines.append(indent + _entry(entry, "unused: only the last counts" if unused else ""))
    return lines


def _entry(entry: Entry[Any], note: str = "") -> str:
    where = [f"{entry.part or 'the recipe'} ({_chapter(entry.chapter)})"]
    if entry.phase is not Phase.NORMAL:
        where.append(entry.phase.name.lower())
    if entry.before:
        where.append("before " + ", ".join(entry.before))
    if entry.after:
        where.append("after " + ", ".join(entry.after))
    return _row(entry.label, "  ".join([*where, *([note] if note else [])]))


def _options(recipe: Recipe, explain: bool) -> list[str]:
    """Which part brings each option (and what it does, explained: `--help` says it too)."""
    from shared.cli import common_params

    common = ", ".join(option.opts[0] for option in common_params())
    lines = ["options", f"  {common}  (every chapter)"]
    for part in recipe.parts:
        by = _by(part.name, recipe)
        if part.max_turns_help:
            bounds = part.max_turns_help if explain else "says what it bounds"
            lines.append(_row("--max-turns", f"{by}  {bounds}"))
        for option in part.options:
            what = f"  {option.help}" if explain and option.help else ""
            lines.append(_row(_names(option), by + what))
    return lines


def _commands(recipe: Recipe, explain: bool) -> list[str]:
    """The dispatcher subcommands the parts bring, each with the part and its help line (a
    group's first): the dispatcher reads them here, so that its --help imports no chapter."""
    brought: dict[str, tuple[str, str]] = {}  # words -> (part, help); the last part's
    for part in recipe.parts:
        for words, command in part.commands().items():
            *group, _ = words.split()
            if group and command.group_help:
                brought.setdefault(" ".join(group), (part.name, command.group_help))
            brought[words] = (part.name, command.help)
    heading = COMMANDS + (
        ": python -m tutorial WORDS --chapter N, made from this recipe" if explain else ""
    )
    rows = [_row(words, f"{_by(part, recipe)}  {help}") for words, (part, help) in brought.items()]
    return [heading, *rows] if rows else []


def _banner(setup: Setup, explain: bool) -> list[str]:
    entries = in_order(setup.banner, "the banner")
    heading = "banner" + (": each line's items, in order, joined with ' · '" if explain else "")
    return [heading, *(_entry(entry) for entry in entries)] if entries else []


def _services(setup: Setup) -> list[str]:
    lines = ["services"]
    decorated = setup.decorated_by()
    for name, part in setup.provided_by().items():
        changed = ", ".join(_by(p, setup.recipe) for p in decorated.get(name, []))
        extra = f"  decorated by {changed}" if changed else ""
        lines.append(_row(name, _by(part, setup.recipe) + extra, SERVICE))
    for name, parts in decorated.items():
        if name not in setup.provided_by():  # given, or provided by none
            changed = ", ".join(_by(p, setup.recipe) for p in parts)
            lines.append(_row(name, f"(not provided here)  decorated by {changed}", SERVICE))
    return lines


def _names(option: click.Parameter) -> str:
    return ", ".join(option.opts) + "".join(f" / {n}" for n in option.secondary_opts)


def _by(part: str, recipe: Recipe) -> str:
    return f"{part} ({_chapter(recipe.chapter_of(part))})"


def _chapter(number: int) -> str:
    return f"ch{number:02d}"


def _row(left: str, right: str, width: int = LABEL) -> str:
    return f"  {left.ljust(width)}  {right}"

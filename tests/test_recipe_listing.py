"""The recipe listing: checked in beside each chapter, printed by `tutorial recipe`, diffed.

The checked-in chapters/chNN/recipe.txt is what a reviewer reads when a part
changes, so it must be what the recipe resolves to now (scripts/write_recipes.py
rewrites it); the commands show the same text, not a second rendering of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tutorial.catalog import CHAPTERS, find_chapter
from tutorial.cli import cli
from tutorial.diff import chapter_diff, chapter_stat
from tutorial.recipe_listing import listing, recipe_chapters, recipe_of

ROOT = Path(__file__).resolve().parent.parent


def first_recipe() -> str:
    recipe = recipe_of(1)
    assert recipe is not None
    return listing(recipe)


@pytest.mark.parametrize("chapter", recipe_chapters())
def test_the_checked_in_listing_is_what_the_recipe_resolves_to(chapter: int) -> None:
    recipe = recipe_of(chapter)
    assert recipe is not None
    path = ROOT / "chapters" / f"ch{chapter:02d}" / "recipe.txt"
    assert path.is_file(), f"run python scripts/write_recipes.py to write {path.name}"
    assert path.read_text(encoding="utf-8") == listing(recipe), (
        "out of date: run python scripts/write_recipes.py"
    )


def test_the_listing_names_no_path_of_this_machine() -> None:
    text = first_recipe()
    assert str(ROOT) not in text and str(Path.home()) not in text
    assert text == first_recipe()  # and it is the same each time


def test_the_recipe_command_prints_the_listing() -> None:
    result = CliRunner().invoke(cli, ["recipe", "--chapter", "1"])
    assert result.exit_code == 0, result.output
    assert result.output == first_recipe()
    assert result.output.startswith("chapter 1's recipe: 5 parts\n")


def test_explain_names_the_part_that_provides_the_folder() -> None:
    result = CliRunner().invoke(cli, ["recipe", "--chapter", "1", "--explain"])
    assert result.exit_code == 0, result.output
    services = result.output.split("\nservices\n", 1)[1]
    assert "the folder the agent works in" in services
    (line,) = [row for row in services.splitlines() if "the folder the agent works in" in row]
    assert line.split()[-2:] == ["folder", "(ch01)"]


def test_a_chapter_without_a_recipe_says_so() -> None:
    planned = next(chapter.number for chapter in CHAPTERS if not chapter.ready)
    result = CliRunner().invoke(cli, ["recipe", "--chapter", str(planned)])
    assert result.exit_code == 2 and "planned but not written yet" in result.output


def test_the_diff_of_chapter_1_shows_its_whole_listing() -> None:
    chapter = find_chapter(1)
    assert first_recipe() in chapter_diff(chapter)
    stat = chapter_stat(chapter).splitlines()
    assert stat[-2] == f"recipe: +{len(first_recipe().splitlines())} lines (the first recipe)"
    assert stat[-1].startswith(f"{len(stat) - 2} files")  # the total of the files stays last


def test_a_later_chapter_diffs_its_listing_against_the_one_it_extends() -> None:
    later = [n for n in recipe_chapters() if n > 1]
    if not later:
        pytest.skip("no chapter after the first has a recipe yet")
    recipe = recipe_of(later[0])
    assert recipe is not None and recipe.base is not None
    text = chapter_diff(find_chapter(later[0]))
    assert f"--- recipe of chapter {recipe.base.chapter}\n" in text
    assert f"+++ recipe of chapter {later[0]}\n" in text
    stat = chapter_stat(find_chapter(later[0])).splitlines()[-2]
    assert stat.startswith("recipe: +") and stat.endswith(
        f"lines against chapter {recipe.base.chapter}'s"
    )


def test_every_command_a_part_brings_is_the_dispatchers() -> None:
    """No dispatcher entry per command: each one a part brings is offered (from the first
    ready chapter whose recipe brings it) because the listings name it."""
    first: dict[str, int] = {}
    for chapter in CHAPTERS:
        if chapter.ready and chapter.number in recipe_chapters():
            for words in chapter.recipe().subcommands():
                first.setdefault(words, chapter.number)
    assert first, "no part brings a subcommand"
    for words, number in first.items():
        command: click.Command | None = cli
        for word in words.split():
            assert isinstance(command, click.Group), f"{words}: {word} is not a group"
            command = command.get_command(click.Context(command), word)
        assert command is not None, f"the dispatcher has no {words}: run scripts/write_recipes.py"
        declared = find_chapter(number).subcommand(words)
        assert declared is not None and command.help == declared.help
        (chapter_option,) = [p for p in command.params if p.name == "chapter"]
        assert getattr(chapter_option, "help", "") == f"Which chapter: {number} or later."
        asked = CliRunner().invoke(cli, words.split())
        example = " ".join([words, f"--chapter {number}", declared.example_args]).rstrip()
        assert asked.exit_code == 2 and f"--chapter is required, e.g. {example}\n" in asked.output
        if number > 1:
            early = CliRunner().invoke(cli, [*words.split(), "--chapter", "1"])
            assert early.exit_code == 2 and declared.absent.format(n=1) in early.output


def test_the_dispatchers_help_imports_no_chapter() -> None:
    probe = (
        "import sys\nfrom tutorial.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('chapters')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stdout
    assert "  agents  " in done.stdout and "  permissions  " in done.stdout

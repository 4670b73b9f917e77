"""Write each chapter's recipe listing beside it: chapters/chNN/recipe.txt.

    python scripts/write_recipes.py           # rewrite the listings that changed
    python scripts/write_recipes.py --check   # exit 1 if one is out of date

The listing is what `python -m tutorial recipe --chapter N` prints. It is checked
in so a review shows what a change does to every later chapter's agent (a part
re-ordered in chapter 3 shows in chapter 11's file too), and so a reader can see
it without running anything; tests/test_recipe_listing.py fails when one is stale.
Only chapters whose agent.py has a RECIPE have one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tutorial.catalog import Chapter  # noqa: E402
from tutorial.recipe_listing import listing, recipe_chapters, recipe_of  # noqa: E402


def listing_path(chapter: int) -> Path:
    return Chapter(chapter, "", "").listing


def stale_listings(write: bool) -> list[str]:
    """The listings that differ from a fresh one (written anew when `write`)."""
    stale = []
    for chapter in recipe_chapters():
        recipe = recipe_of(chapter)
        assert recipe is not None  # recipe_chapters() lists only chapters that have one
        path, fresh = listing_path(chapter), listing(recipe)
        if path.is_file() and path.read_text(encoding="utf-8") == fresh:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if write:
            path.write_text(fresh, encoding="utf-8", newline="\n")
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report listings out of date")
    check = parser.parse_args().check
    stale = stale_listings(write=not check)
    if check and stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/write_recipes.py")
        return 1
    print(("written: " + ", ".join(stale)) if stale else "the recipe listings are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())

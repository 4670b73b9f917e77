"""A pytest plugin for the docs tests: write every collected test's `-k` names to a file.

    python -m pytest --collect-only -q -p tests.keyword_dump chapters

`-k` matches an expression against a set of names per test (its own name, its
module, its folders, its markers). This plugin writes those sets, as pytest
itself computes them, to the JSON file named by $TUTORIAL_KEYWORDS, so a test
can check that a `-k` command a chapter text shows selects the test it names.
"""

from __future__ import annotations

import json
import os

import pytest
from _pytest.mark import KeywordMatcher


def pytest_collection_finish(session: pytest.Session) -> None:
    target = os.environ.get("TUTORIAL_KEYWORDS")
    if not target:
        return
    names = {item.nodeid: sorted(KeywordMatcher.from_item(item)._names) for item in session.items}
    with open(target, "w", encoding="utf-8") as file:
        json.dump(names, file)

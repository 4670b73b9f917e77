"""The browser test runs only when its folder is named on the command line.

    python scripts/with_venv.py --site python scripts/build_site.py
    python scripts/with_venv.py --site python -m pytest tests/site

The README's `python -m pytest` stays offline, fast and free of the site's
dependencies: it does not even import these tests. Named explicitly, they
fail (not skip) when the site, Chromium or Playwright is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _named(config: pytest.Config) -> bool:
    start = config.invocation_params.dir
    for arg in config.args:
        path = (start / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name.startswith("test_") and not _named(config):
        return True
    return None

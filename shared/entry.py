"""How `python -m tutorial` and `python -m chapters.chNN` start: one line, not a traceback,
when the Python that runs them does not have the course's dependencies.

The dependencies live in the repository's `.venv` (scripts/with_venv.py makes it). A
reader who opens a new terminal and forgets to activate it, or whose `python` is another
one, gets `No module named 'click'` from deep inside an import. `start` imports the
command's module itself, so a missing third-party module is named with the two ways out.
Nothing but the standard library is imported before that check.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from shared.errors import EXIT_USAGE  # the standard library only

OURS = ("chapters", "shared", "tutorial")  # a module of these missing is a bug, not a setup
REPOSITORY = Path(__file__).resolve().parent.parent


def start(module: str) -> None:
    """Import `module` (a chapter's recipe module, or a command line's), then run its
    `main` (a recipe's); exit with its code."""
    try:
        loaded = importlib.import_module(module)
        main = loaded.RECIPE.main if hasattr(loaded, "RECIPE") else loaded.main
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing.partition(".")[0] in OURS:
            raise
        sys.stderr.write(missing_dependency(missing, module.rpartition(".")[0]) + "\n")
        sys.exit(EXIT_USAGE)
    sys.exit(main())


def missing_dependency(missing: str, package: str) -> str:
    """The line for `python -m package` started by a Python without `missing`."""
    venv = REPOSITORY / ".venv"
    if os.name == "nt":
        activate = f"{venv / 'Scripts' / 'Activate.ps1'} in PowerShell"
    else:
        activate = f"source {venv / 'bin' / 'activate'}"
    return (
        f"No module named {missing!r}: this Python ({sys.executable}) does not have the "
        f"course's dependencies. Activate the environment first ({activate}), or run "
        f"through it: python {REPOSITORY / 'scripts' / 'with_venv.py'} python -m {package} ..."
    )

"""Set up `.venv` with the pinned dependencies, then run a command inside it.

    python scripts/with_venv.py python -m tutorial run --chapter 1 --demo
    python scripts/with_venv.py python -m pytest
    python scripts/with_venv.py --site python scripts/build_site.py

One command on a fresh machine with only Python 3.11 or newer: it creates `.venv`
beside this repository's README, installs requirements-dev.txt (exact versions), puts
the repository on the environment's path (so its `python -m tutorial` works in any
folder), and reinstalls only when a requirements file changed. A leading `python` in
the command means the virtual environment's Python; other names (`ruff`, `mypy`) are
looked up in its scripts folder. `--site` first also installs requirements-site.txt
(the site generator and the browser test's driver), which only building the site and
its browser test need. Works the same in bash and PowerShell.

A `.venv` whose setup was interrupted, or that another Python version made, is
removed and made again, with one line saying why.
"""

# This file checks the Python that runs it, so it must run on an old one up to that
# check: no syntax newer than Python 2.7 and 3.x both read, and nothing imported but
# `os` and `sys` before it. The work is in venv_setup.py, beside this file.

import os
import sys

TYPE_CHECKING = False  # typing is not in Python 2.7; mypy reads the type comments
if TYPE_CHECKING:
    from typing import Optional, Sequence  # noqa: F401, UP035

MINIMUM = (3, 11)


def version_problem(version, executable):
    # type: (Sequence[int], str) -> Optional[str]
    """The line to print when `version` (as `sys.version_info`) is older than MINIMUM."""
    if tuple(version[:2]) >= MINIMUM:
        return None
    found = ".".join(str(part) for part in version[:3])
    return (
        "This course needs Python 3.11 or newer; found "
        + found
        + " ("
        + executable
        + "): run it with a newer one, as python3.11 scripts/with_venv.py ..."
        + " (py -3.11 on Windows)"
    )


def main():
    # type: () -> int
    problem = version_problem(sys.version_info[:3], sys.executable or "python")
    if problem is not None:
        sys.stderr.write(problem + "\n")
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from venv_setup import run

    return run(sys.argv[1:], __doc__ or "")


if __name__ == "__main__":
    sys.exit(main())

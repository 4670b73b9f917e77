"""Set up `.venv` with the pinned dependencies, then run a command inside it.

    python scripts/with_venv.py python -m tutorial run --chapter 1 --demo
    python scripts/with_venv.py python -m pytest
    python scripts/with_venv.py --site python scripts/build_site.py

One command on a fresh machine with only Python: it creates `.venv` beside
this repository's README, installs requirements-dev.txt (exact versions), puts
the repository on the environment's path (so its `python -m tutorial` works in
any folder), and reinstalls only when a requirements file changed. A leading `python` in the
command means the virtual environment's Python; other names (`ruff`, `mypy`)
are looked up in its scripts folder. `--site` first also installs
requirements-site.txt (the site generator and the browser test's driver),
which only building the site and its browser test need. Works the same in
bash and PowerShell.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
REQUIREMENTS = (ROOT / "requirements.txt", ROOT / "requirements-dev.txt")
SITE_REQUIREMENTS = ROOT / "requirements-site.txt"
STAMP = VENV / "requirements.sha256"
SITE_STAMP = VENV / "requirements-site.sha256"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_venv(site: bool = False) -> None:
    if not PYTHON.exists():
        print(f"creating {VENV.name}/ ...", file=sys.stderr)
        venv.create(VENV, with_pip=True)
    install(REQUIREMENTS, STAMP)
    if site:
        install((*REQUIREMENTS, SITE_REQUIREMENTS), SITE_STAMP)


def install(files: tuple[Path, ...], stamp: Path) -> None:
    """pip install the last of `files` (which includes the others), unless none changed."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == digest:
        return
    link_repository()
    print(f"installing pinned dependencies ({files[-1].name}) ...", file=sys.stderr)
    subprocess.run(
        [
            str(PYTHON),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
            str(files[-1]),
        ],
        check=True,
    )
    stamp.write_text(digest + "\n")


def link_repository() -> None:
    """Put the repository on the venv's path, so `python -m tutorial` works in any folder."""
    site_packages = subprocess.run(
        [str(PYTHON), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site_packages) / "agent_loop_tutorial.pth").write_text(str(ROOT) + "\n")


def resolve(command: list[str]) -> list[str]:
    program, *rest = command
    if program in ("python", "python3", "py"):
        return [str(PYTHON), *rest]
    candidate = BIN / (program + (".exe" if os.name == "nt" else ""))
    return [str(candidate) if candidate.exists() else program, *rest]


def main(argv: list[str]) -> int:
    site = bool(argv) and argv[0] == "--site"
    if site:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        ensure_venv(site)
    except subprocess.CalledProcessError as error:
        print(
            f"installing dependencies failed (exit {error.returncode}); see pip's output above",
            file=sys.stderr,
        )
        return 1
    try:
        return subprocess.call(resolve(argv), cwd=Path.cwd())
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

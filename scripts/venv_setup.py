"""The work of scripts/with_venv.py, once it has checked the Python: keep `.venv` whole and
current, then run a command inside it.

`.venv` is complete only when the file COMPLETE is in it, written last, after the
environment and its pip are in place. A `.venv` without it was interrupted (Ctrl-C
while pip was being put in, say: every later run would fail with "No module named
pip"), and one that another Python version made cannot run this Python's packages:
either is removed and made again, with one line saying why. Built in place, not
aside and moved: a virtual environment writes its own path into its scripts.

Which requirements are installed is a digest of their files (`requirements.sha256`),
written after pip succeeded, so an interrupted or failed install is tried again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = "with_venv.complete"
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class SetupError(Exception):
    """Setting up `.venv` cannot go on; the message is the one line that says what to do."""

    def __init__(self, line: str, code: int = EXIT_FAILED) -> None:
        super().__init__(line)
        self.code = code


@dataclass(frozen=True)
class Environment:
    """Where a repository keeps its virtual environment, and what is in it."""

    root: Path  # the repository: its requirements files, and `.venv` beside them

    @property
    def folder(self) -> Path:
        return self.root / ".venv"

    @property
    def scripts(self) -> Path:
        return self.folder / ("Scripts" if os.name == "nt" else "bin")

    @property
    def python(self) -> Path:
        return self.scripts / ("python.exe" if os.name == "nt" else "python")

    @property
    def requirements(self) -> tuple[Path, ...]:
        return (self.root / "requirements.txt", self.root / "requirements-dev.txt")

    @property
    def site_requirements(self) -> tuple[Path, ...]:
        return (*self.requirements, self.root / "requirements-site.txt")

    def stamp(self, site: bool) -> Path:
        return self.folder / ("requirements-site.sha256" if site else "requirements.sha256")


def run(argv: list[str], usage: str, root: Path = ROOT) -> int:
    """`with_venv.py [--site] COMMAND...`: the exit code of COMMAND, or of what stopped it."""
    site = bool(argv) and argv[0] == "--site"
    if site:
        argv = argv[1:]
    if not argv:
        print(usage, file=sys.stderr)
        return EXIT_USAGE
    environment = Environment(root)
    try:
        cwd = working_folder()
        ensure(environment, site)
    except SetupError as error:
        print(error, file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print(
            f"interrupted: {environment.folder.name}/ is not finished; the next run goes on "
            "setting it up",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    try:
        return subprocess.call(resolve(environment, argv), cwd=cwd)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def working_folder() -> Path:
    """Where the command runs: the current folder, which a shell can keep after it is gone."""
    try:
        return Path.cwd()
    except OSError:
        raise SetupError(
            "The current folder no longer exists (deleted, or moved away): "
            "cd into a folder that exists and run again",
            EXIT_USAGE,
        ) from None


def ensure(environment: Environment, site: bool = False) -> None:
    """`.venv` complete, made by this Python, with the pinned requirements installed."""
    reason = why_remake(environment.folder, sys.version_info[:3])
    if reason is not None:
        print(
            f"{environment.folder.name}/ {reason}: removing it and creating it again",
            file=sys.stderr,
        )
        remove(environment.folder)
    if not environment.folder.exists():
        create(environment)
    install(environment, environment.requirements, environment.stamp(site=False))
    if site:
        install(environment, environment.site_requirements, environment.stamp(site=True))


def why_remake(folder: Path, version: tuple[int, ...]) -> str | None:
    """Why the `.venv` at `folder` cannot be used by Python `version`; None if it can or
    if there is none. A folder that is no virtual environment at all is left alone."""
    if not folder.exists():
        return None
    config = folder / "pyvenv.cfg"
    if not config.is_file():
        if any(path.is_file() for path in folder.rglob("*")):
            raise SetupError(
                f"{folder} is not a virtual environment (it has no pyvenv.cfg): "
                "move it away or delete it, then run again",
                EXIT_USAGE,
            )
        return "was not finished (its setup was interrupted)"
    made_by = made_by_version(config)
    if made_by is not None and made_by[:2] != tuple(version[:2]):
        found = ".".join(map(str, version[:3]))
        return f"was made by Python {'.'.join(map(str, made_by))}, not this Python {found}"
    # requirements.sha256: an environment from before COMPLETE existed, installed in full
    if not (folder / COMPLETE).is_file() and not (folder / "requirements.sha256").is_file():
        return "was not finished (its setup was interrupted or failed)"
    return None


def made_by_version(config: Path) -> tuple[int, ...] | None:
    """The Python version pyvenv.cfg names (`version` or `version_info`), if it names one."""
    for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            parts = value.strip().split(".")[:3]
            if parts and all(part.isdigit() for part in parts):
                return tuple(int(part) for part in parts)
    return None


def remove(folder: Path) -> None:
    """Remove `.venv` so that, stopped at any point, what is left still reads as unfinished:
    the marks of a finished environment go first, pyvenv.cfg (what makes it one) last."""
    last = folder / "pyvenv.cfg"
    try:
        for mark in (folder / COMPLETE, folder / "requirements.sha256"):
            mark.unlink(missing_ok=True)
        for child in folder.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            elif child != last:
                child.unlink()
        last.unlink(missing_ok=True)
        folder.rmdir()
    except OSError as error:
        raise SetupError(
            f"could not remove {folder} ({error.strerror or error}): delete it yourself, "
            "then run again"
        ) from None


def create(environment: Environment) -> None:
    """A new `.venv` with pip, marked COMPLETE last: until then it counts as interrupted."""
    print(f"creating {environment.folder.name}/ ...", file=sys.stderr)
    try:
        venv.create(environment.folder, with_pip=True)
    except subprocess.CalledProcessError as error:
        if error.returncode < 0 or error.returncode == EXIT_INTERRUPTED:
            raise KeyboardInterrupt from None  # Ctrl-C reached ensurepip before this process
        raise SetupError(
            f"creating {environment.folder.name}/ failed: putting pip in it ended with exit "
            f"{error.returncode} (on Debian or Ubuntu, install the python3-venv package), "
            "then run again"
        ) from None
    (environment.folder / COMPLETE).write_text(sys.version.split()[0] + "\n", encoding="utf-8")


def install(environment: Environment, files: tuple[Path, ...], stamp: Path) -> None:
    """pip install the last of `files` (which includes the others), unless none changed."""
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == digest:
        return
    link_repository(environment)
    print(f"installing pinned dependencies ({files[-1].name}) ...", file=sys.stderr)
    pip = [str(environment.python), "-m", "pip", "install", "--quiet"]
    done = subprocess.run([*pip, "--disable-pip-version-check", "-r", str(files[-1])], check=False)
    if done.returncode != 0:
        raise SetupError(
            f"installing dependencies failed (exit {done.returncode}); see pip's output above"
        )
    stamp.write_text(digest + "\n")


def link_repository(environment: Environment) -> None:
    """Put the repository on the venv's path, so `python -m tutorial` works in any folder."""
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    try:
        site_packages = subprocess.run(
            [str(environment.python), "-X", "utf8", "-c", where],
            check=True,
            capture_output=True,
            encoding="utf-8",  # -X utf8: a path outside the console's code page survives
            errors="replace",
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise SetupError(
            f"{environment.python} does not run (the Python that made it may be gone): "
            f"delete {environment.folder} and run again"
        ) from None
    (Path(site_packages) / "agent_loop_tutorial.pth").write_text(str(environment.root) + "\n")


def resolve(environment: Environment, command: list[str]) -> list[str]:
    program, *rest = command
    if program in ("python", "python3", "py"):
        return [str(environment.python), *rest]
    candidate = environment.scripts / (program + (".exe" if os.name == "nt" else ""))
    return [str(candidate) if candidate.exists() else program, *rest]

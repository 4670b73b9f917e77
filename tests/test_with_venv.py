"""scripts/with_venv.py on what a new user trips on: an old Python is named before anything
starts, a `.venv` left half made by Ctrl-C or made by another Python is made again with one
line saying why, and Ctrl-C during the setup is one line and exit 130.

The runs in a subprocess use a copy of the two scripts in a folder of their own, with empty
requirements files: creating a virtual environment is offline, and pip installs nothing.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from scripts import venv_setup
from scripts.venv_setup import COMPLETE, Environment, SetupError, why_remake
from scripts.with_venv import version_problem

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
THIS = tuple(sys.version_info[:3])
THIS_TEXT = ".".join(map(str, THIS))
OFFLINE = {**os.environ, "PIP_NO_INDEX": "1", "PYTHONPATH": ""}
BOUND = 300  # seconds: making a virtual environment with pip on a busy machine


def repository(folder: Path) -> Path:
    """A repository with nothing but the two scripts and empty requirements files."""
    (folder / "scripts").mkdir(parents=True)
    for name in ("with_venv.py", "venv_setup.py"):
        shutil.copy(SCRIPTS / name, folder / "scripts" / name)
    for name in ("requirements.txt", "requirements-dev.txt"):
        (folder / name).write_text("", encoding="utf-8")
    return folder


def with_venv(root: Path, *command: str, python: str = sys.executable) -> list[str]:
    return [python, str(root / "scripts" / "with_venv.py"), *command]


def venv_made_by(folder: Path, version: str, *, complete: bool = True) -> Path:
    folder.mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(
        f"home = /somewhere/bin\ninclude-system-site-packages = false\nversion = {version}\n",
        encoding="utf-8",
    )
    if complete:
        (folder / COMPLETE).write_text(version + "\n", encoding="utf-8")
    return folder


# --- the Python -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [(3, 10, 12), (3, 8, 10), (2, 7, 18)])
def test_an_older_python_is_named_with_the_fix(version: tuple[int, ...]) -> None:
    found = ".".join(map(str, version))
    assert version_problem(version, "/usr/bin/python3") == (
        f"This course needs Python 3.11 or newer; found {found} (/usr/bin/python3): run it "
        "with a newer one, as python3.11 scripts/with_venv.py ... (py -3.11 on Windows)"
    )


@pytest.mark.parametrize("version", [(3, 11, 0), (3, 12, 1), (3, 14, 0), (4, 0, 0)])
def test_3_11_and_newer_pass(version: tuple[int, ...]) -> None:
    assert version_problem(version, "python") is None


def older_pythons() -> list[str]:
    """Interpreters older than 3.11 on this machine: on PATH, or installed by pyenv."""
    names = [f"python3.{minor}" for minor in range(6, 11)] + ["python2.7", "python2"]
    found = [shutil.which(name) for name in names]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found += sorted(str(p) for p in pyenv.glob("[23].*/bin/python") if p.is_file())
    older: dict[str, str] = {}
    for python in filter(None, found):
        try:
            done = subprocess.run(
                [
                    python,
                    "-c",
                    "import sys; print(sys.version_info[0] * 100 + sys.version_info[1])",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        version = done.stdout.strip()
        if done.returncode == 0 and version.isdigit() and int(version) < 311:
            older.setdefault(version, python)  # one interpreter per version
    return list(older.values())


def test_a_real_older_python_stops_at_the_check_and_makes_nothing(tmp_path: Path) -> None:
    pythons = older_pythons()
    if not pythons:
        pytest.skip("no Python older than 3.11 on this machine")
    root = repository(tmp_path / "repo")
    for python in pythons:
        done = subprocess.run(
            with_venv(root, "python", "-c", "print('ran')", python=python),
            capture_output=True,
            text=True,
            timeout=60,
            env=OFFLINE,
        )
        assert done.returncode == 2, (python, done.stderr)
        (line,) = done.stderr.splitlines()
        assert line.startswith("This course needs Python 3.11 or newer; found "), python
        assert done.stdout == ""
        assert not (root / ".venv").exists()


# --- the check of an existing .venv -----------------------------------------------------------


def test_no_venv_and_a_complete_one_of_this_python_are_used(tmp_path: Path) -> None:
    assert why_remake(tmp_path / ".venv", THIS) is None
    assert why_remake(venv_made_by(tmp_path / ".venv", THIS_TEXT), THIS) is None


def test_a_venv_from_before_the_marker_that_finished_its_install_is_used(tmp_path: Path) -> None:
    folder = venv_made_by(tmp_path / ".venv", THIS_TEXT, complete=False)
    (folder / "requirements.sha256").write_text("0" * 64 + "\n", encoding="utf-8")
    assert why_remake(folder, THIS) is None


@pytest.mark.parametrize("made_by", ["3.10.12", "3.12.1", "3.9.2"])
def test_a_venv_another_python_made_is_made_again(made_by: str, tmp_path: Path) -> None:
    folder = venv_made_by(tmp_path / ".venv", made_by)
    assert why_remake(folder, (3, 11, 7)) == f"was made by Python {made_by}, not this Python 3.11.7"


def test_the_version_info_key_of_newer_venvs_is_read(tmp_path: Path) -> None:
    folder = tmp_path / ".venv"
    folder.mkdir()
    (folder / "pyvenv.cfg").write_text("version_info = 3.10.12.final.0\n", encoding="utf-8")
    assert why_remake(folder, (3, 11, 7)) == "was made by Python 3.10.12, not this Python 3.11.7"


def test_a_venv_without_the_marker_is_unfinished(tmp_path: Path) -> None:
    folder = venv_made_by(tmp_path / ".venv", THIS_TEXT, complete=False)
    assert why_remake(folder, THIS) == "was not finished (its setup was interrupted or failed)"
    empty = tmp_path / "empty" / ".venv"
    (empty / "bin").mkdir(parents=True)  # interrupted before pyvenv.cfg was written
    assert why_remake(empty, THIS) == "was not finished (its setup was interrupted)"


def test_a_folder_that_is_no_venv_is_left_alone_with_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / ".venv"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(SetupError) as raised:
        why_remake(folder, THIS)
    assert str(raised.value) == (
        f"{folder} is not a virtual environment (it has no pyvenv.cfg): "
        "move it away or delete it, then run again"
    )
    assert raised.value.code == 2
    assert (folder / "notes.txt").is_file()


def test_ensure_removes_a_venv_of_another_python_and_makes_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environment = Environment(repository(tmp_path / "repo"))
    old = venv_made_by(environment.folder, "3.10.12")
    (old / "lib-of-3.10").mkdir()
    made: list[Path] = []

    def create(environment: Environment) -> None:  # what a real one takes 15 s for
        made.append(venv_made_by(environment.folder, THIS_TEXT))

    monkeypatch.setattr(venv_setup, "create", create)
    monkeypatch.setattr(venv_setup, "install", lambda *args: None)
    venv_setup.ensure(environment)
    assert made == [environment.folder]
    assert not (environment.folder / "lib-of-3.10").exists()
    assert capsys.readouterr().err == (
        f".venv/ was made by Python 3.10.12, not this Python {THIS_TEXT}: "
        "removing it and creating it again\n"
    )


def test_a_removal_stopped_half_way_still_reads_as_unfinished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = venv_made_by(tmp_path / ".venv", THIS_TEXT)  # complete, and this Python's
    (folder / "bin").mkdir()

    def interrupted(path: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(venv_setup.shutil, "rmtree", interrupted)
    with pytest.raises(KeyboardInterrupt):
        venv_setup.remove(folder)
    assert not (folder / COMPLETE).exists() and (folder / "pyvenv.cfg").is_file()
    assert why_remake(folder, THIS) == "was not finished (its setup was interrupted or failed)"


# --- a real interrupted setup, and the run after it -------------------------------------------

STOP_IN_PIP = """
import runpy, sys, venv

def put_pip_in(self, context):  # as ensurepip would start, Ctrl-C comes
    sys.stderr.write("PUTTING PIP IN\\n")
    sys.stderr.flush()
    sys.stdin.read()

venv.EnvBuilder._setup_pip = put_pip_in
sys.argv = [{script!r}, "python", "-c", "print('ran')"]
runpy.run_path({script!r}, run_name="__main__")
"""


def lines_of(stream: Iterable[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def print_ran(root: Path) -> subprocess.CompletedProcess[str]:
    """`python -c "print('ran')"` through with_venv in `root`, offline, within BOUND."""
    return subprocess.run(
        with_venv(root, "python", "-c", "print('ran')"),
        capture_output=True,
        text=True,
        timeout=BOUND,
        env=OFFLINE,
    )


@pytest.mark.skipif(os.name == "nt", reason="Ctrl-C is a signal to the process group on POSIX")
def test_ctrl_c_while_pip_goes_in_is_one_line_and_the_next_run_makes_it_again(
    tmp_path: Path,
) -> None:
    root = repository(tmp_path / "repo")
    environment = Environment(root)
    script = str(root / "scripts" / "with_venv.py")
    first = subprocess.Popen(
        [sys.executable, "-c", STOP_IN_PIP.format(script=script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=OFFLINE,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lines_of, args=(first.stderr, said), daemon=True).start()
    try:
        seen = [said.get(timeout=BOUND), said.get(timeout=BOUND)]
        assert seen == ["creating .venv/ ...\n", "PUTTING PIP IN\n"]
        os.killpg(first.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
        assert first.wait(timeout=BOUND) == 130
    finally:
        first.kill()
    rest = []
    while not said.empty():
        rest.append(said.get())
    assert rest == ["interrupted: .venv/ is not finished; the next run goes on setting it up\n"]
    assert environment.python.exists()  # what the report saw: a .venv with a Python, no pip
    no_pip = subprocess.run(
        [str(environment.python), "-m", "pip", "--version"], capture_output=True, text=True
    )
    assert "No module named pip" in no_pip.stderr
    assert not (environment.folder / COMPLETE).exists()

    second = print_ran(root)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "ran\n"
    assert second.stderr.splitlines() == [
        ".venv/ was not finished (its setup was interrupted or failed): "
        "removing it and creating it again",
        "creating .venv/ ...",
        "installing pinned dependencies (requirements-dev.txt) ...",
    ]
    assert (environment.folder / COMPLETE).is_file()
    third = print_ran(root)
    assert (third.returncode, third.stdout, third.stderr) == (0, "ran\n", "")  # used as it is


@pytest.mark.skipif(os.name == "nt", reason="Windows does not delete a folder in use")
def test_a_deleted_working_folder_is_one_line_before_any_setup(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    gone = tmp_path / "gone"
    started_there = (
        "import os, runpy, sys\n"
        f"os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
        f"sys.argv = [{str(root / 'scripts' / 'with_venv.py')!r}, 'python', '-c', '1']\n"
        f"runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    gone.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", started_there], capture_output=True, text=True, env=OFFLINE
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "The current folder no longer exists (deleted, or moved away): "
        "cd into a folder that exists and run again"
    ]
    assert not (root / ".venv").exists()

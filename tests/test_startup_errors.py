"""What a new user trips on before any chapter runs: a working folder that was deleted, and a
Python without the course's dependencies (the environment not activated). Each is one line
with the fix and exit 2, never a traceback, for the dispatcher and every chapter's script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tutorial.catalog import CHAPTERS
from tutorial.cli import cli

REPO = Path(__file__).resolve().parent.parent
READY = [chapter.number for chapter in CHAPTERS if chapter.ready]


@pytest.mark.skipif(os.name == "nt", reason="Windows does not delete a folder in use")
@pytest.mark.parametrize("number", READY)
def test_a_deleted_working_folder_is_one_line_with_the_fix(
    number: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    gone.rmdir()
    result = CliRunner().invoke(cli, ["run", "--chapter", str(number), "--demo"])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "The current folder no longer exists (deleted, or moved away): "
        "cd into a folder that exists and run again"
    )


@pytest.mark.parametrize(
    "module", ["tutorial", *(chapter.package for chapter in CHAPTERS if chapter.ready)]
)
def test_a_python_without_the_dependencies_says_to_use_the_environment(
    module: str, tmp_path: Path
) -> None:
    """`-S` leaves site-packages out: the Python a reader gets when .venv is not active."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "PYTHONUTF8": "1"}
    done = subprocess.run(
        [sys.executable, "-S", "-m", module, "--demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("No module named 'click': this Python (")
    assert f"python {REPO / 'scripts' / 'with_venv.py'} python -m {module} ..." in line
    assert str(REPO / ".venv") in line

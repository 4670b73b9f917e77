"""Test helpers for chapter 3's tests, and for later tests that read the same files."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tutorial.cli import cli


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """An empty folder, a home folder of its own, and no provider settings."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "home"))
    yield


def write_json(path: Path, data: Any) -> None:
    """Write `data` as JSON, or a string as it is (to write malformed files on purpose)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def audit_records(path: Path) -> list[dict[str, Any]]:
    """Every line of an audit log: decisions and outcomes."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def read_audit(path: Path) -> list[dict[str, Any]]:
    """The decisions in an audit log, in order (each call that ran also has an outcome line)."""
    return [record for record in audit_records(path) if "decision" in record]


def read_outcomes(path: Path) -> list[dict[str, Any]]:
    return [record for record in audit_records(path) if "outcome" in record]


def tutorial(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, env=env, prog_name="python -m tutorial")


def link(path: Path, target: Path) -> None:
    """`path` -> `target`, or skip where this system will not make links (Windows, unprivileged)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as error:
        pytest.skip(f"cannot make a symbolic link here ({error})")

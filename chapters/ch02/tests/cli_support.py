"""The demo's workspace for a chapter's command-line tests: in tmp_path, kept to look inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chapters.ch02.options as options
import chapters.ch02.parts as parts


def keep_demo_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make every chapter's `--demo` run in `folder` and leave it there for the test to read."""
    monkeypatch.setattr(parts, "demo", lambda setup: folder)
    monkeypatch.setattr(options, "remove_demo_folder", lambda folder: None)  # to look inside


def demo_folder_fixture(write_files: Callable[[Path], object]) -> Any:
    """A `demo_folder` fixture: `tmp_path/demo`, filled by `write_files`, where a chapter's
    `--demo` runs instead of a new temporary folder. Assign it to `demo_folder`."""

    @pytest.fixture(name="demo_folder")
    def demo_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        folder = tmp_path / "demo"
        folder.mkdir()
        write_files(folder)
        keep_demo_folder(monkeypatch, folder)
        return folder

    return demo_folder

"""Hooks from the settings files: the same `.tutorial/settings.json` as chapter 3.

    {"hooks": {
        "PreToolUse":  [{"matcher": "shell", "command": "python hooks/guard.py", "timeout": 10}],
        "PostToolUse": [{"matcher": "write_file|edit_file", "command": "ruff format {path}"}],
        "Stop":        [{"command": "python -m pytest -q"}]}}

The project's hooks run before yours (`~/.tutorial/settings.json`), each list in
its written order. `matcher` is a regular expression that must match the whole
tool name; without one a hook sees every tool. `name` (optional) is how messages
and the audit call the hook; by default, its command. A malformed `hooks` section stops
the run before any request (exit 2), like a malformed `permissions` section; so
does a tool hook's placeholder that stands where no value could be filled (in a
comment, inside `$(...)`: see `fill_placeholders`).

A hook runs unasked, so the programs it names are as much the harness's control
files as the settings themselves: `hook_programs` lists every word of a hook's
command that is a file in the workspace or your home folder (`hooks/guard.py`,
a `.venv/bin/python`), and the command line adds them to the policy's control
files. A program named otherwise (`python -m hooks.guard`) is not found by its
words.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chapters.ch02.workspace import Workspace
from chapters.ch03.control import ControlFile, control_file
from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS, distinct_files, read_settings
from chapters.ch04.hooks import (
    Hook,
    HookEvent,
    PlaceholderError,
    check_placeholders,
    command_hook,
)
from shared.errors import ConfigError
from shared.process import IS_WINDOWS

DEFAULT_TIMEOUT_SECONDS = 30.0
_TOOL_EVENTS = (HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE)


class HookSetting(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, pattern=r"\S")
    name: str | None = None  # how messages and the audit call it; default: the command
    matcher: str | None = None
    timeout: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=3600)

    @field_validator("matcher")
    @classmethod
    def _compiles(cls, matcher: str | None) -> str | None:
        if matcher not in (None, "", "*"):  # those three mean: every tool
            try:
                re.compile(matcher)
            except re.error as error:
                raise ValueError(f"{matcher!r} is not a regular expression: {error}") from None
        return matcher


class HooksFile(BaseModel):
    model_config = ConfigDict(extra="allow")  # "permissions" belongs to chapter 3

    hooks: dict[HookEvent, list[HookSetting]] = {}


def load_hooks(workspace: Workspace, home: Path) -> list[Hook]:
    """Command hooks from the project's settings, then the user's."""
    hooks: list[Hook] = []
    for event, setting, where in _hook_settings(workspace, home):
        if event in _TOOL_EVENTS:  # only a tool call's arguments fill placeholders
            _check_placeholders(setting, where)
        matcher = re.compile(setting.matcher) if setting.matcher not in (None, "", "*") else None
        hooks.append(
            command_hook(
                event,
                setting.command,
                name=setting.name,
                workspace=workspace.root,
                matcher=matcher,
                timeout=setting.timeout,
            )
        )
    return hooks


def hook_programs(workspace: Workspace, home: Path) -> list[ControlFile]:
    """The files the hooks' commands name, in the workspace or your home folder."""
    found: dict[Path, ControlFile] = {}
    for _, setting, _where in _hook_settings(workspace, home):
        for word in _words(setting.command):
            file = _program(word, workspace.root, home)
            if file is not None:
                found.setdefault(file.path, file)
    return list(found.values())


def _hook_settings(
    workspace: Workspace, home: Path
) -> Iterator[tuple[HookEvent, HookSetting, str]]:
    """Every hook setting, the project's first, each list in its written order, with
    where it is written (for messages)."""
    sources = [
        (workspace.root / PROJECT_SETTINGS, PROJECT_SETTINGS.as_posix()),
        (home / USER_SETTINGS, "~/" + USER_SETTINGS.as_posix()),
    ]
    for path, shown in distinct_files(sources):
        for event, settings in read_settings(path, shown, HooksFile).hooks.items():
            for index, setting in enumerate(settings):
                yield event, setting, f"{shown}: hooks.{event}.{index}.command"


def _words(command: str) -> list[str]:
    """The words of a command as its shell would split them, at least roughly."""
    try:
        words = shlex.split(command, posix=not IS_WINDOWS)
    except ValueError:  # an unterminated quote: the spaces will do
        words = command.split()
    return [word.strip("\"'") for word in words]


def _program(word: str, workspace: Path, home: Path) -> ControlFile | None:
    """The control file `word` names: a file in the workspace or the home folder, or a path
    to one that is not there yet."""
    if not word or word.startswith("-") or "{" in word:  # an option, or a placeholder
        return None
    path = home / word[2:] if word.startswith(("~/", "~\\")) else workspace / word
    # A word with a folder in it (`hooks/guard.py`) is a file even before it exists: else
    # the agent could write the missing program, and the hook would run it unasked.
    as_path = ("/" in word or "\\" in word) and "://" not in word and " " not in word
    try:
        if not (path.is_file() or (as_path and not path.exists())):
            return None
        real = Path(os.path.realpath(path))
    except OSError:
        return None
    for root, shown_root in ((workspace, ""), (Path(os.path.realpath(home)), "~/")):
        if real.is_relative_to(root):
            return control_file(root, real.relative_to(root), shown_root)
    return None


def _check_placeholders(setting: HookSetting, where: str) -> None:
    try:
        check_placeholders(setting.command)
    except PlaceholderError as error:
        hook = setting.name or setting.command
        raise ConfigError(f"{where}: the hook {hook!r} cannot run: {error}") from None

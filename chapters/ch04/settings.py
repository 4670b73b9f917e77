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
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chapters.ch02.workspace import Workspace
from chapters.ch03.settings import PROJECT_SETTINGS, USER_SETTINGS, distinct_files, read_settings
from chapters.ch04.hooks import (
    Hook,
    HookEvent,
    PlaceholderError,
    check_placeholders,
    command_hook,
)
from shared.errors import ConfigError

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
    sources = [
        (workspace.root / PROJECT_SETTINGS, PROJECT_SETTINGS.as_posix()),
        (home / USER_SETTINGS, "~/" + USER_SETTINGS.as_posix()),
    ]
    for path, shown in distinct_files(sources):
        for event, settings in read_settings(path, shown, HooksFile).hooks.items():
            for index, setting in enumerate(settings):
                if event in _TOOL_EVENTS:  # only a tool call's arguments fill placeholders
                    _check_placeholders(setting, f"{shown}: hooks.{event}.{index}.command")
                matcher = (
                    re.compile(setting.matcher) if setting.matcher not in (None, "", "*") else None
                )
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


def _check_placeholders(setting: HookSetting, where: str) -> None:
    try:
        check_placeholders(setting.command)
    except PlaceholderError as error:
        hook = setting.name or setting.command
        raise ConfigError(f"{where}: the hook {hook!r} cannot run: {error}") from None

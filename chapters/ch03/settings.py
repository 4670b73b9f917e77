"""Where the rules come from: two settings files and the command line.

    .tutorial/settings.json     in the workspace: the project's rules
    ~/.tutorial/settings.json   in your home folder: your rules for every project
    --allow RULE / --deny RULE  this run only

All deny rules form one layer, all ask rules the next, all allow rules the
next (see policy.py): a deny in your home folder beats an allow in the project.
The mode comes from --mode, else the project's defaultMode, else yours, else
"default". A settings file that does not parse stops the run before any
request (exit 2), naming the file and what is wrong: a half-read policy is
worse than none.

A settings file is read as a regular file of at most SETTINGS_MAX_BYTES
(chapter 2's `read_regular_file`): a named pipe there would block the start
forever, a link to /dev/zero would read until the memory runs out, and passing
over either as "no file" would drop the deny rules written in it. So anything
at that name the harness cannot read safely stops the run too.

So does a top-level key nobody reads: a misspelt "permissons" would drop
every rule in it without a word, and in bypass mode `rm -rf` would run. The
error names the key and the nearest known one. Which keys are known is given
to the loader: `permissions`, read here, and the keys the run's other readers
of the same files read (`other_keys`). The file is the harness's, not this
chapter's: a harness that also runs hooks keeps them in it under `hooks`, as
Claude Code does, so an agent that runs none leaves that key alone rather than
refuse the file (and runs no hooks). A reader added later names its own key.

Both settings files, in both places, and the audit log are the policy's first
control files (`control.py`): the agent writes them only with a human's yes.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chapters.ch02.text_files import NotRegularFile, read_regular_file
from chapters.ch02.workspace import Workspace
from chapters.ch03.control import ControlFiles, harness_files
from chapters.ch03.policy import Mode, Policy
from chapters.ch03.rules import KnownTools, Rule, RuleError
from shared.errors import ConfigError

M = TypeVar("M", bound=BaseModel)
PROJECT_SETTINGS = Path(".tutorial") / "settings.json"
USER_SETTINGS = Path(".tutorial") / "settings.json"  # below the home folder
PERMISSIONS = "permissions"  # the key this module reads
SETTINGS_MAX_BYTES = 1_000_000  # 1 MB: a file of hundreds of rules is a few kilobytes
NOT_READ_HERE = ("hooks",)  # a key of the same files, read by the harness's hooks, not here


class Permissions(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []
    default_mode: Mode | None = Field(default=None, alias="defaultMode")


class SettingsFile(BaseModel):
    # Other keys are read by other parts of the harness, so they are allowed here.
    model_config = ConfigDict(extra="allow")

    permissions: Permissions = Permissions()


def load_policy(
    workspace: Workspace,
    home: Path,
    *,
    known_tools: KnownTools,
    mode: Mode | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    other_keys: Collection[str] = NOT_READ_HERE,
) -> Policy:
    """Read both settings files, add the command-line rules, and build the policy.

    `other_keys`: the top-level keys other readers of these files read in this run.
    """
    sources = [
        (workspace.root / PROJECT_SETTINGS, PROJECT_SETTINGS.as_posix()),
        (home / USER_SETTINGS, "~/" + USER_SETTINGS.as_posix()),
    ]
    keys = {PERMISSIONS, *other_keys}
    files = [(shown, _read(path, shown, keys)) for path, shown in distinct_files(sources)]
    rules: dict[str, list[Rule]] = {"allow": [], "ask": [], "deny": []}
    for shown, permissions in files:
        for kind in rules:
            for index, text in enumerate(getattr(permissions, kind)):
                rules[kind].append(_rule(text, shown, f"permissions.{kind}[{index}]", known_tools))
    for kind, texts in (("allow", allow), ("deny", deny)):
        rules[kind] += [_rule(text, f"--{kind}", f"--{kind}", known_tools) for text in texts]
    chosen = mode or next((p.default_mode for _, p in files if p.default_mode), Mode.DEFAULT)
    control = ControlFiles(tuple(harness_files(workspace.root, home)))
    return Policy(
        workspace,
        chosen,
        deny=rules["deny"],
        ask=rules["ask"],
        allow=rules["allow"],
        control=control,
    )


def distinct_files(sources: Sequence[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """The settings files that exist, each once: run in your home folder, the project's
    file and yours are the same file, and its rules or hooks must not count twice.

    Whatever is at a settings file's name counts (a folder, a pipe): its reader refuses
    it by name rather than run as if it were not there."""
    seen: set[Path] = set()
    found = []
    for path, shown in sources:
        if _something_at(path) and path.resolve() not in seen:
            seen.add(path.resolve())
            found.append((path, shown))
    return found


def _something_at(path: Path) -> bool:
    """Whether `path` (through links) names anything; one that cannot be looked at does."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:  # there, but not for us: its reader says why
        return True
    return True


def _read(path: Path, shown: str, keys: Collection[str]) -> Permissions:
    return read_settings(path, shown, SettingsFile, keys=keys).permissions


def read_settings(
    path: Path, shown: str, model: type[M], *, keys: Collection[str] | None = None
) -> M:
    """Parse one settings file into `model`; any problem is a ConfigError naming the file.

    `keys`, if given, are every top-level key the file may hold; any other stops the run.
    """
    try:
        data = json.loads(_settings_bytes(path, shown).decode("utf-8-sig"))
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{shown}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{shown}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{shown}: must hold one JSON object, such as "
            f'{{"permissions": {{"allow": ["shell(git status)"]}}}}; it holds a {_json_type(data)}'
        )
    if keys is not None:
        _known_keys_only(data, shown, keys)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the file"
        message = str(problem["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{shown}: {where}: {message}") from None


def _settings_bytes(path: Path, shown: str) -> bytes:
    """The file's bytes, if it is a regular file of at most SETTINGS_MAX_BYTES."""
    try:
        data = read_regular_file(path, SETTINGS_MAX_BYTES + 1)
    except NotRegularFile as error:
        raise ConfigError(
            f"{shown}: cannot be read (it is {error}, not a regular file); "
            "put a regular JSON file there, or remove it"
        ) from None
    if len(data) > SETTINGS_MAX_BYTES:
        raise ConfigError(
            f"{shown}: cannot be read (it is more than {SETTINGS_MAX_BYTES:,} bytes, the most "
            "a settings file may hold); shorten it, or remove it"
        )
    return data


def _known_keys_only(data: dict[str, object], shown: str, keys: Collection[str]) -> None:
    """An unknown top-level key is an error that names it and the known key nearest to it."""
    for key in data:
        if key in keys:
            continue
        known = ", ".join(sorted(keys))
        inner = {field.alias or name for name, field in Permissions.model_fields.items()}
        if key in inner:  # one level too high: {"deny": [...]}
            hint = f'did you mean "{PERMISSIONS}": {{"{key}": ...}}?'
        elif near := difflib.get_close_matches(key, sorted(keys), n=1):
            hint = f'did you mean "{near[0]}"?'
        else:
            hint = "remove it"
        raise ConfigError(f'{shown}: unknown key "{key}"; {hint} (known keys: {known})')


def _json_type(data: object) -> str:
    names = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}
    return "null" if data is None else names.get(type(data), type(data).__name__)


def _rule(text: str, shown: str, where: str, known_tools: KnownTools) -> Rule:
    try:
        return Rule.parse(text, shown, known_tools)
    except RuleError as error:
        place = shown if shown == where else f"{shown}: {where}"
        raise ConfigError(f"{place}: {error}") from None

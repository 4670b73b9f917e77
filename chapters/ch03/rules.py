"""Permission rules: `Tool` or `Tool(spec)`, matched against a call's key argument.

Which argument that is, and how it is read, each tool says itself (its `key`,
shared/tools.py), so a rule works for a tool this module has never heard of:

    a command   `shell(git status)` matches exactly that command; `shell(git diff:*)`
                matches `git diff` and anything starting with `git diff `
    a path      `read_file(secrets/**)` matches by gitignore-style glob on the
                workspace-relative path (the `pathspec` library implements
                gitignore's rules; hand-written glob semantics would differ from
                what users already know in subtle ways)
    other text  exactly, or as a prefix with `:*`, like a command

`Tool` alone matches every call of the tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pathspec

from shared.tools import KeyKind, SideEffect, Tool

KnownTools = Mapping[str, Tool]  # the tools rules may name, by name
_RULE = re.compile(r"(?P<tool>[A-Za-z_][\w-]*)(?:\((?P<spec>.*)\))?", re.S)


class RuleError(ValueError):
    """A rule that does not parse; the message says what is wrong."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written: "shell(git diff:*)"
    tool: str
    spec: str | None  # None: every call of the tool
    source: str  # where it came from: ".tutorial/settings.json", "--allow", ...
    kind: KeyKind | None = None  # how the tool's key argument is read; None: it has none
    reads: bool = False  # the tool only reads: a deny on it hides files from other readers
    exact: str | None = None  # set by `exact_rule`: the one key this rule allows, compared as is

    @classmethod
    def parse(cls, text: str, source: str, known_tools: KnownTools) -> Rule:
        match = _RULE.fullmatch(text.strip())
        if match is None:
            raise RuleError(
                f"{text!r} is not a rule; write Tool or Tool(spec), e.g. shell(git status)"
            )
        tool, spec = match["tool"], match["spec"]
        if tool not in known_tools:
            raise RuleError(
                f"{text!r} names no known tool; tools: {', '.join(sorted(known_tools))}"
            )
        key = known_tools[tool].key
        if spec is not None and key is None:  # it would silently match nothing
            raise RuleError(f"{text!r}: {tool} has no argument a rule can match; write {tool}")
        if spec is not None and not spec.strip():
            raise RuleError(f"{text!r} has an empty spec; write {tool} to match every call")
        if spec is not None and spec.strip() == ":*" and key and key.kind is not KeyKind.PATH:
            raise RuleError(f"{text!r} has an empty prefix; write {tool} to match every call")
        kind = key.kind if key else None
        reads = known_tools[tool].side_effect is SideEffect.READ
        return cls(
            text.strip(), tool, spec.strip() if spec is not None else None, source, kind, reads
        )

    def matches(self, tool: str, key: str | None) -> bool:
        """Whether this rule covers a call of `tool` whose key argument is `key`."""
        if tool != self.tool:
            return False
        if self.exact is not None:
            return key == self.exact
        if self.spec is None:
            return True
        if key is None:
            return False
        if self.kind is KeyKind.PATH:
            return self._paths.match_file(key)
        return _command_matches(self.spec, key)

    def describe(self) -> str:
        return f"rule {self.text} from {self.source}"

    @cached_property
    def _paths(self) -> pathspec.PathSpec[Any]:
        return pathspec.PathSpec.from_lines("gitignore", [self.spec or ""])


def _command_matches(spec: str, command: str) -> bool:
    """`git diff:*` is a prefix (whole words); anything else must equal the key."""
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    return command == spec


def exact_rule(tool: str, key: str | None, kind: KeyKind | None, source: str) -> Rule:
    """The narrowest rule that covers this one call: what "always" adds.

    It matches by equality with the key. Its text is still a valid rule you could
    copy into a settings file: a path is anchored with a leading `/` (gitignore:
    "at the workspace root") and its glob characters are escaped.
    """
    if key is None:
        return Rule(tool, tool, None, source, kind)
    spec = key if kind is not KeyKind.PATH else "/" + re.sub(r"([*?\[\]!\\])", r"\\\1", key)
    # Matched by equality, not by its spec: `echo ok:*` must not become a prefix rule.
    return Rule(f"{tool}({spec})", tool, spec, source, kind, exact=key)

"""The permission policy: four decisions, layers in a fixed order, closed on failure.

Each layer answers allow, deny, ask, or passthrough ("no opinion: next layer").
The order is the whole design:

    1. deny rules                 a deny always wins, in every mode
    2. plan mode                  read-only: anything that is not a read is denied
    3. rules the human added      answered "a" (always) during this run
    4. ask rules                  (not in bypass mode)
    5. allow rules                for shell: every part allowed, nothing not understood
    6. the mode's default         default: reads; accept-edits: reads and writes; bypass: all
    7. nothing had an opinion     ask

A shell command is decided per part (`shell_split.py`): any part a deny rule
matches denies the whole; an ask rule on any part asks; allow rules allow only
when every part is allowed and the splitter understood the whole command.
Any exception while deciding is a deny: a policy that cannot decide must not
let the call through.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PureWindowsPath
from typing import Any

from chapters.ch02.workspace import PathOutsideWorkspace, Workspace
from chapters.ch03.rules import KEY_ARGUMENTS, Rule, exact_rule
from chapters.ch03.shell_split import split_command
from shared.tools import SideEffect


class Decision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    PASSTHROUGH = "passthrough"


class Mode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"
    BYPASS = "bypass"


MODE_ALLOWS = {
    Mode.DEFAULT: {SideEffect.READ},
    Mode.ACCEPT_EDITS: {SideEffect.READ, SideEffect.WRITE},
    Mode.PLAN: {SideEffect.READ},
    Mode.BYPASS: {SideEffect.READ, SideEffect.WRITE, SideEffect.EXECUTE},
}


@dataclass(frozen=True)
class Verdict:
    decision: Decision  # never PASSTHROUGH once `decide` returns
    source: str  # why, for the audit and the human: "rule shell(rm:*) from --deny", "mode plan"
    rule: Rule | None = None


PASS = Verdict(Decision.PASSTHROUGH, "")


@dataclass(frozen=True)
class Call:
    """What the policy looks at: the tool, its side effect, and its key argument."""

    tool: str
    side_effect: SideEffect
    key: str | None  # the command, or the workspace-relative path; None if the tool has none
    # Other names of the same file that deny and ask rules also see: the path as the
    # model wrote it, when `key` is where a symlink leads. Allow rules never see them.
    aliases: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        return self.tool if self.key is None else f"{self.tool}({self.key})"


@dataclass
class Policy:
    workspace: Workspace
    mode: Mode = Mode.DEFAULT
    deny: Sequence[Rule] = ()
    ask: Sequence[Rule] = ()
    allow: Sequence[Rule] = ()
    added: list[Rule] = field(default_factory=list)  # "always" answers of this run

    def call(self, tool: str, side_effect: SideEffect, arguments: Mapping[str, Any]) -> Call:
        """The key argument as rules see it: a command, or a workspace-relative path.

        A path is the file it resolves to (through symlinks), so `read_file(secrets/**)`
        also denies a link that leads there; the name as written rides along as an
        alias, so a deny rule on a link's own name holds whatever it points to.
        """
        name = KEY_ARGUMENTS.get(tool)
        raw = arguments.get(name) if name else None
        if raw is None or tool == "shell":
            return Call(tool, side_effect, raw)
        try:
            key = self.workspace.relative(self.workspace.resolve(raw))
        except PathOutsideWorkspace:
            return Call(tool, side_effect, raw)  # the tool itself will refuse it
        named = _as_written(self.workspace, raw)
        return Call(tool, side_effect, key, (named,) if named not in (None, key) else ())

    def decide(self, call: Call, hook: Verdict | None = None) -> Verdict:
        """The first layer with an opinion decides; an error in any layer denies.

        `hook` is what a PreToolUse hook said (chapter 4): it is heard after the
        deny rules and plan mode, which no hook can override. A hook's deny comes
        before the human's "always" answers; its allow or ask comes after them.
        """
        try:
            layers = self._layers()
            if hook is not None:
                layers.insert(2 if hook.decision is Decision.DENY else 3, lambda call: hook)
            for layer in layers:
                verdict = layer(call)
                if verdict.decision is not Decision.PASSTHROUGH:
                    return verdict
            return Verdict(Decision.ASK, self._why_ask(call))
        except Exception as error:
            return Verdict(Decision.DENY, f"policy error, denied to be safe: {error!r}")

    def hides(self, relative: str) -> bool:
        """Whether a read deny rule covers this file: glob and grep then skip it too.

        The rules see both the name and, for a symlink, the file it leads to: a link
        `notes.txt` -> `secrets/key.txt` is hidden by `read_file(secrets/**)`, as
        read_file itself is denied. A name that cannot be resolved is hidden.
        """
        rules = [rule for rule in self.deny if rule.tool == "read_file"]
        if not rules:
            return False
        try:
            target = self.workspace.relative(self.workspace.resolve(relative))
        except PathOutsideWorkspace:
            return True  # the boundary cannot vouch for it: neither can the rules
        return any(rule.matches("read_file", name) for rule in rules for name in {relative, target})

    def always_allow(self, call: Call) -> Rule:
        """The human answered "a": allow exactly this tool and key for the rest of the run."""
        rule = exact_rule(call.tool, call.key, "your answer in this run")
        self.added.append(rule)
        return rule

    def _layers(self) -> list[Callable[[Call], Verdict]]:
        return [
            lambda call: _first_part_match(call, self.deny, Decision.DENY),
            self._plan_mode,
            self._added_by_human,
            lambda call: (
                PASS
                if self.mode is Mode.BYPASS
                else _first_part_match(call, self.ask, Decision.ASK)
            ),
            lambda call: _all_parts_match(call, self.allow),
            self._mode_default,
        ]

    def _added_by_human(self, call: Call) -> Verdict:
        """The exact call the human allowed "always": compared whole, parts or not."""
        rule = next((r for r in self.added if r.matches(call.tool, call.key)), None)
        return Verdict(Decision.ALLOW, rule.describe(), rule) if rule else PASS

    def _why_ask(self, call: Call) -> str:
        """Name what kept a call from being allowed, so the human sees what to add."""
        if call.tool == "shell" and call.key is not None:
            split = split_command(call.key)
            if not split.understood:
                return f"not fully understood, so never auto-allowed: {', '.join(split.reasons)}"
            missing = [p for p in split.parts if not any(r.matches("shell", p) for r in self.allow)]
            if len(split.parts) > 1 and len(missing) < len(split.parts):
                return (
                    f"not every part is allowed: no allow rule for {', '.join(map(repr, missing))}"
                )
        return f"no rule matched, and mode {self.mode} does not allow {call.side_effect} calls"

    def _plan_mode(self, call: Call) -> Verdict:
        if self.mode is Mode.PLAN and call.side_effect is not SideEffect.READ:
            return Verdict(Decision.DENY, "mode plan (read-only)")
        return PASS

    def _mode_default(self, call: Call) -> Verdict:
        if call.side_effect in MODE_ALLOWS[self.mode]:
            return Verdict(Decision.ALLOW, f"mode {self.mode} allows {call.side_effect} calls")
        return PASS


def _parts(call: Call) -> tuple[tuple[str | None, ...], bool]:
    """A shell command's parts and whether they were understood; any other key as one part."""
    if call.tool == "shell" and call.key is not None:
        split = split_command(call.key)
        return split.parts or (call.key,), split.understood
    return (call.key,), True


def _first_part_match(call: Call, rules: Sequence[Rule], decision: Decision) -> Verdict:
    parts, _ = _parts(call)
    for part in (*parts, *call.aliases):  # a deny or an ask also holds for the name as written
        for rule in rules:
            if rule.matches(call.tool, part):
                return Verdict(decision, rule.describe(), rule)
    return PASS


def _as_written(workspace: Workspace, raw: str) -> str | None:
    """The workspace-relative path as the model spelled it, links not followed.

    `..` is applied as text here; that is safe because this name is only ever an
    extra name for deny and ask rules to match, never a reason to allow.
    """
    path = posixpath.normpath(raw.replace("\\", "/"))
    if posixpath.isabs(path) or PureWindowsPath(path).drive:
        root = workspace.root.as_posix()
        if not path.startswith(root.rstrip("/") + "/"):
            return None
        path = path[len(root.rstrip("/")) + 1 :]
    return None if path == ".." or path.startswith("../") else path


def _all_parts_match(call: Call, rules: Sequence[Rule]) -> Verdict:
    """Allow only if the command was understood and every part has an allow rule."""
    parts, understood = _parts(call)
    if not understood:
        return PASS  # at least ask: never auto-allow what the splitter did not understand
    matched = [next((r for r in rules if r.matches(call.tool, part)), None) for part in parts]
    if any(rule is None for rule in matched):
        return PASS
    sources = dict.fromkeys(rule.describe() for rule in matched if rule)
    return Verdict(Decision.ALLOW, "; ".join(sources), matched[0])

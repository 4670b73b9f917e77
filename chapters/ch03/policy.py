"""The permission policy: four decisions, layers in a fixed order, closed on failure.

Each layer answers allow, deny, ask, or passthrough ("no opinion: next layer").
The order is the whole design:

    1. deny rules                 a deny always wins, in every mode
    2. plan mode                  read-only: anything that changes something is denied
    3. control files              a write to the harness's own files: ask, every time
    4. your answers               calls the human answered "a" (always) during this run
    5. ask rules                  (not in bypass mode)
    6. allow rules                for a command: every part allowed, nothing not understood
    7. the mode                   default: reads; accept-edits: reads and writes; bypass: all
    8. nothing had an opinion     ask

A command (a tool whose key argument is a command line, like shell's) is
decided per part (`shell_split.py`): any part a deny rule matches denies the
whole; an ask rule on any part asks; allow rules allow only when every part is
allowed and the splitter understood the whole command. Any exception while
deciding is a deny: a policy that cannot decide must not let the call through.

The control files (`control.py`) are the files that decide what a run may do:
the settings, and whatever else the harness obeys. Only a human's yes, given
for that one call, lets a write to them run: no mode, rule or "always" answer.

Something else that judges calls can take part by adding a layer of its own
right after one of the named layers (`with_layer`); nothing it adds comes
before the deny rules.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import PureWindowsPath
from typing import Any

from chapters.ch02.workspace import PathOutsideWorkspace, Workspace
from chapters.ch03.control import ControlFile, ControlFiles
from chapters.ch03.rules import Rule, exact_rule
from chapters.ch03.shell_split import split_command
from shared.decisions import Decision
from shared.tools import KeyKind, SideEffect, Tool


class Mode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"
    BYPASS = "bypass"


CHANGES_NOTHING = {SideEffect.READ, SideEffect.STATE}  # the agent's own plan is not the machine
MODE_ALLOWS = {
    Mode.DEFAULT: CHANGES_NOTHING,
    Mode.ACCEPT_EDITS: CHANGES_NOTHING | {SideEffect.WRITE},
    Mode.PLAN: CHANGES_NOTHING,
    Mode.BYPASS: CHANGES_NOTHING | {SideEffect.WRITE, SideEffect.EXECUTE},
}
LAYERS = (
    "deny rules",
    "plan mode",
    "control files",
    "your answers",
    "ask rules",
    "allow rules",
    "mode",
)
CONTROL_FILE = "harness control file"


@dataclass(frozen=True)
class Verdict:
    decision: Decision  # never PASSTHROUGH once `decide` returns
    source: str  # why, for the audit and the human: "rule shell(rm:*) from --deny", "mode plan"
    rule: Rule | None = None
    # The control file the call would change (as shown): only a yes for this call allows it.
    control: str | None = None


PASS = Verdict(Decision.PASSTHROUGH, "")


@dataclass(frozen=True)
class Call:
    """What the policy looks at: the tool, its side effect, and its key argument."""

    tool: str
    side_effect: SideEffect
    key: str | None  # the command, or the workspace-relative path; None if the tool has none
    kind: KeyKind | None = None  # how rules read the key
    call_id: str = ""  # the tool_call id, so a layer added from outside can find its notes
    outside: str | None = None  # why the workspace boundary will refuse this path, if it will
    # Other names of the same file that deny and ask rules also see: the path as the
    # model wrote it, when `key` is where a symlink leads. Allow rules never see them.
    aliases: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        return self.tool if self.key is None else f"{self.tool}({self.key})"


Layer = Callable[[Call], Verdict]


@dataclass
class Policy:
    workspace: Workspace
    mode: Mode = Mode.DEFAULT
    deny: Sequence[Rule] = ()
    ask: Sequence[Rule] = ()
    allow: Sequence[Rule] = ()
    added: list[Rule] = field(default_factory=list)  # "always" answers of this run
    extra: list[tuple[str, Layer]] = field(default_factory=list)  # (after which layer, layer)
    control: ControlFiles = field(default_factory=ControlFiles)

    def call(self, tool: Tool, arguments: Mapping[str, Any], call_id: str = "") -> Call:
        """The key argument as rules see it: a command, or a workspace-relative path.

        A path is the file it resolves to (through symlinks), so `read_file(secrets/**)`
        also denies a link that leads there; the name as written rides along as an
        alias, so a deny rule on a link's own name holds whatever it points to.
        """
        key = tool.key
        raw = arguments.get(key.name) if key else None
        if key is None or raw is None:
            return Call(tool.name, tool.side_effect, None, None, call_id)
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        if key.kind is not KeyKind.PATH:
            return Call(tool.name, tool.side_effect, text, key.kind, call_id)
        try:
            relative = self.workspace.relative(self.workspace.resolve(text))
        except PathOutsideWorkspace as error:  # the tool itself will refuse it
            return Call(tool.name, tool.side_effect, text, key.kind, call_id, outside=str(error))
        named = _as_written(self.workspace, text)
        aliases = (named,) if named not in (None, relative) else ()
        return Call(tool.name, tool.side_effect, relative, key.kind, call_id, aliases=aliases)

    def with_layer(self, after: str, layer: Layer) -> Policy:
        """This policy with one more judge, heard right after the layer named `after`.

        The rules and this run's "always" answers stay shared with this policy.
        """
        if after not in LAYERS:
            raise ValueError(f"no layer named {after!r}; layers: {', '.join(LAYERS)}")
        return replace(self, extra=[*self.extra, (after, layer)])

    def protecting(self, files: Iterable[ControlFile]) -> Policy:
        """This policy with more control files: what a later part of the harness obeys.

        The rules and this run's "always" answers stay shared with this policy.
        """
        return replace(self, control=self.control.adding(files))

    def decide(self, call: Call) -> Verdict:
        """The first layer with an opinion decides; an error in any layer denies."""
        try:
            for layer in self._layers():
                verdict = layer(call)
                if verdict.decision is not Decision.PASSTHROUGH:
                    return verdict
            return Verdict(Decision.ASK, self._why_ask(call))
        except Exception as error:
            return Verdict(Decision.DENY, f"policy error, denied to be safe: {error!r}")

    def hides(self, relative: str) -> bool:
        """Whether a deny rule on a tool that reads by path covers this file: a rule that
        keeps one reader out (read_file) keeps the walking ones (glob, grep) out too.

        The rules see both the name and, for a symlink, the file it leads to: a link
        `notes.txt` -> `secrets/key.txt` is hidden by `read_file(secrets/**)`, as
        read_file itself is denied. A name that cannot be resolved is hidden.
        """
        rules = [rule for rule in self.deny if rule.reads and rule.kind is KeyKind.PATH]
        if not rules:
            return False
        try:
            target = self.workspace.relative(self.workspace.resolve(relative))
        except PathOutsideWorkspace:
            return True  # the boundary cannot vouch for it: neither can the rules
        return any(rule.matches(rule.tool, name) for rule in rules for name in {relative, target})

    def always_allow(self, call: Call) -> Rule:
        """The human answered "a": allow exactly this tool and key for the rest of the run."""
        rule = exact_rule(call.tool, call.key, call.kind, "your answer in this run")
        self.added.append(rule)
        return rule

    def _layers(self) -> list[Layer]:
        """The layers in the order they are heard, each followed by any added after it."""
        layers: list[Layer] = []
        for name, layer in [
            ("deny rules", self._deny_rules),
            ("plan mode", self._plan_mode),
            ("control files", self._control_files),
            ("your answers", self._added_by_human),
            ("ask rules", self._ask_rules),
            ("allow rules", self._allow_rules),
            ("mode", self._mode_default),
        ]:
            layers.append(layer)
            layers += [extra for after, extra in self.extra if after == name]
        return layers

    def _deny_rules(self, call: Call) -> Verdict:
        return _first_part_match(call, self.deny, Decision.DENY)

    def _ask_rules(self, call: Call) -> Verdict:
        if self.mode is Mode.BYPASS:
            return PASS
        return _first_part_match(call, self.ask, Decision.ASK)

    def _allow_rules(self, call: Call) -> Verdict:
        return _all_parts_match(call, self.allow)

    def _added_by_human(self, call: Call) -> Verdict:
        """The exact call the human allowed "always": compared whole, parts or not."""
        rule = next((r for r in self.added if r.matches(call.tool, call.key)), None)
        return Verdict(Decision.ALLOW, rule.describe(), rule) if rule else PASS

    def _why_ask(self, call: Call) -> str:
        """Name what kept a call from being allowed, so the human sees what to add."""
        if call.kind is KeyKind.COMMAND and call.key is not None:
            split = split_command(call.key)
            if not split.understood:
                return f"not fully understood, so never auto-allowed: {', '.join(split.reasons)}"
            missing = [
                p for p in split.parts if not any(r.matches(call.tool, p) for r in self.allow)
            ]
            if len(split.parts) > 1 and len(missing) < len(split.parts):
                return (
                    f"not every part is allowed: no allow rule for {', '.join(map(repr, missing))}"
                )
        return f"no rule matched, and mode {self.mode} does not allow {call.side_effect} calls"

    def _plan_mode(self, call: Call) -> Verdict:
        if self.mode is Mode.PLAN and call.side_effect not in CHANGES_NOTHING:
            return Verdict(Decision.DENY, "mode plan (read-only)")
        return PASS

    def _control_files(self, call: Call) -> Verdict:
        """A call that may change a control file is asked about, whatever comes after."""
        if call.side_effect in CHANGES_NOTHING or call.key is None:
            return PASS
        found: ControlFile | None = None
        if call.kind is KeyKind.PATH and call.outside is None:  # outside: the tool refuses it
            names = (call.key, *call.aliases)
            found = next(
                (f for n in names if (f := self.control.written(self.workspace.root / n))), None
            )
        elif call.kind is KeyKind.COMMAND:
            found = self.control.named_in(call.key)
        if found is None:
            return PASS
        how = "names" if call.kind is KeyKind.COMMAND else "writes"
        return Verdict(
            Decision.ASK,
            f"{how} the {CONTROL_FILE} {found.shown}: asked every time, whatever the mode or rules",
            control=found.shown,
        )

    def _mode_default(self, call: Call) -> Verdict:
        if call.side_effect in MODE_ALLOWS[self.mode]:
            return Verdict(Decision.ALLOW, f"mode {self.mode} allows {call.side_effect} calls")
        return PASS


def _parts(call: Call) -> tuple[tuple[str | None, ...], bool]:
    """A command's parts and whether they were understood; any other key as one part."""
    if call.kind is KeyKind.COMMAND and call.key is not None:
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

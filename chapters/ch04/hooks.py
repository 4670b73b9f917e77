"""Hooks: the user's own code at the loop's seams.

A hook is a command (or, in tests and the chapter text, a Python function) that
receives an event as JSON and answers with the same four decisions as chapter
3. The protocol of a command hook:

    stdin        the event: {"event", "workspace", and "tool", "input", "tool_call_id",
                 "result", "prompt" or "answer" as the event has them}
    exit code 0  no objection; stdout may hold a JSON object:
                 {"decision": "allow|deny|ask|passthrough", "reason": "...",
                  "additionalContext": "..."}
    exit code 2  block; stderr is the reason
    anything else, a timeout, or stdout that is not a JSON object: the hook failed

The command may name the call's arguments as placeholders, `ruff format {path}`.
Each value is quoted for the place it stands in (bare, '...' or "..."), a `path`
starting with `-` becomes `./-...`, and a placeholder where no quoting can keep a
value literal (inside `$(...)`, backticks, arithmetic, `[[`, a here-doc, a
comment, after an escape) fails the hook instead of running it, as does a value
with a line break where it would stand unquoted: see `fill_placeholders`. stdin
carries every value as JSON, which needs no quoting at all.

A failed hook never lets a call through silently: for PreToolUse and
UserPromptSubmit it blocks, for Stop it refuses the stop, for PostToolUse the
failure is written into the result the model reads. (Claude Code, by contrast,
blocks only on exit code 2; see the chapter text for why this chapter does not.)
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from shared.decisions import Decision
from shared.process import IS_WINDOWS, CommandOutcome, run_command


class HookEvent(StrEnum):
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"


@dataclass(frozen=True)
class HookReply:
    decision: Decision = Decision.PASSTHROUGH
    reason: str = ""
    context: str = ""  # "additionalContext": text added for the model
    failed: bool = False  # crashed, timed out, or answered nonsense


HookFunction = Callable[[Mapping[str, Any]], HookReply | None]
_RESTRICTIVENESS = [Decision.PASSTHROUGH, Decision.ALLOW, Decision.ASK, Decision.DENY]


@dataclass(frozen=True)
class Hook:
    event: HookEvent
    name: str  # what messages call it: the command, or the function's name
    run: HookFunction
    matcher: re.Pattern[str] | None = None  # tool names (PreToolUse, PostToolUse)

    def applies_to(self, tool: str | None) -> bool:
        return self.matcher is None or tool is None or self.matcher.fullmatch(tool) is not None


@dataclass(frozen=True)
class HookResult:
    """What all hooks of one event said together."""

    decision: Decision
    reason: str  # "guard.py: rm -rf is not allowed; ..." for the model, the human and the audit
    context: str


@dataclass
class Hooks:
    hooks: Sequence[Hook] = ()
    ran: list[tuple[HookEvent, str]] = field(default_factory=list)  # (event, hook name), in order

    def counts(self) -> dict[str, int]:
        """How many hooks each event has, for the start-up line."""
        counts: dict[str, int] = {}
        for hook in self.hooks:
            counts[hook.event] = counts.get(hook.event, 0) + 1
        return counts

    def run(
        self, event: HookEvent, payload: Mapping[str, Any], tool: str | None = None
    ) -> HookResult:
        """Run every matching hook in order; the most restrictive decision wins.

        A failed hook counts as deny. Contexts are joined in order.
        """
        decision, reasons, contexts = Decision.PASSTHROUGH, [], []
        for hook in self.hooks:
            if hook.event is not event or not hook.applies_to(tool):
                continue
            self.ran.append((event, hook.name))
            reply = _call(hook, payload)
            said = Decision.DENY if reply.failed else reply.decision
            if _RESTRICTIVENESS.index(said) > _RESTRICTIVENESS.index(decision):
                decision = said
            if reply.reason:
                reasons.append(f"{hook.name}: {reply.reason}")
            if reply.context:
                contexts.append(reply.context)
        return HookResult(decision, "; ".join(reasons), "\n".join(contexts))


def _call(hook: Hook, payload: Mapping[str, Any]) -> HookReply:
    try:
        reply = hook.run(payload)
    except Exception as error:
        return HookReply(reason=f"crashed ({type(error).__name__}: {error})", failed=True)
    return reply or HookReply()


def command_hook(
    event: HookEvent,
    command: str,
    *,
    name: str | None = None,
    workspace: Path,
    matcher: re.Pattern[str] | None = None,
    timeout: float,
) -> Hook:
    """A hook that runs `command` in the workspace with the event on stdin."""

    def run(payload: Mapping[str, Any]) -> HookReply:
        try:
            line = fill_placeholders(command, payload.get("input") or {})
        except PlaceholderError as error:  # nothing ran: a hook that cannot run has failed
            return HookReply(
                reason=f"cannot fill {{{error.name}}} in its command: {error}", failed=True
            )
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return read_reply(
            run_command(line, cwd=workspace, timeout=timeout, stdin_data=data, kill_leftovers=True),
            timeout,
        )

    return Hook(event, name or command, run, matcher)


def read_reply(outcome: CommandOutcome, timeout: float) -> HookReply:
    """Exit code and stdout, read by the protocol in the module docstring."""
    if outcome.timed_out:
        return HookReply(
            reason=f"timed out after {timeout:g} s (its process tree was killed)", failed=True
        )
    if outcome.exit_code == 2:
        return HookReply(Decision.DENY, _tail(outcome.stderr) or "blocked (exit code 2)")
    if outcome.exit_code != 0:
        said = _tail(outcome.stderr) or _tail(outcome.stdout)
        return HookReply(reason=f"failed with exit code {outcome.exit_code}: {said}", failed=True)
    if not outcome.stdout.strip():
        return HookReply()
    try:
        answer = json.loads(outcome.stdout)
        said = answer.get("decision", "passthrough")
        decision = (
            Decision.DENY if said == "block" else Decision(said)
        )  # "block": Claude Code's word
        return HookReply(
            decision, str(answer.get("reason", "")), str(answer.get("additionalContext", ""))
        )
    except (json.JSONDecodeError, AttributeError, ValueError):
        return HookReply(
            reason=f"printed something that is not a hook answer: {_tail(outcome.stdout)}",
            failed=True,
        )


class PlaceholderError(ValueError):
    """A placeholder cannot be filled with its value kept literal; the hook fails."""

    def __init__(self, name: str, where: str, problem: str = "") -> None:
        super().__init__(
            problem
            or f"{{{name}}} stands {where}, where no quoting keeps a value literal; move it "
            "out, or read the event from stdin instead"
        )
        self.name = name


_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_PLACEHOLDER_NOT_VARIABLE = re.compile(r"(?<!\$)\{(\w+)\}")  # `${name}` is the shell's
# Where a value cannot be quoted: it would be read as code (command substitution,
# arithmetic, `[[`, ANSI-C quoting) or by other rules (a here-doc body, a comment,
# which a line break in a value ends). A placeholder of the call at or after such a
# point is refused, not filled.
_BASH_UNQUOTABLE = ("$(", "`", "$[", "$'", "((", "[[", "<<")
_BASH_UNQUOTABLE_IN_DOUBLE = ("$(", "`", "$[")
_POWERSHELL_UNQUOTABLE = ("$(", "@(", "@'", '@"')  # subexpressions, here-strings
_POWERSHELL_UNQUOTABLE_IN_DOUBLE = ("$(",)
# bash starts a comment at a `#` that begins a word: after one of these (or at the start).
# PowerShell's rules differ (`<#` comments too): there any unquoted `#` counts.
_WORD_ENDS = frozenset(" \t\r\n;&|()<>")


def fill_placeholders(
    command: str, values: Mapping[str, Any], *, windows: bool = IS_WINDOWS
) -> str:
    """`ruff format {path}` -> `ruff format 'src/a.py'`: each value quoted for where it stands.

    Why by place: a value quoted for a bare word and then put between the user's
    double quotes (`echo "{path}"`) is live again: the path `$(touch pwned)` ran
    touch. So the command is read as the shell reads it, and each value is quoted
    for the place its placeholder stands in: bare, inside '...' or inside "...".
    A placeholder that stands where no quoting helps (inside `$(...)`, backticks,
    arithmetic, `[[`, a here-doc, after an escape, or in a comment, which a line
    break in the value would end: `# for {path}` ran the path's second line)
    raises `PlaceholderError`, and the hook fails (which blocks). So does a value
    holding a line break where its placeholder stands unquoted: quoted, the break
    would be literal, but a break is what ends a command or a comment, so it is
    never passed where a misread place could let it act. `${name}` is the
    shell's own variable, left as written. A `path` that starts with `-` is
    passed as `./-...`, so it cannot become an option. What quoting cannot do:
    stop a program from treating its argument as code (`eval`, `sh -c {command}`);
    read such values from stdin.
    """
    singles, doubles = (
        ("'\u2018\u2019\u201a\u201b", '"\u201c\u201d\u201e') if windows else ("'", '"')
    )
    escape = "`" if windows else "\\"
    unquotable = {
        "": _POWERSHELL_UNQUOTABLE if windows else _BASH_UNQUOTABLE,
        "double": _POWERSHELL_UNQUOTABLE_IN_DOUBLE if windows else _BASH_UNQUOTABLE_IN_DOUBLE,
    }
    out: list[str] = []
    quote, i = "", 0  # quote: "", "single" or "double"
    while i < len(command):
        placeholder = _PLACEHOLDER.match(command, i)
        if placeholder and placeholder[1] in values:
            value = _value(placeholder[1], values)
            if not quote and ("\n" in value or "\r" in value):
                raise PlaceholderError(placeholder[1], "", _bare_line_break(placeholder[1]))
            out.append(_quoted(value, quote, windows=windows))
            i = placeholder.end()
            continue
        char, closing, after = (
            command[i],
            singles if quote == "single" else doubles,
            command[i + 1 : i + 2],
        )
        if windows and quote and char in closing and after and after in closing:
            out.append(command[i : i + 2])  # PowerShell: a doubled quote stays in the string
            i += 2
            continue
        if quote == "single":
            quote = "" if char in singles else quote
            out.append(char)
            i += 1
            continue
        opener = next((o for o in unquotable[quote] if command.startswith(o, i)), None)
        if opener is not None:
            _refuse_placeholders(command[i:], values, f"after {opener}")
            out.append(command[i:])
            break
        if char == escape:
            escaped = _PLACEHOLDER.match(command, i + 1)
            if escaped and escaped[1] in values:
                raise PlaceholderError(escaped[1], f"after the escape {escape}")
            out.append(command[i : i + 2])
            i += 2
            continue
        if command.startswith("${", i):  # the shell's variable, never a placeholder
            end = _closing_brace(command, i + 2)
            out.append(command[i:end])
            i = end
            continue
        if not quote and char == "#" and (windows or i == 0 or command[i - 1] in _WORD_ENDS):
            _refuse_placeholders(command[i:], values, "in a comment (after #)")
            out.append(command[i:])  # the comment ends at a line break: a value would end it
            break
        if quote == "double":
            quote = "" if char in doubles else quote
        elif char in singles:
            quote = "single"
        elif char in doubles:
            quote = "double"
        out.append(char)
        i += 1
    return "".join(out)


def check_placeholders(command: str, *, windows: bool = IS_WINDOWS) -> None:
    """Raise `PlaceholderError` if any `{name}` stands where no value could be filled.

    Why before any call: such a hook would fail, and block, every call whose
    arguments fill it; a settings file that says so at load is the kinder error.
    Every `{name}` counts here, as if every tool had an argument of that name.
    """
    fill_placeholders(command, _EveryName(), windows=windows)


class _EveryName(Mapping[str, str]):
    """Values for `check_placeholders`: every name is an argument, each value a plain word."""

    def __getitem__(self, name: str) -> str:
        return "x"

    def __contains__(self, name: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _value(name: str, values: Mapping[str, Any]) -> str:
    text = str(values[name])
    return "./" + text if name == "path" and text.startswith("-") else text  # not an option


def _quoted(value: str, quote: str, *, windows: bool) -> str:
    """`value` as literal text at a bare place, inside '...' or inside "..."."""
    if windows:  # PowerShell: '' inside '...' (typographic quotes count); ` escapes in "..."
        if quote == "double":
            return re.sub('([`$"\u201c\u201d\u201e])', r"`\1", value)
        doubled = re.sub("(['\u2018\u2019\u201a\u201b])", r"\1\1", value)
        return doubled if quote == "single" else f"'{doubled}'"
    if quote == "double":
        return re.sub(r'([\\$`"])', r"\\\1", value)
    if quote == "single":
        return value.replace("'", "'\"'\"'")
    return shlex.quote(value)


def _bare_line_break(name: str) -> str:
    return (
        f"{{{name}}} stands unquoted and its value holds a line break, which ends a command "
        f"or a comment, so it is passed only inside quotes; write '{{{name}}}' or "
        f'"{{{name}}}", or read the event from stdin instead'
    )


def _refuse_placeholders(rest: str, values: Mapping[str, Any], where: str) -> None:
    for match in _PLACEHOLDER_NOT_VARIABLE.finditer(rest):
        if match[1] in values:
            raise PlaceholderError(match[1], where)


def _closing_brace(command: str, i: int) -> int:
    """Just past the `}` that closes a `${` whose body starts at `i` (nested braces counted)."""
    depth = 1
    while i < len(command) and depth:
        depth += {"{": 1, "}": -1}.get(command[i], 0)
        i += 1
    return i


def _tail(text: str, limit: int = 500) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else "…" + flat[-limit:]

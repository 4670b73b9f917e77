"""`permissions check` from this chapter on: the PreToolUse hooks are heard too.

A run hears its PreToolUse hooks before the policy decides (chapters/ch04/tool_hooks.py),
so a check that asked only the policy said `allow` where the run denies. The check
now runs them the same way, on an event whose input holds the one argument the
check knows (the key argument: `{"command": "ls"}`). They are the user's own
programs, so the output says which ran and on what; `--no-hooks` leaves them out,
and the output says that too. The hooks part (chapters/ch04/parts.py) is the adviser
chapter 3's check asks (`HooksPart.adviser`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from chapters.ch03.check import Advice
from chapters.ch03.policy import Call, Policy
from chapters.ch04.hooks import HookEvent, Hooks
from chapters.ch04.settings import load_hooks
from chapters.ch04.tool_hooks import PreToolUseHooks, call_event

PRE = HookEvent.PRE_TOOL_USE


class PreToolUseAdviser:
    """The check's `Adviser`: the PreToolUse hooks of the settings files, as a run loads them."""

    def options(self) -> Sequence[click.Option]:
        return [
            click.Option(
                ["--no-hooks"],
                is_flag=True,
                help="Do not run the PreToolUse hooks (your own programs, which the check "
                "otherwise runs, as a run would, before the policy decides).",
            )
        ]

    def advise(
        self, policy: Policy, call: Call, arguments: Mapping[str, Any], flags: Mapping[str, Any]
    ) -> Advice:
        hooks = Hooks(load_hooks(policy.workspace, Path.home()))  # exit 2 if malformed
        names = ", ".join(h.name for h in hooks.hooks if h.event is PRE and h.applies_to(call.tool))
        if flags.get("no_hooks"):
            would = (
                f"a run would hear {names} before this decision"
                if names
                else f"none matches {call.tool}"
            )
            return Advice(policy, [f"PreToolUse hooks: not consulted (--no-hooks); {would}"])
        if not names:
            return Advice(policy, [f"PreToolUse hooks consulted: none matches {call.tool}"])
        pre = PreToolUseHooks(hooks, policy.workspace)
        pre.hear(
            call.call_id,
            call.tool,
            call_event(PRE, policy.workspace, call.tool, arguments, call.call_id),
        )
        shown = json.dumps(dict(arguments), ensure_ascii=False)
        return Advice(
            pre.joined(policy),
            [
                f"PreToolUse hooks consulted: {names} (your own programs: they ran now, with the "
                f"input {shown}; --no-hooks leaves them out)"
            ],
        )

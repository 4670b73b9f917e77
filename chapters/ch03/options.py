"""The policy, chosen on the command line: --workspace, --mode, --allow, --deny.

The agent and `permissions check` share these options, and so does every
later chapter that has a policy.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import Mode, Policy
from chapters.ch03.settings import NOT_READ_HERE, load_policy
from shared.tools import ToolRegistry

F = TypeVar("F", bound=Callable[..., Any])


POLICY_FLAGS = (
    click.option(
        "--mode",
        type=click.Choice([m.value for m in Mode]),
        help="default (reads allowed), accept-edits (writes too), plan (read-only), "
        "bypass (everything no deny rule matches runs unasked; deny rules see only the "
        "text of each part). Default: the settings' defaultMode, else default.",
    ),
    click.option(
        "--allow",
        multiple=True,
        metavar="RULE",
        help="Allow rule, e.g. 'shell(git status)'.",
    ),
    click.option("--deny", multiple=True, metavar="RULE", help="Deny rule, e.g. 'shell(rm:*)'."),
)


def policy_options(function: F) -> F:
    """--workspace, --mode, --allow, --deny."""
    for option in reversed([workspace_option, *POLICY_FLAGS]):
        function = option(function)
    return function


def policy_from_options(
    root: Workspace,
    tools: ToolRegistry,
    mode: str | None,
    allow: Sequence[str],
    deny: Sequence[str],
    other_keys: Collection[str] = NOT_READ_HERE,
) -> Policy:
    """Both settings files, then the flags; rules may name any of `tools` (exit 2 if malformed).

    `other_keys`: the settings files' other top-level keys that this run reads elsewhere.
    """
    return load_policy(
        root,
        Path.home(),
        known_tools=tools,
        mode=Mode(mode) if mode else None,
        allow=allow,
        deny=deny,
        other_keys=other_keys,
    )

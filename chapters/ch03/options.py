"""The policy, chosen on the command line: --workspace, --mode, --allow, --deny.

The agent and `permissions check` share these options, and so does every
later chapter that has a policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from chapters.ch02.options import workspace_option
from chapters.ch03.policy import Mode

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

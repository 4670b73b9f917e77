"""Chapter 3's parts: a permission policy, and the gate that replaces asking always.

policy  --mode, --allow, --deny over both settings files: one `Policy` per command,
        its rules checked against every tool the agent has (exit 2 if malformed);
        glob and grep skip what a read deny rule covers; `permissions check`
gate    step 4 and after it: the policy decides, only "ask" reaches the human,
        every decision and every outcome is audited (chapters/ch03/gate.py)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from chapters.ch02.parts import SEARCH_HIDDEN, WORKSPACE
from chapters.ch03.options import POLICY_FLAGS
from shared.cli import params_of
from shared.parts import Build, Part, Setup, Subcommand
from shared.recipe import AUTHORIZE, FINISH, home_folder, listed_tools
from shared.slots import Key

if TYPE_CHECKING:
    from chapters.ch03.asking import Asker
    from chapters.ch03.audit import AuditLog
    from chapters.ch03.check import Adviser
    from chapters.ch03.policy import Policy
    from shared.recipe import Recipe

POLICY: Key[Policy] = Key("the permission policy")
GATE_POLICY: Key[Policy] = Key("the policy the gate decides with (this run's)")
ASKER: Key[Asker] = Key("who answers the gate's questions")
AUDIT: Key[AuditLog] = Key("the audit log")


class PolicyPart(Part):
    """The rules and the mode, from the settings files and the flags."""

    name = "policy"
    summary = "--mode, --allow, --deny over the settings files: what runs, what asks"
    options = params_of(*POLICY_FLAGS)

    def setup(self, setup: Setup) -> None:
        from chapters.ch03.policy import Mode
        from chapters.ch03.settings import load_policy

        def made() -> Policy:  # both settings files (exit 2 if malformed), then the flags
            mode = setup.option("mode")
            return load_policy(
                setup.get(WORKSPACE),
                home_folder(setup),
                known_tools=listed_tools(setup),  # names, keys and side effects: nothing runs
                mode=Mode(mode) if mode else None,
                allow=setup.option("allow"),
                deny=setup.option("deny"),
            )

        setup.provide(POLICY, made)
        setup.provide(SEARCH_HIDDEN, lambda: setup.get(POLICY).hides)
        setup.add_banner("policy", lambda: f"mode: {setup.get(POLICY).mode}")

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch03.check import make_check_command

        return {
            "permissions check": Subcommand(
                make_check_command,
                help="What the policy decides for 'TOOL(ARGUMENT)', and why; the call never runs.",
                absent="Chapter {n} has no permission policy; use chapter 3 or later",
                example_args="'shell(ls)'",
                group_help="Inspect a chapter's permission policy (chapter 3 and later).",
            )
        }


class Gate(Part):
    """Step 4: the policy decides; "ask" reaches the human; all of it is audited."""

    name = "gate"
    summary = "step 4: the policy decides, only 'ask' reaches you, all is audited"

    def setup(self, setup: Setup) -> None:
        from chapters.ch03.audit import AUDIT_FILE, AuditLog

        def root() -> Path:
            return setup.get(WORKSPACE).root

        setup.provide(AUDIT, lambda: AuditLog(root() / AUDIT_FILE, inside=root()))
        setup.add_banner("policy", lambda: f"audit: {AUDIT_FILE.as_posix()}", after=["policy"])

    def contribute(self, build: Build) -> None:
        from chapters.ch03.asking import TerminalAsker
        from chapters.ch03.gate import PermissionGate

        def made() -> PermissionGate:  # for a run: a listing has no one to ask
            console = build.run_console
            return PermissionGate(
                build.find(GATE_POLICY, build.get(POLICY)),
                build.find(ASKER, None) or TerminalAsker(console),
                build.get(AUDIT),
                console,
            )

        gate = build.later(made)
        build.add(AUTHORIZE, gate, label="PermissionGate")
        build.add(FINISH, gate, label="PermissionGate")


def advisers(recipe: Recipe) -> list[Adviser]:
    """What the recipe's parts hear before the policy decides, for `permissions check`."""
    return [a for part in recipe.parts if (a := getattr(part, "adviser", None)) is not None]

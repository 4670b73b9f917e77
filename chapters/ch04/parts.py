"""Chapter 4's part: the user's hooks, at four of the loop's seams.

    hooks  from both settings files (exit 2 if malformed); PreToolUse before the
           gate, its say inside the gate's policy; PostToolUse after the gate;
           UserPromptSubmit and Stop as features (chapters/ch04/loop_hooks.py,
           tool_hooks.py); the programs the hooks run become control files;
           `permissions check` hears PreToolUse hooks too

`STOP_FIELDS` is the Stop event's extra fields: a later part adds one there (which
agent is stopping, say) instead of changing this one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from chapters.ch02.parts import WORKSPACE
from chapters.ch03.parts import GATE_POLICY, POLICY
from shared.parts import Build, Part, Setup
from shared.recipe import AUTHORIZE, FEATURES, FINISH, home_folder
from shared.slots import Key, Slot

if TYPE_CHECKING:
    from chapters.ch02.workspace import Workspace
    from chapters.ch04.check_hooks import PreToolUseAdviser
    from chapters.ch04.hooks import Hooks

HOOKS: Key[Hooks] = Key("the hooks")
STOP_FIELDS = Slot[Callable[[], Mapping[str, Any]]](
    "stop fields", "more fields of the Stop event, each from the part that knows them"
)


class HooksPart(Part):
    """Your own programs, heard at the loop's seams and around the gate."""

    name = "hooks"
    summary = "your programs at four seams: PreToolUse, PostToolUse, UserPromptSubmit, Stop"

    @property
    def adviser(self) -> PreToolUseAdviser:
        from chapters.ch04.check_hooks import PreToolUseAdviser

        return PreToolUseAdviser()

    def setup(self, setup: Setup) -> None:
        from chapters.ch04.hooks import Hooks
        from chapters.ch04.settings import hook_programs, load_hooks

        def workspace() -> Workspace:
            return setup.get(WORKSPACE)

        setup.provide(HOOKS, lambda: Hooks(load_hooks(workspace(), home_folder(setup))))
        setup.decorate(
            POLICY, lambda p: p.protecting(hook_programs(workspace(), home_folder(setup)))
        )
        setup.add_banner("policy", lambda: f"hooks: {counts(setup.get(HOOKS))}", after=["gate"])

    def contribute(self, build: Build) -> None:
        from chapters.ch04.loop_hooks import PromptHooks, StopHooks
        from chapters.ch04.tool_hooks import PostToolUseHooks, PreToolUseHooks

        # Made for a run: a listing lists them without reading the hooks, and the
        # policy (which lists the tools) is not asked for while the tools are listed.
        def hooks() -> Hooks:
            return build.get(HOOKS)

        def fields() -> dict[str, Any]:
            return {k: v for more in build.values(STOP_FIELDS) for k, v in more().items()}

        workspace = build.get(WORKSPACE)
        pre = build.later(lambda: PreToolUseHooks(hooks(), workspace))
        build.provide(GATE_POLICY, build.later(lambda: pre().joined(build.get(POLICY))))
        build.add(AUTHORIZE, pre, before=["gate"], label="PreToolUseHooks")
        build.add(
            FINISH,
            build.later(lambda: PostToolUseHooks(hooks(), workspace)),
            after=["gate"],
            label="PostToolUseHooks",
        )
        build.add(
            FEATURES, build.later(lambda: PromptHooks(hooks(), workspace)), label="PromptHooks"
        )
        build.add(
            FEATURES,
            build.later(lambda: StopHooks(hooks(), workspace, more=fields)),
            children=True,
            label="StopHooks",
        )


def counts(hooks: Hooks) -> str:
    return ", ".join(f"{e}: {n}" for e, n in hooks.counts().items()) or "none"

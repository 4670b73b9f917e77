"""Chapter 1's recipe builds the agent the chapter text builds by hand."""

from __future__ import annotations

from pathlib import Path

from chapters.ch01.approve import AskHuman
from chapters.ch01.prompt import SYSTEM_PROMPT
from chapters.ch01.shell_tool import make_shell_tool
from chapters.ch01.tests.harness import BASH, FakeRunner, ScriptedApprover, plain_console
from chapters.testing import agent_of
from shared.agent import AgentSpec, stop_on_unfinished_reply
from shared.calls import CallPipeline
from shared.scripted import ScriptedModel
from shared.tools import ToolRegistry


def test_the_recipe_builds_the_spec_the_text_builds_by_hand(tmp_path: Path) -> None:
    model, console, approver, runner = (
        ScriptedModel([]),
        plain_console(),
        ScriptedApprover([]),
        FakeRunner(),
    )
    by_hand = AgentSpec(
        model=model,
        tools=ToolRegistry([make_shell_tool(tmp_path, runner=runner, shell=BASH)]),
        calls=CallPipeline(authorize=(AskHuman(approver, console),)),
        console=console,
        system_prompt=SYSTEM_PROMPT,
        max_turns=7,
    )
    built = agent_of(
        1,
        model=model,
        console=console,
        approver=approver,
        cwd=tmp_path,
        runner=runner,
        shell=BASH,
        max_turns=7,
    )
    assert built.model is by_hand.model and built.console is by_hand.console
    assert built.tools.snapshot().schemas() == by_hand.tools.snapshot().schemas()
    assert built.calls == by_hand.calls  # the same pipeline: one AskHuman, nothing after
    assert built.system_prompt == by_hand.system_prompt
    assert (built.features, built.max_turns) == (by_hand.features, by_hand.max_turns)
    assert built.check_reply is stop_on_unfinished_reply

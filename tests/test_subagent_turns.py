"""A sub-agent takes no more turns than its parent may: from chapter 6 on, a child's
max_turns is the smaller of its definition's and the parent's (`--max-turns`).

Chapter 6 brings children (chapters/ch06/task.py, `Delegation`); every later chapter
starts them through the same `Delegation`, so the promise is checked in each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch03.asking import ScriptedAsker
from chapters.ch06.definitions import DEFAULT_MAX_TURNS
from shared.scripted import response, tool_call
from tests.any_chapter import AnyChapter
from tutorial.catalog import CHAPTERS

CHILD_PROMPT = "find it"
FROM_6 = [chapter.number for chapter in CHAPTERS if chapter.ready and chapter.number >= 6]


class Family:
    """The parent starts one `general` child; the child never stops calling glob."""

    name = "scripted-model"
    label = "scripted-model (scripted, no network)"

    def __init__(self) -> None:
        self.parent: list[Mapping[str, Any]] = []
        self.child: list[Mapping[str, Any]] = []

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        if request["messages"][1]["content"] == CHILD_PROMPT:  # the child's history
            self.child.append(request)
            pattern = json.dumps({"pattern": f"*.{len(self.child)}"})
            return response(None, [tool_call(f"g{len(self.child)}", "glob", pattern)])
        self.parent.append(request)
        if len(self.parent) == 1:
            task = {"description": "look around", "prompt": CHILD_PROMPT, "agent": "general"}
            return response(None, [tool_call("t1", "task", json.dumps(task))])
        return response("the parent answered")


@pytest.mark.parametrize("number", FROM_6)
def test_the_parents_max_turns_caps_a_childs(number: int, tmp_path: Path) -> None:
    model = Family()
    agent = AnyChapter(tmp_path, number, ScriptedAsker([]), model=model, max_turns=3)
    assert agent.run() == "the parent answered"
    assert len(model.child) == 3 < DEFAULT_MAX_TURNS
    [result] = agent.results()
    assert result.startswith("subagent_failed: general ended without an answer")
    assert "it used all 3 turns its max_turns allows" in result
    assert f"its definition says {DEFAULT_MAX_TURNS}" in result


@pytest.mark.parametrize("number", FROM_6)
def test_a_child_keeps_its_own_smaller_max_turns(number: int, tmp_path: Path) -> None:
    model = Family()
    agent = AnyChapter(tmp_path, number, ScriptedAsker([]), model=model, max_turns=30)
    agent.run()
    assert len(model.child) == DEFAULT_MAX_TURNS
    assert "its definition says" not in agent.results()[0]

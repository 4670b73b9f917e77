"""A call the human refused is not asked again: in every chapter from the first, an
identical repeat (same tool, same validated arguments) is answered by the harness itself.

The refusal told the model that asking again will be refused too; this is what keeps
that promise. Chapter 1 brings asking the human (chapters/ch01/approve.py), chapter 3
asks only when the policy says ask (chapters/ch03/gate.py) and writes the automatic
refusal to the audit log like any other decision.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.harness import ScriptedApprover
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.tests.support import read_audit
from shared.scripted import ScriptedModel, response, tool_call
from tests.any_chapter import AnyChapter
from tutorial.catalog import CHAPTERS

READY = [chapter.number for chapter in CHAPTERS if chapter.ready]


def shell(call_id: str, raw_arguments: str) -> dict[str, Any]:
    return response(None, [tool_call(call_id, "shell", raw_arguments)])


def script() -> ScriptedModel:
    """The same refused command three times, written differently on the wire the second
    time (the validated arguments are the same), then another command, then an answer."""
    return ScriptedModel(
        [
            shell("c1", json.dumps({"command": "rm -rf build"})),
            shell("c2", '{ "command" :   "rm -rf build" }'),
            shell("c3", json.dumps({"command": "rm -rf build"})),
            shell("c4", json.dumps({"command": "rm -rf dist"})),
            response("It was not run."),
        ]
    )


def human(number: int, *typed: str) -> Any:
    """The human of the chapter: typed answers from chapter 3 on, yes or no before."""
    if number < 3:
        return ScriptedApprover([text.startswith("y") for text in typed])
    return ScriptedAsker(list(typed))


def asked(agent: AnyChapter) -> list[str]:
    return [request.arguments["command"] for request in agent.human.requests]


@pytest.mark.parametrize("number", READY)
def test_an_identical_repeat_of_a_refused_call_is_refused_without_asking_the_human(
    number: int, tmp_path: Path
) -> None:
    agent = AnyChapter(tmp_path, number, human(number, "n", "n"), model=script())
    assert agent.run() == "It was not run."
    assert asked(agent) == ["rm -rf build", "rm -rf dist"]  # each command once
    assert agent.runner.commands == []
    first, second, third, other = agent.results()
    assert first.startswith("denied: the human refused this call")
    for repeat in (second, third):
        assert repeat.startswith("denied: the human already refused this exact call")
        assert "not asked again" in repeat
    assert other.startswith("denied: the human refused this call")


@pytest.mark.parametrize("number", [n for n in READY if n >= 3])
def test_a_refusal_with_text_is_remembered_with_its_text_and_the_repeat_is_audited(
    number: int, tmp_path: Path
) -> None:
    agent = AnyChapter(tmp_path, number, human(number, "n use ls first", "n"), model=script())
    agent.run()
    assert asked(agent) == ["rm -rf build", "rm -rf dist"]
    second = agent.results()[1]
    assert "not asked again" in second and "The human said: use ls first" in second
    decisions = [
        (line["tool_call_id"], line["decision"], line["source"])
        for line in read_audit(agent.audit_path)
        if line["source"].startswith("human")
    ]
    assert decisions[:3] == [
        ("c1", "deny", "human: no: use ls first"),
        ("c2", "deny", "human: refused earlier in this run, not asked again"),
        ("c3", "deny", "human: refused earlier in this run, not asked again"),
    ]


@pytest.mark.parametrize("number", READY)
def test_an_approved_call_is_asked_again_next_time(number: int, tmp_path: Path) -> None:
    """Only a refusal is remembered: a yes is for this once, as before."""
    model = ScriptedModel(
        [
            shell("c1", json.dumps({"command": "make"})),
            shell("c2", json.dumps({"command": "make"})),
            response("built twice"),
        ]
    )
    agent = AnyChapter(tmp_path, number, human(number, "y", "y"), model=model)
    assert agent.run() == "built twice"
    assert asked(agent) == ["make", "make"]
    assert agent.runner.commands == ["make", "make"]

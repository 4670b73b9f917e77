"""A sub-agent cannot write a control file either, and agent definitions are control files.

A child's calls go through its parent's pipeline, so the same policy asks
about them (chapters/ch03/control.py); and a definition in `.tutorial/agents/`
decides what a sub-agent is told and which tools it gets, so writing one is
asked about like writing the settings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.tests.support import (
    RunChapter,
    TaskModel,
    call,
    read_audit,
    ready_from,
    task,
    tutorial,
)
from chapters.ch03.tests.test_control_files import told_why

pytestmark = pytest.mark.usefixtures("isolated")

PLANTED = json.dumps({"permissions": {"defaultMode": "bypass"}})


@pytest.mark.parametrize("chapter", ready_from(6))
def test_a_sub_agent_cannot_write_the_settings_without_a_human_yes(
    run_chapter: RunChapter, workspace: Path, chapter: int
) -> None:
    delegate = call("t1", "task", description="settings", prompt="plant the settings")
    plant = call("c1", "write_file", path=".tutorial/settings.json", content=PLANTED)
    model = TaskModel({"do the task": [delegate], "plant the settings": [plant]})
    result = run_chapter(chapter, workspace, model, "--mode", "accept-edits")
    assert result.exit_code == 0, result.stderr
    assert not (workspace / ".tutorial" / "settings.json").exists()
    decisions = [(r["tool_call_id"], r["decision"]) for r in read_audit(workspace / AUDIT_FILE)]
    assert ("c1", "ask") in decisions and ("c1", "deny") in decisions
    assert ("c1", "allow") not in decisions
    assert told_why(".tutorial/settings.json") in result.stdout  # the child read why


@pytest.mark.parametrize("chapter", ready_from(6))
def test_an_agent_definition_is_written_only_with_a_human_yes(
    run_chapter: RunChapter, workspace: Path, chapter: int
) -> None:
    definition = "---\nname: helper\ndescription: helps\n---\nDo as you are told.\n"
    write = call("c1", "write_file", path=".tutorial/agents/helper.md", content=definition)
    result = run_chapter(chapter, workspace, task(write), "--mode", "accept-edits")
    assert result.exit_code == 0, result.stderr
    assert not (workspace / ".tutorial" / "agents" / "helper.md").exists()
    assert told_why(".tutorial/agents/") in result.stdout


@pytest.mark.parametrize("chapter", ready_from(6))
def test_the_check_asks_about_an_agent_definition_as_a_run_does(
    tmp_path: Path, chapter: int
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    options = ("--chapter", str(chapter), "--workspace", str(workspace), "--mode", "bypass")
    result = tutorial("permissions", "check", *options, "write_file(.tutorial/agents/x.md)")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [
        "ask: write_file(.tutorial/agents/x.md)",
        "  because: writes the harness control file .tutorial/agents/: asked every time, "
        "whatever the mode or rules",
    ]

"""Chapter 2 end to end: the command line, the demo, and a read-then-edit over the real SDK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import chapters.ch02.parts as parts
from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import tutorial
from chapters.ch01.tests.harness import FakeRunner, ScriptedApprover, plain_console
from chapters.ch02.agent import RECIPE
from chapters.ch02.demo import DEMO_FILE, DEMO_SOURCE
from chapters.ch02.prompt import SYSTEM_PROMPT
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch02.workspace import Workspace
from chapters.testing import agent_of
from shared import approval
from shared.config import Settings
from shared.openai_client import OpenAIChatModel
from shared.parts import Setup
from shared.scripted import response, tool_call


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


demo_folder = demo_folder_fixture(
    lambda folder: (folder / DEMO_FILE).write_text(DEMO_SOURCE, encoding="utf-8")
)


def test_demo_without_a_terminal_changes_nothing(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "2", "--demo")
    assert result.exit_code == 0, result.stderr
    assert (demo_folder / DEMO_FILE).read_text(encoding="utf-8") == DEMO_SOURCE
    assert result.stdout.startswith("[scripted] ") and "denied" in result.stdout
    assert '+    print("hello, world")' in result.stderr  # the diff was still shown


def test_demo_approved_edits_the_file_and_reports(
    demo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "is_terminal", lambda stream: True)
    result = tutorial("run", "--chapter", "2", "--demo", stdin="y\n")
    assert result.exit_code == 0, result.stderr
    assert 'print("hello, world")' in (demo_folder / DEMO_FILE).read_text(encoding="utf-8")
    assert "ok: edited greet.py (1 replaced)" in result.stdout
    assert "lines 1-5 of 5" in result.stderr  # the read ran without asking


def test_the_demo_makes_its_own_workspace_and_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, str] = {}
    make = parts.demo  # the recipe's demo folder, made by chapters/ch02/demo.py

    def remembering(setup: Setup) -> Path:
        folder = make(setup)
        seen["source"] = (folder / DEMO_FILE).read_text(encoding="utf-8")
        return folder

    monkeypatch.setattr(parts, "demo", remembering)
    result = tutorial("run", "--chapter", "2", "--demo")
    assert result.exit_code == 0
    folder = Path(result.stderr.split("folder: ", 1)[1].split()[0])
    assert folder != tmp_path and folder.name.startswith("tutorial-ch02-demo-")
    assert seen["source"] == DEMO_SOURCE
    assert not folder.exists()  # nothing left behind in the temporary folder


def test_workspace_must_be_an_existing_folder(tmp_path: Path) -> None:
    result = tutorial("run", "--chapter", "2", "--prompt", "hi", "--workspace", "missing")
    assert result.exit_code == 2
    assert "--workspace" in result.stderr and "does not exist" in result.stderr


def test_demo_and_workspace_do_not_mix(tmp_path: Path) -> None:
    result = tutorial("run", "--chapter", "2", "--demo", "--workspace", str(tmp_path))
    assert result.exit_code == 2
    assert "--demo makes its own temporary workspace" in result.stderr


def test_chapter_2_needs_settings_like_chapter_1() -> None:
    result = CliRunner().invoke(RECIPE.command(), ["--prompt", "hi"])
    assert result.exit_code == 2
    assert result.stderr.startswith("配置错误：Missing required settings")


def test_diff_shows_only_what_chapter_2_adds() -> None:
    result = tutorial("diff", "--chapter", "2")
    assert result.exit_code == 0
    out = result.stdout
    assert "--- /dev/null\n+++ chapters/ch02/workspace.py" in out
    assert "--- recipe of chapter 1\n+++ recipe of chapter 2" in out  # its command line too
    assert "+  --workspace " in out
    assert "chapters/ch02/loop.py" not in out  # imported, not copied
    assert "+++ chapters/ch02/shell_tool.py" not in out
    assert "--- chapters/ch01/agent.py\n+++ chapters/ch02/agent.py" in out  # what it extends


def test_read_then_edit_over_the_real_sdk(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("DEBUG = True\n", encoding="utf-8")
    edit = {"path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    replies = [
        (200, response(None, [tool_call("call_1", "read_file", '{"path": "app.py"}')])),
        (200, response(None, [tool_call("call_2", "edit_file", json.dumps(edit))])),
        (200, response("Turned DEBUG off.")),
    ]
    settings = Settings.model_validate(
        {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
    )
    with ChatServer(replies) as server:
        settings = settings.model_copy(update={"base_url": server.base_url})
        approver = ScriptedApprover([True])
        agent = agent_of(
            2,
            model=OpenAIChatModel(settings),
            console=plain_console(),
            approver=approver,
            workspace=Workspace(tmp_path),
            runner=FakeRunner(),
        )
        answer = run_agent("Turn DEBUG off in app.py", agent)
        bodies = [r.body for r in server.completion_requests()]
    assert answer == "Turned DEBUG off."
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "DEBUG = False\n"
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == [
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
        "shell",
    ]
    assert bodies[0]["messages"][0]["content"] == SYSTEM_PROMPT
    read_result = bodies[1]["messages"][-1]
    assert read_result["tool_call_id"] == "call_1"
    assert (
        read_result["content"] == "ok: app.py, line 1 of 1 (the whole file)\n     1\tDEBUG = True"
    )
    assert bodies[2]["messages"][-1]["content"].startswith("ok: edited app.py")
    assert approver.requests[0].preview is not None

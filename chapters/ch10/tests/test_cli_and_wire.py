"""Chapter 10's command line: the demo loads a skill and reads one of its files, `--trace` shows
the assembled prompt and the skill arriving, and the composed agent goes over the real `openai`
SDK, streamed, to the local server (chapters/ch01/tests/chat_server.py), whose recorded requests
show the system prompt byte for byte: the same in every request of a run, in two runs in one
folder, and the one `prompt --raw` prints."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter

from chapters.ch01.tests.chat_server import ChatServer, StreamReply
from chapters.ch01.tests.cli_support import command_line, model_env, sse, traced_by_title
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch08.tests.composed import args, write_files
from chapters.ch10.agent import RECIPE
from chapters.ch10.demo import DEMO_PROMPT, EXTRA_FILE, PATCH, SKILL, write_demo_workspace
from chapters.ch10.skills import SKILLS_FOLDER
from chapters.ch10.tests.support import skill_text
from shared.contract import ContractChecker
from shared.messages import Message

pytestmark = pytest.mark.usefixtures("isolated")

chapter10 = command_line(RECIPE.command(), "python -m chapters.ch10")  # in this process
demo_folder = demo_folder_fixture(write_demo_workspace)

WIRE = TypeAdapter(Message)
CHECKLIST = f"{SKILLS_FOLDER.as_posix()}/{SKILL}/{EXTRA_FILE}"
INDEX_LINE = f"- {SKILL}: Review a Python diff or branch for common mistakes"
BODY_HEADING = "# Reviewing a Python diff"  # the first line of the skill's instructions


# --- the demo ------------------------------------------------------------------------------------


def test_the_demo_loads_the_skill_reads_its_checklist_and_answers(demo_folder: Path) -> None:
    result = chapter10("--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"[scripted] Review of {PATCH} ({SKILL}, {EXTRA_FILE}):\n")
    assert "bug  shop/cart.py:11  `used: list[str] = []` is made once" in result.stdout
    assert result.stdout.endswith("changes needed: the shared default list.\n")
    err = result.stderr
    assert re.search(
        r"^system prompt: [\d,]+ characters, ~[\d,]+ tokens \(identity, tools, project "
        r"instructions, skills, memory, environment\)$",
        err,
        re.M,
    )
    loaded = f"[load_skill → ok]\nok: skill {SKILL} (.tutorial/skills/{SKILL}/SKILL.md)."
    assert loaded in err
    assert f"[read_file → ok]\nok: {CHECKLIST}, lines 1-" in err
    assert err.index(loaded) < err.index(f"ok: {CHECKLIST}")
    assert "harness: " not in err  # nothing in the demo's folder is broken


def test_the_demos_trace_shows_the_index_first_and_the_instructions_only_once_loaded(
    demo_folder: Path,
) -> None:
    result = chapter10("--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    documents = traced_by_title(result.stderr)
    first, second, third = (documents[f"request {n}"] for n in (1, 2, 3))
    system = first["messages"][0]["content"]
    assert INDEX_LINE in system and "- conventional-commit: " in system
    assert BODY_HEADING not in system  # the body is not in the prompt...
    assert first["messages"][1] == {"role": "user", "content": DEMO_PROMPT}
    assert "load_skill" in {tool["function"]["name"] for tool in first["tools"]}
    result_1 = second["messages"][3]
    assert result_1["tool_call_id"] == "call_1"
    assert BODY_HEADING in result_1["content"]  # ...it arrives as load_skill's result
    assert result_1["content"].endswith(f"\n- {CHECKLIST}")
    calls = third["messages"][4]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": CHECKLIST}
    assert second["messages"][0]["content"] == third["messages"][0]["content"] == system


def test_the_demo_with_no_stream_loads_the_skill_too(demo_folder: Path) -> None:
    result = chapter10("--demo", "--no-stream")
    assert result.exit_code == 0, result.stderr
    assert "streaming: off (--no-stream)" in result.stderr
    assert f"[load_skill → ok]\nok: skill {SKILL}" in result.stderr


def test_resume_with_the_demo_is_a_usage_error() -> None:
    result = chapter10("--demo", "--resume")
    assert result.exit_code == 2
    assert "--demo runs a session of its own in a new folder; drop --resume" in result.stderr


# --- over the wire -------------------------------------------------------------------------------


def load_then_read_then_answer() -> list[StreamReply]:
    notes = f"{SKILLS_FOLDER.as_posix()}/release/steps.md"
    return [
        sse(*calls_stream(("call_1", "load_skill", args(name="release")))),
        sse(*calls_stream(("call_2", "read_file", args(path=notes)))),
        sse(*text_stream("Tag, then push.")),
    ]


def test_the_composed_agent_over_the_wire_sends_one_prompt_the_one_prompt_raw_prints(
    tmp_path: Path,
) -> None:
    """Two runs in one folder, three requests each, through the SDK, streamed: six system
    messages, byte for byte the same, and the prompt `prompt --raw` prints for the folder."""
    workspace = tmp_path / "ws"
    release = skill_text("release", "Ship a release. Use when asked to release.", "See steps.md.")
    write_files(
        workspace,
        {
            "AGENTS.md": "Releases are tagged vX.Y.Z.\n",
            f"{SKILLS_FOLDER.as_posix()}/release/SKILL.md": release,
            f"{SKILLS_FOLDER.as_posix()}/release/steps.md": "1. tag\n2. push\n",
        },
    )
    env = model_env("")
    bodies: list[dict[str, Any]] = []
    for _ in range(2):
        with ChatServer(load_then_read_then_answer()) as server:
            env["OPENAI_BASE_URL"] = server.base_url
            result = chapter10("--prompt", "Release it.", "--workspace", str(workspace), env=env)
            bodies += [r.body for r in server.completion_requests()]
        assert result.exit_code == 0, result.stderr
        assert result.stdout == "Tag, then push.\n"

    systems = [body["messages"][0] for body in bodies]
    assert len(systems) == 6 and all(s == systems[0] for s in systems)
    system = systems[0]["content"]
    assert "Releases are tagged vX.Y.Z." in system and "- release: Ship a release." in system
    prompt_command = RECIPE.subcommands()["prompt"]
    raw = CliRunner().invoke(prompt_command, ["--workspace", str(workspace), "--raw"])
    assert raw.exit_code == 0, raw.stderr
    assert raw.stdout.rsplit("\n", 1)[0] == system.rsplit("\n", 1)[0]  # the date: its own clock

    first_run = bodies[:3]
    assert all(b["stream"] is True for b in first_run)
    assert first_run[1]["messages"][3]["content"].startswith("ok: skill release (")
    assert first_run[2]["messages"][5]["content"].endswith("     1\t1. tag\n     2\t2. push")
    for body in bodies:
        ContractChecker().check([WIRE.validate_python(m) for m in body["messages"]])


def test_a_resumed_session_and_a_new_one_both_send_the_prompt_built_now(
    tmp_path: Path,
) -> None:
    """What the text's troubleshooting says: --resume goes on with the history but never with
    the log's system prompt: the run builds its own, so an AGENTS.md edited since then reaches
    the resumed session too."""
    workspace = tmp_path / "ws"
    write_files(workspace, {"AGENTS.md": "Old rule.\n"})
    env = model_env("")
    systems: list[str] = []
    for extra in [[], ["--resume"], []]:
        with ChatServer([sse(*text_stream("ok"))]) as server:
            env["OPENAI_BASE_URL"] = server.base_url
            result = chapter10("--prompt", "Go.", "--workspace", str(workspace), *extra, env=env)
            (body,) = [r.body for r in server.completion_requests()]
        assert result.exit_code == 0, result.stderr
        systems.append(body["messages"][0]["content"])
        write_files(workspace, {"AGENTS.md": "New rule.\n"})
    first, resumed, new = systems
    assert "Old rule." in first
    assert "New rule." in resumed and "Old rule." not in resumed
    assert "New rule." in new and "Old rule." not in new


# --- the chapter's other commands ----------------------------------------------------------------


def test_the_dispatcher_runs_chapter_10_and_its_other_commands(
    demo_folder: Path, tmp_path: Path
) -> None:
    demo = tutorial("run", "--chapter", "10", "--demo")
    assert demo.exit_code == 0, demo.stderr
    assert demo.stdout.startswith(f"[scripted] Review of {PATCH} ({SKILL}, {EXTRA_FILE}):\n")
    sessions = tutorial("sessions", "--chapter", "10", "--workspace", str(demo_folder))
    assert sessions.exit_code == 0, sessions.stderr
    assert DEMO_PROMPT[:40] in sessions.stdout  # the demo's run was a session
    agents = tutorial("agents", "--chapter", "10", "--workspace", str(tmp_path))
    assert agents.exit_code == 0 and "explore\n  source: built in\n" in agents.stdout
    check = tutorial("permissions", "check", "--chapter", "10", "load_skill(deploy)")
    assert check.stdout.startswith("allow: load_skill(deploy)\n")
    shown = tutorial("prompt", "--chapter", "10", "--workspace", str(demo_folder))
    assert shown.exit_code == 0, shown.stderr
    assert "--- 4/6 skills ---\n" in shown.stdout and INDEX_LINE in shown.stdout


def test_permissions_check_knows_load_skill_as_a_read() -> None:
    check_command = RECIPE.subcommands()["permissions check"]
    checked = CliRunner().invoke(check_command, ["load_skill(deploy)"])
    assert checked.exit_code == 0, checked.stderr
    assert checked.stdout.startswith("allow: load_skill(deploy)\n")
    denied = CliRunner().invoke(
        check_command, ["load_skill(deploy)", "--deny", "load_skill(deploy)"]
    )
    assert denied.stdout.startswith("deny: load_skill(deploy)\n")

"""Chapter 6's command line: the demo and its two histories, --max-requests, and a parent
and a child over the real `openai` SDK to the local Chat Completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env, traced
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.tests.support import read_audit, tutorial
from chapters.ch06.demo import TASK, report, write_demo_files
from chapters.ch06.prompt import EXPLORE_PROMPT, SYSTEM_PROMPT
from chapters.ch06.tests.support import call, task, tool_names, write
from shared.scripted import response

pytestmark = pytest.mark.usefixtures("isolated")

demo_folder = demo_folder_fixture(write_demo_files)

# --- the demo ------------------------------------------------------------------------------


def test_the_demo_delegates_to_explore_and_answers_from_its_report(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "6", "--demo")
    assert result.exit_code == 0, result.stderr
    first_line = report().splitlines()[0]
    assert result.stdout == f"[scripted] From explore's report: {first_line}\n"
    err = result.stderr
    assert "agents: general, explore · max_requests: 100\n" in err
    header = f"子智能体 sub-agent explore: {TASK['description']}\n"
    assert err.index(header) < err.index("  │ [grep → ok]") < err.index("  │ [read_file → ok]")
    assert err.index("  │ [read_file → ok]") < err.index("\n[task → ok]\n")
    assert "[sub-agent explore: 3 model requests, 2 tool calls]" in err
    audited = [(a["tool"], a["decision"]) for a in read_audit(demo_folder / AUDIT_FILE)]
    assert audited == [("task", "allow"), ("grep", "allow"), ("read_file", "allow")]


def test_the_trace_shows_two_histories_and_the_parents_holds_no_read(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "6", "--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    documents = traced(result.stderr)
    requests = {title: body for title, body in documents if "request" in title}
    assert list(requests) == [
        "request 1",
        "explore · request 1",
        "explore · request 2",
        "explore · request 3",
        "request 2",
    ]
    parent = requests["request 2"]["messages"]
    assert [m["role"] for m in parent] == ["system", "user", "assistant", "tool"]
    assert parent[0]["content"] == SYSTEM_PROMPT
    assert parent[3]["content"].endswith("[sub-agent explore: 3 model requests, 2 tool calls]")
    after_prompt = json.dumps(parent[2:])
    assert "read_file" not in after_prompt and "grep" not in after_prompt
    assert "def apply_discount" not in json.dumps(parent)
    child = requests["explore · request 3"]["messages"]
    assert child[:2] == [
        {"role": "system", "content": EXPLORE_PROMPT},
        {"role": "user", "content": TASK["prompt"]},
    ]
    assert "def apply_discount" in json.dumps(child)
    assert tool_names(requests["explore · request 1"]) == ["read_file", "glob", "grep"]


def test_a_demo_with_task_denied_does_not_start_the_child(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "6", "--demo", "--deny", "task(explore)")
    assert result.exit_code == 0, result.stderr
    assert "[task → denied]" in result.stderr
    assert "子智能体" not in result.stderr
    assert result.stdout.startswith("[scripted] No report: denied: task(explore) is not allowed")


def test_max_requests_ends_the_whole_run_with_exit_1(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "6", "--demo", "--max-requests", "3")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "AgentLimitError: Agent exceeded max_requests=3: the agent and every agent it started"
    )
    assert "Raise --max-requests" in result.stderr
    assert result.stdout == ""
    assert "[task →" not in result.stderr  # the run ended inside the call


def test_max_requests_0_is_a_usage_error_and_help_shows_the_default() -> None:
    result = tutorial("run", "--chapter", "6", "--prompt", "hi", "--max-requests", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--max-requests': 0 is not in the range x>=1." in result.stderr
    shown = tutorial("run", "--chapter", "6", "--help")
    assert "--max-requests" in shown.stdout
    assert "[default: 100; x>=1]" in " ".join(shown.stdout.split())


def test_permissions_check_knows_task_and_its_key_is_the_agent(tmp_path: Path) -> None:
    check = ("permissions", "check", "--chapter", "6", "--workspace", str(tmp_path))
    planned = tutorial(*check, "task(general)", "--mode", "plan")
    assert planned.stdout.splitlines()[:2] == [
        "allow: task(general)",
        "  because: mode plan allows state calls",
    ]
    denied = tutorial(*check, "task(general)", "--deny", "task(general)")
    assert denied.stdout.startswith("deny: task(general)\n")


# --- over the real SDK ---------------------------------------------------------------------


def test_a_parent_and_a_child_over_the_wire(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    write(workspace / "greet.py", "def greet(name):\n    return f'Hello, {name}!'\n")
    replies = [
        (200, response(None, [task("call_1", "Where is greet defined?")])),  # the parent
        (200, response(None, [call("call_1", "grep", pattern="def greet")])),  # the child
        (200, response("greet.py, line 1")),  # the child answers
        (200, response("It is in greet.py.")),  # the parent answers
    ]
    with ChatServer(replies) as server:
        result = tutorial(
            "run", "--chapter", "6", "--prompt", "Where is greet?",
            "--workspace", str(workspace), env=model_env(server),
        )  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "It is in greet.py.\n"
    assert len(bodies) == 4
    assert [b["messages"][0]["content"] for b in bodies] == [
        SYSTEM_PROMPT,
        EXPLORE_PROMPT,
        EXPLORE_PROMPT,
        SYSTEM_PROMPT,
    ]
    assert bodies[1]["messages"] == [
        {"role": "system", "content": EXPLORE_PROMPT},
        {"role": "user", "content": "Where is greet defined?"},
    ]
    assert tool_names(bodies[1]) == ["read_file", "glob", "grep"]
    assert "task" in tool_names(bodies[0]) and "task" in tool_names(bodies[3])
    # The child's call id equals the parent's: two histories, no clash.
    assert bodies[2]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "ok: 1 matching lines\ngreet.py:1: def greet(name):",
    }
    assert [m["role"] for m in bodies[3]["messages"]] == ["system", "user", "assistant", "tool"]
    assert bodies[3]["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "greet.py, line 1\n\n[sub-agent explore: 2 model requests, 1 tool call]",
    }

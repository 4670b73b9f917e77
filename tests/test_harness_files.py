"""Every chapter with an audit log: a `.tutorial` folder that links out of the workspace gets no
file written through it, and since no decision can be audited, no call runs (fail closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch03.tests.support import link, tutorial
from shared.scripted import response, tool_call
from tutorial.catalog import CHAPTERS

AUDITED = [chapter.number for chapter in CHAPTERS if chapter.ready and chapter.number >= 3]
STREAMED_FROM = 7  # the chapter whose command line first streams, and has --no-stream

pytestmark = pytest.mark.usefixtures("isolated")


@pytest.mark.parametrize("number", AUDITED)
def test_a_tutorial_folder_linked_outside_gets_nothing_and_no_call_runs(
    number: int, tmp_path: Path
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    link(workspace / ".tutorial", outside)
    made = workspace / "made.txt"
    command = json.dumps({"command": f"echo made > {made.name}"})
    replies = [
        (200, response(None, [tool_call("call_1", "shell", command)])),
        (200, response("done")),
    ]
    args = ["run", "--chapter", str(number), "--prompt", "go", "--workspace", str(workspace)]
    args += ["--allow", "shell(echo:*)"]
    args += ["--no-stream"] if number >= STREAMED_FROM else []
    with ChatServer(replies) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}
        result = tutorial(*args, env=env)
        bodies = [request.body for request in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert list(outside.iterdir()) == []
    assert not made.exists()
    (answer,) = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert answer["content"] == (
        "denied: the decision could not be written to the audit log, so the call did not run."
    )
    assert ".tutorial leads outside" in result.stderr

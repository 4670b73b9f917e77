"""`--demo`: a three-step plan worked through, with one reminder from the harness.

The workspace is a new temporary folder with two small Python files, and
settings in accept-edits mode so that reads and the one write run without
asking. The scripted model plans three steps, then does three steps' worth of
work without updating the plan, so the harness reminds it (it says so when it
sees the reminder), and it finishes the plan. Only the model is scripted; the
tools, the policy and the reminder are the real ones.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch05.todo import TODO_TOOL
from shared.scripted import ScriptedModel, Step, response, scripted_text, tool_call

DEMO_PROMPT = "Write README.md for this folder with one line about each Python file."
DEMO_MODEL = "scripted-demo"
DEMO_FILES = {
    "greet.py": 'def greet(name):\n    return f"Hello, {name}!"\n',
    "shapes.py": "def area(width, height):\n    return width * height\n",
}
DEMO_SETTINGS = {"permissions": {"defaultMode": "accept-edits"}}
README = "# Demo\n\n- `greet.py`: `greet(name)` says hello.\n- `shapes.py`: `area(w, h)`.\n"
STEPS = ("List the Python files", "Read each file", "Write README.md")


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch05-demo-"))
    write_demo_files(folder)
    return folder


def write_demo_files(folder: Path) -> None:
    """The files, each a minute newer than the one before: glob lists newest first."""
    an_hour_ago = time.time() - 3600
    for minute, (name, text) in enumerate(DEMO_FILES.items()):
        (folder / name).write_text(text, encoding="utf-8")
        os.utime(folder / name, (an_hour_ago + 60 * minute, an_hour_ago + 60 * minute))
    settings = folder / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(DEMO_SETTINGS, indent=2) + "\n", encoding="utf-8")


def todos(*statuses: str) -> dict[str, Any]:
    """The whole list, as the model sends it, with one status per step."""
    items = [
        {"id": str(number), "content": step, "status": status}
        for number, (step, status) in enumerate(zip(STEPS, statuses, strict=True), start=1)
    ]
    return {"todos": items}


def plan(call_id: str, *statuses: str) -> dict[str, Any]:
    return tool_call(call_id, TODO_TOOL, json.dumps(todos(*statuses)))


def demo_model(pause: float = 0.0) -> ScriptedModel:
    """`pause` seconds per reply let a reader watch the plan under the spinner."""

    def reply(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
        return response(scripted_text(text) if text else None, calls, model=DEMO_MODEL)

    steps: list[Step] = [
        reply(plan("call_1", "in_progress", "pending", "pending"), text="Three steps; planning."),
        reply(tool_call("call_2", "glob", json.dumps({"pattern": "*.py"}))),
        reply(tool_call("call_3", "read_file", json.dumps({"path": "greet.py"}))),
        reply(tool_call("call_4", "read_file", json.dumps({"path": "shapes.py"}))),
        _after_reading,
        reply(
            tool_call("call_6", "write_file", json.dumps({"path": "README.md", "content": README}))
        ),
        reply(plan("call_7", "completed", "completed", "completed")),
        reply(text="README.md now has one line about greet.py and one about shapes.py."),
    ]
    return PacedModel(steps, name=DEMO_MODEL, pause=pause)


def _after_reading(request: Mapping[str, Any]) -> dict[str, Any]:
    """Steps 1 and 2 are done; the scripted model says whether the harness reminded it."""
    last = request["messages"][-1]
    reminded = last["role"] == "user" and "harness reminder" in last["content"]
    said = "The harness reminded me: " if reminded else ""
    return response(
        scripted_text(f"{said}steps 1 and 2 are done."),
        [plan("call_5", "completed", "completed", "in_progress")],
        model=DEMO_MODEL,
    )


class PacedModel(ScriptedModel):
    """A scripted model that takes `pause` seconds to answer, as a real one would."""

    def __init__(self, steps: list[Step], *, name: str, pause: float) -> None:
        super().__init__(steps, name=name)
        self.pause = pause

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.pause:
            time.sleep(self.pause)
        return super().complete(request)

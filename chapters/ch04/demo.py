"""`--demo`: a guard hook blocks a command, a formatter hook tidies a written file.

The workspace is a new temporary folder whose `.tutorial/settings.json` puts two
of this chapter's example hooks at the loop's seams and uses accept-edits mode,
so the write runs without asking and its PostToolUse hook can be seen. Only the
model is scripted; the hooks are real programs.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chapters.ch03.settings import PROJECT_SETTINGS
from shared.process import IS_WINDOWS
from shared.scripted import ScriptedModel, response, scripted_text, tool_call

EXAMPLES = Path(__file__).resolve().parent / "examples"
DEMO_NOTE = "notes.md"
DEMO_PROMPT = "Write notes.md, then clean up the build folder."
DEMO_MODEL = "scripted-demo"


def python_command(script: Path) -> str:
    """Run an example with this Python, quoted for the shell the hooks run in."""
    if IS_WINDOWS:
        return f'& "{sys.executable}" "{script}"'
    return shlex.join([sys.executable, str(script)])


def demo_settings() -> dict[str, Any]:
    return {
        "permissions": {"defaultMode": "accept-edits"},
        "hooks": {
            "PreToolUse": [
                {
                    "name": "guard.py",
                    "matcher": "shell",
                    "command": python_command(EXAMPLES / "guard.py"),
                }
            ],
            "PostToolUse": [
                {
                    "name": "strip_whitespace.py",
                    "matcher": "write_file|edit_file",
                    "command": python_command(EXAMPLES / "strip_whitespace.py"),
                }
            ],
        },
    }


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch04-demo-"))
    write_demo_settings(folder)
    return folder


def write_demo_settings(folder: Path) -> None:
    settings = folder / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(demo_settings(), indent=2) + "\n", encoding="utf-8")


def demo_model() -> ScriptedModel:
    write = {"path": DEMO_NOTE, "content": "# Notes   \n\nHooks run at the loop's seams.  \n"}
    calls = [
        tool_call("call_1", "write_file", json.dumps(write)),
        tool_call("call_2", "shell", json.dumps({"command": "rm -rf build"})),
    ]
    return ScriptedModel([response(None, calls, model=DEMO_MODEL), _report], name=DEMO_MODEL)


def _report(request: Mapping[str, Any]) -> dict[str, Any]:
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    quoted = "\n\n".join(f"```\n{result}\n```" for result in results)
    return response(scripted_text(f"The tools and hooks answered:\n\n{quoted}"), model=DEMO_MODEL)

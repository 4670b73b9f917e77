"""`--demo`: read a file, edit it with approval (the diff is shown), report the result.

Only the model is scripted. The workspace is a new temporary folder with one
small file, so the demo never touches your files; its path is printed.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shared.scripted import ScriptedModel, last_tool_result, response, scripted_text, tool_call

DEMO_FILE = "greet.py"
DEMO_SOURCE = 'def greet():\n    print("hello")\n\n\ngreet()\n'
DEMO_PROMPT = f'In {DEMO_FILE}, make greet() print "hello, world" instead of "hello".'
DEMO_MODEL = "scripted-demo"


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch02-demo-"))
    (folder / DEMO_FILE).write_text(DEMO_SOURCE, encoding="utf-8", newline="\n")
    return folder


def demo_model() -> ScriptedModel:
    read = tool_call("call_read_1", "read_file", json.dumps({"path": DEMO_FILE}))
    edit = tool_call(
        "call_edit_1",
        "edit_file",
        json.dumps(
            {
                "path": DEMO_FILE,
                "old_string": '    print("hello")',
                "new_string": '    print("hello, world")',
            }
        ),
    )
    return ScriptedModel(
        [
            response(None, [read], model=DEMO_MODEL),
            response(scripted_text("I will change the print line."), [edit], model=DEMO_MODEL),
            _report,
        ],
        name=DEMO_MODEL,
    )


def _report(request: Mapping[str, Any]) -> dict[str, Any]:
    text = scripted_text(f"The edit_file tool answered:\n\n```\n{last_tool_result(request)}\n```")
    return response(text, model=DEMO_MODEL)

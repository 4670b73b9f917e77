"""`--demo`: one allowed call, one denied call, one ask, decided by real rules.

The workspace is a new temporary folder whose `.tutorial/settings.json` allows
`echo` commands and denies `rm` commands; a third command matches no rule, so
the policy asks you. Only the model is scripted; the audit log is real.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chapters.ch03.settings import PROJECT_SETTINGS
from shared.process import IS_WINDOWS
from shared.scripted import ScriptedModel, response, scripted_text, tool_call

DEMO_SETTINGS = {"permissions": {"allow": ["shell(echo:*)"], "deny": ["shell(rm:*)"]}}
ASKED = "Write-Output 'asked first'" if IS_WINDOWS else "printf 'asked first\\n'"
DEMO_COMMANDS = ("echo allowed by a rule", "rm -rf build", ASKED)
DEMO_PROMPT = "Show me one allowed, one denied and one asked shell call."
DEMO_MODEL = "scripted-demo"


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch03-demo-"))
    settings = folder / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(DEMO_SETTINGS, indent=2) + "\n", encoding="utf-8")
    return folder


def demo_model() -> ScriptedModel:
    calls = [
        tool_call(f"call_{n}", "shell", json.dumps({"command": command}))
        for n, command in enumerate(DEMO_COMMANDS, start=1)
    ]
    return ScriptedModel([response(None, calls, model=DEMO_MODEL), _report], name=DEMO_MODEL)


def _report(request: Mapping[str, Any]) -> dict[str, Any]:
    results = [m["content"].splitlines()[0] for m in request["messages"] if m["role"] == "tool"]
    lines = "\n".join(f"- `{c}` → {r}" for c, r in zip(DEMO_COMMANDS, results, strict=True))
    return response(scripted_text(f"The policy decided:\n\n{lines}"), model=DEMO_MODEL)

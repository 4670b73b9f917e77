"""`--demo`: the chapter's two-round exchange, replayed by a scripted model.

Only the model is scripted. The approval prompt is the real one, the command
really runs, and the second turn quotes the real tool result, so the demo
shows the loop doing real work without a key or a network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from shared.process import IS_WINDOWS
from shared.scripted import ScriptedModel, last_tool_result, response, scripted_text, tool_call

DEMO_COMMAND = "Write-Output 42" if IS_WINDOWS else "echo 42"
DEMO_PROMPT = f"Run `{DEMO_COMMAND}` and tell me what it printed."
DEMO_MODEL = "scripted-demo"


def demo_model() -> ScriptedModel:
    """Turn 1 asks for the command (tool calls only, content null); turn 2 quotes the result."""
    call = tool_call("call_demo_1", "shell", json.dumps({"command": DEMO_COMMAND}))
    return ScriptedModel([response(None, [call], model=DEMO_MODEL), _quote_result], name=DEMO_MODEL)


def _quote_result(request: Mapping[str, Any]) -> dict[str, Any]:
    result = last_tool_result(request)
    text = scripted_text(f"The shell tool answered:\n\n```\n{result}\n```")
    return response(text, model=DEMO_MODEL)

"""A run that is killed in the middle: started as a real process by test_killed_run.py, and by
scripts/update_docs.py for the log that docs/ch09-memory.md shows.

    python -m chapters.ch09.tests.killed_run WORKSPACE

The scripted model asks for two calls in one reply: `emit` (which returns at
once) and `wait`, which marks that it started (`WAITING`, a file in the
workspace) and then blocks until the test kills the process. So the log ends
with the reply, emit's result and no result for wait: what SIGKILL in the
middle of step 4 leaves. If nobody kills it, it gives up after `LIFETIME`
seconds, so a failed test never leaves a process behind for long.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chapters.ch01.loop import run_agent
from chapters.ch08.tests.support import emit, emit_tool
from chapters.ch09.session_log import SessionLog
from shared.agent import AgentSpec
from shared.calls import CallPipeline
from shared.console import Console
from shared.scripted import ScriptedModel, response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

PROMPT = "Build it, then tell me."
WAITING = "waiting.flag"  # in the workspace: wait has started
LIFETIME = 60.0  # seconds


class WaitArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def wait_tool(root: Path) -> PydanticTool:
    def wait(args: WaitArgs) -> ToolResult:
        (root / WAITING).write_text("started", encoding="utf-8")
        threading.Event().wait(LIFETIME)  # never set: only the kill ends it
        return ToolResult.success("ok: nobody killed me")

    return PydanticTool(
        name="wait",
        description="Wait.",
        args_model=WaitArgs,
        side_effect=SideEffect.READ,
        run=wait,
    )


def main(argv: Sequence[str]) -> int:
    root = Path(argv[0])
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    model = ScriptedModel(
        [response(None, [emit("c1", 10), tool_call("c2", "wait", "{}")]), response("built")]
    )
    agent = AgentSpec(
        model=model,
        tools=ToolRegistry([emit_tool(), wait_tool(root)]),
        calls=CallPipeline(),
        console=console,
        system_prompt="You are a test agent.",
        features=[SessionLog.new(root, chapter=9)],
    )
    run_agent(PROMPT, agent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

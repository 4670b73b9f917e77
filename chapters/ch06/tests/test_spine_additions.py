"""What this chapter added to shared/, tested on its own: a nested console, an approval
request that names its agent, and a run-wide limit that crosses a tool call."""

from __future__ import annotations

import io
import json
import re

import pytest

from shared.approval import ApprovalRequest, TerminalApprover
from shared.console import Console
from shared.errors import AgentLimitError
from shared.messages import FunctionCall, ToolCall
from shared.tools import PydanticTool, SideEffect, Status, ToolRegistry, ToolResult

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(trace: bool = False) -> Console:
    return Console(out=io.StringIO(), err=io.StringIO(), fancy=False, trace=trace)


def err(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return ANSI.sub("", console.err.getvalue())


def test_a_nested_console_indents_its_lines_and_labels_its_spinner_and_trace() -> None:
    outer = plain(trace=True)
    inner = outer.nested("explore")
    outer.info("parent line")
    inner.info("two\nlines")
    inner.tool_result("grep", "ok", "ok: 1 match\na.py:1: x")
    with inner.waiting("等待模型 (turn 1)"):
        pass
    inner.request_sent("request 1", {"messages": [{"role": "user", "content": "hi"}]})
    inner.nested("deeper").info("third level")
    assert (
        err(outer)
        == (
            "parent line\n"
            "  │ two\n"
            "  │ lines\n"
            "  │ [grep → ok]\n"
            "  │ ok: 1 match\n"
            "  │ a.py:1: x\n"
            "  │ … explore · 等待模型 (turn 1)\n"
            "--- explore · request 1 ---\n"  # trace JSON is data: not indented, so it can be copied
            + json.dumps({"messages": [{"role": "user", "content": "hi"}]}, indent=2)
            + "\n"
            "  │   │ third level\n"
        )
    )
    assert inner.nested("deeper").label == "explore › deeper"
    assert isinstance(outer.out, io.StringIO) and outer.out.getvalue() == ""


def test_in_a_terminal_a_nested_panel_is_indented_too() -> None:
    outer = Console(out=io.StringIO(), err=io.StringIO(), fancy=True)
    outer.nested("explore").tool_result("grep", "ok", "ok: found")
    lines = [line for line in err(outer).splitlines() if line.strip()]
    assert lines[0].startswith("    ╭") and "grep → ok" in lines[0]


def test_the_approval_panel_names_an_agent_only_when_given_one() -> None:
    console = plain()
    approver = TerminalApprover(console, stdin=io.StringIO("y\n"), interactive=True)
    request = ApprovalRequest("shell", "execute: runs a program", {"command": "make"})
    assert approver.approve(request)
    approver.stdin = io.StringIO("y\n")
    assert approver.approve(ApprovalRequest("shell", "execute", {"command": "ls"}, agent="general"))
    text = err(console)
    assert text.startswith("工具 tool: shell\n")
    assert "[y/N] 智能体 agent: general\n工具 tool: shell\n" in text


def test_a_run_wide_limit_inside_a_tool_ends_the_run_and_any_other_error_is_a_result() -> None:
    from pydantic import BaseModel

    class Nothing(BaseModel):
        pass

    def tool(name: str, error: Exception) -> PydanticTool:
        def run(args: Nothing) -> ToolResult:
            raise error

        return PydanticTool(name, "d", Nothing, SideEffect.READ, run)

    tools = ToolRegistry(
        [tool("limit", AgentLimitError(5, "max_requests")), tool("bug", KeyError("x"))]
    )
    snapshot = tools.snapshot()

    def prepared(name: str):
        found = snapshot.prepare(
            ToolCall(id="c1", function=FunctionCall(name=name, arguments="{}"))
        )
        assert not isinstance(found, ToolResult)
        return found

    with pytest.raises(AgentLimitError, match="max_requests=5"):
        prepared("limit").invoke()
    result = prepared("bug").invoke()
    assert result.status is Status.ERROR and result.keyword == "tool_error"

"""The tools of chapter 2: five file tools behind one boundary, plus chapter 1's shell."""

from __future__ import annotations

from collections.abc import Callable

from chapters.ch01.shell_tool import make_shell_tool
from chapters.ch02.ledger import ReadLedger
from chapters.ch02.reading import make_read_file_tool
from chapters.ch02.searching import make_search_tools
from chapters.ch02.workspace import Workspace
from chapters.ch02.writing import make_write_tools
from shared.process import DEFAULT_OUTPUT_LIMIT, CommandRunner
from shared.tools import Tool, ToolRegistry


def make_tools(
    workspace: Workspace,
    *,
    runner: CommandRunner | None = None,
    hidden: Callable[[str], bool] | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> ToolRegistry:
    """All six tools for one run: the file tools, then chapter 1's shell."""
    shell = make_shell_tool(workspace.root, runner=runner, output_limit=output_limit)
    return ToolRegistry([*make_file_tools(workspace, hidden), shell])


def make_file_tools(
    workspace: Workspace, hidden: Callable[[str], bool] | None = None
) -> list[Tool]:
    """The five file tools of one agent; one ledger remembers its reads.

    `hidden` keeps glob and grep away from files (a policy's read deny rules, say).
    """
    ledger = ReadLedger()
    return [
        make_read_file_tool(workspace, ledger),
        *make_write_tools(workspace, ledger),
        *make_search_tools(workspace, hidden),
    ]

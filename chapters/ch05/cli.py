"""The command line of chapter 5: chapter 4's, plus the plan, its tool, and its view."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from chapters.ch01.cli import Session, run_session
from chapters.ch01.loop import DEFAULT_MAX_TURNS
from chapters.ch02.cli import choose_workspace
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.cli import load_chapter_policy, make_check_command, policy_options
from chapters.ch04.cli import hooked_gate
from chapters.ch04.hooks import Hooks
from chapters.ch04.settings import load_hooks
from chapters.ch05.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch05.loop import run_agent
from chapters.ch05.prompt import SYSTEM_PROMPT
from chapters.ch05.todo import REMIND_AFTER, TODO_TOOL, TodoPlan, make_todo_tool
from chapters.ch05.view import plan_view
from shared.cli import FriendlyCommand, common_options, require_prompt
from shared.completion import ModelClient
from shared.console import Console, is_terminal
from shared.tools import ToolRegistry

PROG_NAME = "python -m chapters.ch05"
DEMO_PAUSE = 0.8  # seconds per scripted reply in a terminal, to watch the plan under the spinner


@click.command(
    name="ch05",
    cls=FriendlyCommand,
    help="Chapter 5: the agent keeps a todo plan (todo_write); you watch it under the spinner.",
)
@common_options(default_max_turns=DEFAULT_MAX_TURNS)
@policy_options
@click.option(
    "--remind-after",
    type=click.IntRange(min=1),
    default=REMIND_AFTER,
    show_default=True,
    help="Remind the model of its open plan after this many replies without todo_write.",
)
def command(
    prompt: str | None,
    max_turns: int,
    trace: bool,
    demo: bool,
    workspace: Path | None,
    mode: str | None,
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    remind_after: int,
) -> None:
    require_prompt(prompt, demo)
    root = choose_workspace(demo, workspace, make_demo_workspace)
    policy = load_chapter_policy(root, mode, allow, deny, more_tools=[TODO_TOOL])
    hooks = Hooks(load_hooks(root, Path.home()))  # exit 2 if malformed

    def run(task: str, model: ModelClient, console: Console, max_turns: int) -> str:
        plan = TodoPlan(remind_after=remind_after)
        tools = chapter_tools(root, plan, hidden=policy.hides)
        console.show_below_spinner(lambda: plan_view(plan))
        return run_agent(
            task,
            model=model,
            tools=tools,
            handle_call=hooked_gate(root, policy, hooks, console),
            hooks=hooks,
            workspace=root,
            plan=plan,
            console=console,
            system_prompt=SYSTEM_PROMPT,
            max_turns=max_turns,
        )

    def paced_demo_model() -> ModelClient:
        return demo_model(pause=DEMO_PAUSE if is_terminal(sys.stderr) else 0.0)

    session = Session(
        chapter=5, folder=root.root, demo_model=paced_demo_model, demo_prompt=DEMO_PROMPT, run=run
    )
    run_session(session, prompt=prompt, max_turns=max_turns, trace=trace, demo=demo)


def chapter_tools(
    root: Workspace, plan: TodoPlan | None = None, hidden: Callable[[str], bool] | None = None
) -> ToolRegistry:
    """Chapter 2's tools, plus `todo_write` on `plan` (`check` only looks at their names)."""
    tools = make_tools(root, hidden=hidden)
    tools.register(make_todo_tool(plan or TodoPlan()))
    return tools


check_command = make_check_command(chapter_tools)


def main(argv: Sequence[str] | None = None) -> int:
    return command.main(argv, prog_name=PROG_NAME)

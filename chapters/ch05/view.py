"""The plan as the human sees it in a terminal: under the spinner, in colour.

Plain output needs nothing from here: each accepted `todo_write` result is the
rendered list, and the console prints tool results as plain lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chapters.ch05.todo import MARKS, Status, TodoPlan

if TYPE_CHECKING:
    from rich.console import RenderableType

STYLES = {
    Status.PENDING: "",
    Status.IN_PROGRESS: "bold yellow",
    Status.COMPLETED: "dim green",
}


def plan_view(plan: TodoPlan) -> RenderableType | None:
    """The current plan, one line per item; None while the plan is empty."""
    if not plan.items:
        return None
    from rich.text import Text

    text = Text()
    text.append(f"计划 {plan.summary()}", style="cyan")
    for item in plan.items:
        text.append(
            f"\n  {MARKS[item.status]} {item.id}. {item.content}", style=STYLES[item.status]
        )
    return text

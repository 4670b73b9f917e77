"""Chapter 5's part: a plan the model keeps (todo_write) and the harness watches.

plan  --remind-after; each agent's own `TodoPlan` (a child: a fresh one), the
      todo_write tool on it (chapters/ch05/todo.py), the reminder and the note on
      open items (chapters/ch05/reminder.py), the plan in the Stop event, and the
      plan under the spinner (chapters/ch05/view.py)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chapters.ch04.parts import STOP_FIELDS
from chapters.ch05.todo import REMIND_AFTER
from shared.cli import count_option
from shared.parts import Build, Part
from shared.recipe import FEATURES, TOOLS, VIEWS
from shared.slots import Key

if TYPE_CHECKING:
    from chapters.ch05.todo import TodoPlan

PLAN: Key[TodoPlan] = Key("this agent's plan")


class PlanPart(Part):
    """The todo plan: a tool, a reminder, a field of the Stop event, a view."""

    name = "plan"
    summary = "todo_write on this agent's plan; reminded when it goes stale; shown"
    options = (
        count_option(
            "--remind-after",
            REMIND_AFTER,
            "Remind the model of its open plan after this many replies without todo_write.",
        ),
    )

    def contribute(self, build: Build) -> None:
        from chapters.ch05.reminder import PlanReminder
        from chapters.ch05.todo import TodoPlan, make_todo_tool
        from chapters.ch05.view import plan_view

        remind_after = build.setup.option("remind_after")
        given = None if build.child else build.find(PLAN, None)
        plan = given or (TodoPlan() if build.child else TodoPlan(remind_after=remind_after))
        build.provide(PLAN, plan)
        build.add(TOOLS, make_todo_tool(plan), children=True)
        build.add(FEATURES, PlanReminder(plan))
        build.add(STOP_FIELDS, lambda: {"plan": plan.as_json()}, label="plan")
        build.add(VIEWS, lambda: plan_view(plan), label="plan_view")

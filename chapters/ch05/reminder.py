"""The plan in the loop: a reminder when it goes stale, and a note when it is left open.

`todo_write` itself is an ordinary tool, run in step 4 like the others. What
this feature adds happens at three of the loop's moments:

    before_request  open items, and no accepted todo_write for `plan.remind_after`
                    replies: a reminder enters the history (a user-role message
                    marked as coming from the harness)
    after_reply     the plan counts the reply (an accepted todo_write sets it back to 0)
    on_stop         the model stopped with items still open: the answer says which
and when the run ends out of turns, the console says where the plan stood.
"""

from __future__ import annotations

from dataclasses import dataclass

from chapters.ch05.todo import TodoPlan
from shared.agent import Feature, KeepGoing, Run
from shared.completion import ModelReply
from shared.errors import AgentLimitError
from shared.messages import UserMessage


@dataclass(frozen=True)
class PlanReminder(Feature):
    plan: TodoPlan

    def before_request(self, run: Run) -> None:
        if reminder := self.plan.reminder():  # open items, no todo_write for a while: remind
            run.agent.console.notice(
                f"harness: reminding the model of its plan ({self.plan.summary()})"
            )
            run.add(UserMessage(content=reminder))

    def after_reply(self, run: Run, reply: ModelReply) -> None:
        self.plan.count_reply()

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        left_open = self.plan.left_open()  # the answer says what was not finished
        return f"{answer.rstrip()}\n\n{left_open}" if left_open else answer

    def on_end(self, run: Run, error: BaseException | None) -> None:
        if isinstance(error, AgentLimitError) and (left_open := self.plan.left_open()):
            run.agent.console.notice(left_open)  # out of turns: say where the plan stood

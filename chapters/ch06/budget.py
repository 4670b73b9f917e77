"""One request budget for a whole family of agents: the parent and every child it starts.

Each agent has its own `max_turns`, but a parent that starts children could
multiply them: twenty turns, each starting a child of ten, is two hundred
requests. The budget is one `Feature` object listed in the parent's spec and
in every child's, so every model request of any of them counts against the
same number. When it is spent, the request about to be sent is not sent and
the whole run ends with `AgentLimitError` naming `max_requests` (exit 1): a
child cannot turn it into a failed tool call, because it is not the child's
limit (see chapters/ch06/task.py, and shared/tools.py `PreparedCall.invoke`).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.agent import Feature, Run
from shared.errors import AgentLimitError

MAX_REQUESTS = 100
LIMIT_NAME = "max_requests"


@dataclass
class RequestBudget(Feature):
    limit: int = MAX_REQUESTS
    used: int = 0  # model requests sent so far, by every agent that shares this budget

    def before_request(self, run: Run) -> None:
        if self.used >= self.limit:
            raise AgentLimitError(
                self.limit,
                LIMIT_NAME,
                fix=(
                    "the agent and every agent it started made that many model requests "
                    "together. Raise --max-requests, or give the agents it starts narrower tasks "
                    "(run with "
                    "--trace to see which agent made them)"
                ),
            )
        self.used += 1

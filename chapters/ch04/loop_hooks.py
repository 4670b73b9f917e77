"""UserPromptSubmit and Stop: hooks at two of the loop's own moments, as features.

UserPromptSubmit runs before the prompt enters the history: it may block the
prompt (nothing is sent) or add context right after it. Stop runs when the
model answers without tool calls: it may refuse the stop, and its reason goes
back to the model as a user message while the loop goes on. Refusals are
bounded twice: by max_turns, and by `max_refusals` in a row, so a Stop hook
cannot keep the agent running forever.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chapters.ch02.workspace import Workspace
from chapters.ch04.hooks import HookEvent, Hooks
from shared.agent import Feature, KeepGoing, Run
from shared.completion import ModelReply
from shared.decisions import Decision
from shared.errors import AgentError
from shared.messages import Message, UserMessage

MAX_STOP_REFUSALS = 3


class HookBlockedError(AgentError):
    """A UserPromptSubmit hook blocked the prompt; nothing was sent."""

    def cli_line(self) -> str:
        return (
            f"{super().cli_line()}. Nothing was sent: change the prompt, or the hook "
            "in .tutorial/settings.json"
        )


class StopRefusedError(AgentError):
    """A Stop hook kept refusing the stop; the bound ended the run."""

    def cli_line(self) -> str:
        return (
            f"{super().cli_line()}. Do what the hook asks for by hand, or fix the hook "
            "in .tutorial/settings.json"
        )


@dataclass(frozen=True)
class PromptHooks(Feature):
    hooks: Hooks
    workspace: Workspace

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        event = {
            "event": HookEvent.USER_PROMPT_SUBMIT,
            "workspace": str(self.workspace.root),
            "prompt": prompt,
        }
        said = self.hooks.run(HookEvent.USER_PROMPT_SUBMIT, event)
        if said.decision is Decision.DENY:
            raise HookBlockedError(f"a UserPromptSubmit hook blocked the prompt: {said.reason}")
        return (
            [UserMessage(content=f"[UserPromptSubmit hook] {said.context}")] if said.context else []
        )


@dataclass
class StopHooks(Feature):
    hooks: Hooks
    workspace: Workspace
    max_refusals: int = MAX_STOP_REFUSALS
    more: Callable[[], Mapping[str, Any]] = dict  # more fields for the event, from other features
    refusals: int = field(default=0, init=False)  # in a row

    def after_reply(self, run: Run, reply: ModelReply) -> None:
        if reply.message.tool_calls:  # the model went back to work: the count starts again
            self.refusals = 0

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        event = {
            "event": HookEvent.STOP,
            "workspace": str(self.workspace.root),
            "prompt": run.prompt,
            "answer": answer,
            **self.more(),
        }
        said = self.hooks.run(HookEvent.STOP, event)
        if said.decision is not Decision.DENY:
            return answer
        if self.refusals == self.max_refusals:
            raise StopRefusedError(
                f"the Stop hook refused {self.refusals + 1} times: {said.reason}"
            )
        self.refusals += 1
        run.agent.console.notice(f"Stop hook refused the stop: {said.reason}")
        more = f"\n{said.context}" if said.context else ""
        return KeepGoing(UserMessage(content=f"[Stop hook] Do not stop yet: {said.reason}{more}"))

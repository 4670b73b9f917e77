"""What one run of the loop needs, as one object; the run's state; and how features plug in.

`AgentSpec` is everything the loop is given: the model, the tools, the call
pipeline (how each tool call is prepared, authorized, executed and finished),
the system prompt, the features, the limits and the console. A chapter's
composition module builds one; the loop only reads it. `child()` makes the
spec of a second agent from the parent's parts: its own tools, prompt and
limits, but the same call pipeline, so the same policy and the same human.

A `Feature` is something a chapter adds to the loop. The loop has named
moments (seams) and calls every feature at each of them, in the order the
spec lists them:

    on_prompt       before the prompt enters the history (may refuse it, may add to it)
    on_message      each message as it enters the history
    before_request  before each model request (may add to the history, or
                    rewrite it with `Run.replace_history`)
    after_reply     after each reply entered the history
    on_stop         when the model answers without tool calls (may refuse the stop,
                    or add to the answer)
    on_end          when the run ends, answered or not

A feature overrides only the moments it needs; the others do nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shared.completion import ModelClient, ModelReply, check_finish_reason
from shared.contract import ContractChecker
from shared.messages import Message, SystemMessage, UserMessage
from shared.tools import ToolRegistry

if TYPE_CHECKING:
    from shared.calls import CallPipeline
    from shared.console import Console

DEFAULT_MAX_TURNS = 20
MAIN_AGENT = "main"  # the name of the agent a person started; the console does not label it


@dataclass(frozen=True)
class KeepGoing:
    """A feature's refusal of the stop: `message` goes into the history and the loop goes on."""

    message: Message


class Feature:
    """Something added to the loop at its named moments; every moment does nothing by default."""

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        """Raise an `AgentError` to refuse the prompt; return messages to add after it."""
        return ()

    def on_message(self, run: Run, message: Message) -> None:
        """A message has entered the history."""

    def before_request(self, run: Run) -> None:
        """The next request is about to be built from `run.history`: add to it with
        `run.add`, or put a shorter history in its place with `run.replace_history`."""

    def after_reply(self, run: Run, reply: ModelReply) -> None:
        """The model's reply is in the history; its tool calls have not run yet."""

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        """The model answered without tool calls: return the answer (perhaps with more
        added), or `KeepGoing` to send the model back to work."""
        return answer

    def on_end(self, run: Run, error: BaseException | None) -> None:
        """The run is over: `error` is None when it answered, else why it did not."""


ReplyCheck = Callable[["Run", ModelReply], ModelReply]


def stop_on_unfinished_reply(run: Run, reply: ModelReply) -> ModelReply:
    """The loop's default finish-reason step: a reply it cannot continue from ends the run."""
    check_finish_reason(reply)
    return reply


@dataclass(frozen=True)
class AgentSpec:
    """Everything one run needs. Built by a chapter's composition module, read by the loop."""

    model: ModelClient
    tools: ToolRegistry
    calls: CallPipeline
    console: Console
    system_prompt: str
    name: str = MAIN_AGENT  # how the console, the trace and an approval name this agent
    features: Sequence[Feature] = ()
    max_turns: int = DEFAULT_MAX_TURNS  # model requests, not tool calls
    check_reply: ReplyCheck = stop_on_unfinished_reply

    def child(
        self,
        *,
        name: str,
        tools: ToolRegistry,
        system_prompt: str,
        max_turns: int,
        features: Sequence[Feature] = (),
        console: Console | None = None,
    ) -> AgentSpec:
        """A second agent made of this one's parts.

        It keeps the model and the call pipeline (so the same policy, hooks and
        human judge its calls: it can never be allowed what this agent is not),
        and gets its own name, tools, prompt, limit and features.
        """
        return replace(
            self,
            name=name,
            tools=tools,
            system_prompt=system_prompt,
            max_turns=max_turns,
            features=tuple(features),
            console=console or self.console,
        )


@dataclass
class Run:
    """The state of one run: its spec, its history, and how far it got."""

    agent: AgentSpec
    prompt: str
    history: list[Message]
    turn: int = 0  # model requests made so far
    contract: ContractChecker = field(default_factory=ContractChecker)

    def add(self, message: Message) -> None:
        """The one way a message enters the history; every feature hears of it."""
        self.history.append(message)
        for feature in self.agent.features:
            feature.on_message(self, message)

    def replace_history(self, messages: Sequence[Message]) -> None:
        """Put `messages` in place of the whole history (a shorter one, say).

        The list is changed in place, so whoever passed it in sees what is sent.
        No message "enters" here, so `on_message` is not called: a feature that
        rewrites the history tells the others itself, if they need to know. The
        contract checker notices any message that is not the one it checked and
        reads the history again, so the next request is checked, and sent, as it
        now is.
        """
        self.history[:] = messages

    def start(self) -> None:
        """Step 1: the system prompt (for a new history), then the prompt, enter the history."""
        if not self.history:
            self.add(SystemMessage(content=self.agent.system_prompt))
        added: list[Message] = []
        for feature in self.agent.features:  # may raise: then nothing was sent
            added += feature.on_prompt(self, self.prompt)
        self.add(UserMessage(content=self.prompt))
        for message in added:
            self.add(message)

    def before_request(self) -> None:
        for feature in self.agent.features:
            feature.before_request(self)

    def after_reply(self, reply: ModelReply) -> None:
        for feature in self.agent.features:
            feature.after_reply(self, reply)

    def may_stop(self, answer: str) -> str | KeepGoing:
        """Ask every feature; the first refusal wins, and each may add to the answer."""
        for feature in self.agent.features:
            said = feature.on_stop(self, answer)
            if isinstance(said, KeepGoing):
                return said
            answer = said
        return answer

    @contextmanager
    def ending(self) -> Iterator[None]:
        """Tell every feature how the run ended: answered (None), or the error that ended it."""
        try:
            yield
        except BaseException as error:
            for feature in self.agent.features:
                feature.on_end(self, error)
            raise
        for feature in self.agent.features:
            feature.on_end(self, None)

"""Chapter 11's finish-reason step: a reply cut at the output limit is continued, not fatal.

`finish_reason: "length"` means the model hit its output limit mid-reply.
Chapter 1 ends the run there (shared/agent.py, `stop_on_unfinished_reply`);
`ContinueAfterLength` is the spec's `check_reply` instead, and tells apart
the two ways a reply can be cut:

    text, no tool calls   ask for the rest: the history so far, the partial
                          reply as an assistant message, then a user message
                          asking to continue exactly where it stopped; the
                          parts are joined into one reply, so the history keeps
                          one assistant message, never the pieces
    with tool calls       none of them runs, whatever its arguments look like
                          (complete-looking JSON may still be cut short): the
                          reply goes into the history as it came, and the call
                          pipeline (chapters/ch11/guarded_calls.py) answers each
                          call that its arguments were cut off and to send
                          smaller pieces

Both count against one bound, `max_continuations` (`--max-continuations`,
default 3): cut replies in a row, continuations included. One more is
`ContinuationsExhaustedError`, chapter 1's `OutputTruncatedError` with the
count. A reply that finishes normally starts the count again; any other finish
reason is handled as in chapter 1.

A reply with cut calls is only let through when the spec's call pipeline is
the one that answers them: otherwise they would run, so the run ends as in
chapter 1 (when a safety check cannot be made, the answer is no).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from chapters.ch11.per_run import PerRun
from chapters.ch11.summary import RecoveryLog
from shared.agent import Run, stop_on_unfinished_reply
from shared.completion import ModelReply, ask_model
from shared.errors import FinishReasonError, OutputTruncatedError
from shared.messages import AssistantMessage, ToolCall, UserMessage
from shared.tools import Status, ToolResult

DEFAULT_MAX_CONTINUATIONS = 3
CONTINUE_PROMPT = (
    "[harness] Your previous reply was cut off at the output token limit. Continue exactly "
    "where it stopped: do not repeat what you already wrote, do not start over, no preamble."
)
ANSWER_PROMPT = (  # the limit was reached before any text: thinking used it all
    "[harness] Your previous reply reached the output token limit before it said anything. "
    "Answer now, more briefly."
)
CUT_KEYWORD = "cut_off"
CONTINUATION = "continuation"  # the purpose a continuation request is traced and shown with


class ContinuationsExhaustedError(OutputTruncatedError):
    """Still cut at the output limit after every continuation the run allows."""

    def __init__(self, limit: int, *, calls: bool) -> None:
        if calls:
            said = (
                f"The model's reply was cut at the output token limit (finish_reason=length) "
                f"{limit + 1} times in a row, the last time in a tool call, which did not run. "
                "Ask for the work in smaller steps (a long file in parts)"
            )
        else:
            said = (
                f"Model output was still cut at the token limit (finish_reason=length) after "
                f"{limit} continuations. Ask for a shorter answer or for it in parts"
            )
        FinishReasonError.__init__(
            self,
            f"{said}, raise --max-continuations, or use a model with a larger output limit.",
            "length",
        )
        self.limit = limit


@dataclass
class _Cuts:
    in_a_row: int = 0  # replies cut at the limit in a row, continuations included
    calls: tuple[str, ...] = ()  # ids of the latest reply's calls, when it was cut


class ContinueAfterLength:
    """A `ReplyCheck`, and the record the call pipeline reads of which calls were cut."""

    def __init__(
        self, max_continuations: int = DEFAULT_MAX_CONTINUATIONS, log: RecoveryLog | None = None
    ) -> None:
        if max_continuations < 0:
            raise ValueError(f"max_continuations must be 0 or more, got {max_continuations}")
        self.max_continuations = max_continuations
        self.log = log
        self._runs: PerRun[_Cuts] = PerRun(_Cuts)

    def __call__(self, run: Run, reply: ModelReply) -> ModelReply:
        cuts = self._runs(run)
        parts = [reply]
        while _cut(parts[-1]) and not parts[-1].message.tool_calls:
            self._count(run, cuts, calls=False)
            run.agent.console.notice(
                "harness: the answer was cut at the output limit (finish_reason=length); "
                f"asking the model to continue ({cuts.in_a_row} of {self.max_continuations})"
            )
            if self.log is not None:
                self.log.continued()
            parts.append(self._continue(run, joined(parts)))
        whole = joined(parts)
        if not _cut(whole):
            cuts.in_a_row = 0
            return stop_on_unfinished_reply(run, whole)  # content_filter and the rest: chapter 1
        self._count(run, cuts, calls=True)
        if getattr(run.agent.calls, "cut_replies", None) is not self:
            raise OutputTruncatedError()  # nobody would stop the cut calls from running
        cuts.calls = tuple(call.id for call in whole.message.tool_calls)
        if self.log is not None:
            self.log.cut()
        calls = "its call" if len(cuts.calls) == 1 else f"its {len(cuts.calls)} calls"
        run.agent.console.notice(
            "harness: the reply was cut at the output limit (finish_reason=length) in a tool "
            f"call; {calls} will not run, and the model is told why"
        )
        return whole

    def cut_calls(self, run: Run, calls: Sequence[ToolCall]) -> bool:
        """Whether `calls` are the calls of this run's latest reply, which was cut; asked
        once by the call pipeline, which then answers them without running them."""
        cuts = self._runs(run)
        if not cuts.calls or cuts.calls != tuple(call.id for call in calls):
            return False
        cuts.calls = ()
        return True

    def _count(self, run: Run, cuts: _Cuts, *, calls: bool) -> None:
        cuts.in_a_row += 1
        if cuts.in_a_row > self.max_continuations:
            cuts.in_a_row = 0
            raise ContinuationsExhaustedError(self.max_continuations, calls=calls)

    def _continue(self, run: Run, partial: ModelReply) -> ModelReply:
        """One continuation request: the history, the partial reply, and the request to go on;
        traced as a "continuation request", so it is told apart from the loop's next step."""
        text = partial.message.content
        history = [*run.history]
        if text:
            history += [AssistantMessage(content=text), UserMessage(content=CONTINUE_PROMPT)]
        else:  # nothing to continue from: an empty assistant message is refused by some
            history.append(UserMessage(content=ANSWER_PROMPT))
        agent = run.agent
        snapshot = agent.tools.snapshot()
        return ask_model(
            agent.model, history, snapshot, agent.console, run.turn, purpose=CONTINUATION
        )


def joined(parts: Sequence[ModelReply]) -> ModelReply:
    """One reply from its parts: their text joined, the last part's calls, extras and finish."""
    last = parts[-1]
    if len(parts) == 1:
        return last
    text = "".join(part.message.content or "" for part in parts)
    message = AssistantMessage(
        content=text or None,
        tool_calls=last.message.tool_calls,
        reasoning_content=last.message.reasoning_content,
    )
    return replace(last, message=message)


def cut_result(call: ToolCall, *, last: bool) -> ToolResult:
    """What the model reads for a call of a reply that was cut at the output limit."""
    if last:
        detail = (
            "your reply reached the output token limit (finish_reason=length) while writing "
            f"this {call.function.name} call, so its arguments are cut off, even if they look "
            "complete; it did not run. Send it again in smaller pieces: write a long file in "
            "parts (the start first, then the rest with edits), or split the work over "
            "several calls."
        )
    else:
        detail = (
            "your reply reached the output token limit (finish_reason=length) after this "
            f"{call.function.name} call, while writing a later one; no call of a cut reply "
            "runs, so this one did not either. Send it again, with fewer or smaller calls "
            "per reply."
        )
    return ToolResult.failed(CUT_KEYWORD, detail, Status.INVALID)


def _cut(reply: ModelReply) -> bool:
    return reply.finish_reason == "length"

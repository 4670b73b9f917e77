"""Compaction: before a request that would fill the context, the old middle becomes a summary.

A feature at two of the loop's moments:

    after_reply     the response's `usage.prompt_tokens` is the measured size of the
                    request it answered (chapters/ch08/measure.py)
    before_request  the next request's size is that measurement plus an estimate of
                    what changed since; above `compact_at` × `window`, compact first
    on_end          a run the provider ended for a too-long request: one line saying so

Compacting, step by step:

    1. nothing is lost: every message is in the run's transcript already
       (chapters/ch08/transcript.py); if the transcript broke, do not compact
    2. ask for a summary: the same prefix as the next request (system prompt,
       tools, history), then a user message starting `[compact]`, sent with
       `tool_choice: "none"` through the model boundary like any request, so the
       trace shows it as a "compaction request". Its text is for the model, not
       for the person watching: a console that shows a reply as it streams is
       not shown the summary (`Unshown`); the spinner stays until it is done
    3. if that request is itself too long for the model, drop the oldest turn
       and ask again, at most `MAX_SUMMARY_RETRIES` times
    4. the history becomes: the system prompt, the user's prompt verbatim, one
       user message with the summary (marked as coming from the harness), and
       the most recent messages that fit in `keep_tokens`, starting at a clean
       boundary (chapters/ch08/boundary.py)

    before:  system │ prompt │ a1 t1 │ a2 t2 t2' │ user │ a3 t3 │ a4 t4 t4'
    after:   system │ prompt │ [summary of a1 … t3] │ a4 t4 t4'

If compaction fails, the run goes on uncompacted and the console says why; it
is tried again once the context has grown by another tenth of the window. A
summary is refused, and counts as a failure, when it was cut off at the output
limit (a small model can repeat one word until then) or when it is no shorter
than the messages it would replace: a compaction never makes the context bigger.
Every compaction is one console line, with the size before and after.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from chapters.ch08.boundary import head_end, kept_start, without_oldest_turn
from chapters.ch08.measure import ContextMeter, message_tokens, messages_tokens
from chapters.ch08.transcript import Transcript
from shared.agent import Feature, Run
from shared.completion import ExchangeObserver, ModelReply, ask_model
from shared.errors import ProviderError, ProviderErrorKind
from shared.messages import Message, UserMessage

DEFAULT_CONTEXT_WINDOW = 32_000  # tokens: `--context-window`
DEFAULT_COMPACT_AT = 0.8  # of the window: `--compact-at`
MAX_SUMMARY_RETRIES = 3  # each drops the oldest turn
COMPACT_MARK = "[compact]"
SUMMARY_MARK = "[harness: summary of the earlier conversation, not from the user]"
COMPACT_REQUEST = (
    f"{COMPACT_MARK} The conversation above is about to be shortened to fit the context "
    "window: everything between the user's first message and the most recent messages will "
    "be replaced by your summary. Write that summary now, so that you can carry on the task "
    "from it alone. Keep: the task as the user gave it; every constraint and preference the "
    "user stated; the decisions made and why; the files read, created or changed, with their "
    "paths; what is done; what is left to do, and the next step. Do not call any tool. "
    "Write only the summary."
)
# How providers word "the request is longer than the model's context" (OpenAI, Anthropic's
# compatible endpoint, vLLM, llama.cpp, Ollama, DeepSeek, Qwen...), lower case.
OVERFLOW_WORDS = (
    "context length",
    "context_length",
    "context window",
    "context size",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
    "exceeds the available context",
    "request too large",
)


def is_context_overflow(error: ProviderError) -> bool:
    """Whether the provider refused a request for being longer than the model's context."""
    if error.status == 413:
        return True
    if error.kind not in (
        ProviderErrorKind.BAD_REQUEST,
        ProviderErrorKind.SERVER,
        ProviderErrorKind.BAD_RESPONSE,
    ):
        return False
    said = f"{error} {error.body or ''}".lower()
    return any(words in said for words in OVERFLOW_WORDS)


@dataclass
class Compactor(Feature):
    """Measures the context after each reply; compacts it before a request that would not fit.

    List it after the features that add to or shorten the history before a
    request, so it measures what will really be sent.
    """

    transcript: Transcript
    window: int = DEFAULT_CONTEXT_WINDOW
    compact_at: float = DEFAULT_COMPACT_AT
    keep_tokens: int | None = None  # the recent messages kept; None: a quarter of the window
    meter: ContextMeter = field(default_factory=ContextMeter)
    compactions: int = 0  # in this run, for the console and the benchmark
    _failed_at: int | None = None  # the size at which compaction last failed

    def __post_init__(self) -> None:
        if self.window < 1 or not 0 < self.compact_at <= 1:
            raise ValueError(
                f"need window >= 1 and 0 < compact_at <= 1, got {self.window}, {self.compact_at}"
            )

    @property
    def threshold(self) -> int:
        """A request estimated above this many tokens is compacted first."""
        return int(self.window * self.compact_at)

    @property
    def budget(self) -> int:
        """Tokens of recent messages kept as they are."""
        return self.window // 4 if self.keep_tokens is None else self.keep_tokens

    def after_reply(self, run: Run, reply: ModelReply) -> None:
        self.meter.measure(_sent_before(run.history, reply), self._tools(run), reply.usage)

    def before_request(self, run: Run) -> None:
        size = self.meter.size(run.history, self._tools(run))
        if size <= self.threshold:
            self._failed_at = None  # it fits again: the next time it does not, try at once
            return
        if self._failed_at is not None and size < self._failed_at + self.window // 10:
            return  # it just failed at about this size: not again before the context grows
        self.compact(run, size)

    def on_end(self, run: Run, error: BaseException | None) -> None:
        """A request the provider found too long ends the run: say why, in one line."""
        if isinstance(error, ProviderError) and is_context_overflow(error):
            state = "compaction had failed" if self._failed_at is not None else "not yet full"
            run.agent.console.notice(
                "harness: the provider says the request is longer than the model's context; "
                f"this harness counted {self.meter.last:,} tokens of a {self.window:,}-token "
                f"window ({state}): set the window to the model's real context size"
            )

    def compact(self, run: Run, size: int) -> bool:
        """Replace the old middle of the history by a summary; False (and why, on the
        console) if the history stays as it is."""
        console = run.agent.console
        history = list(run.history)
        head = head_end(history)
        start = kept_start(history, self.budget, message_tokens, after=head)
        summary: str | None = None
        if start <= head:
            why = "there is nothing old enough to summarise"
        elif not self.transcript.intact:
            why = "the transcript could not be written, so compacting would lose messages"
        else:
            summary, why = self.summarise(run, history, head)
        if summary is None:
            self._failed_at = size
            console.notice(
                f"harness: could not compact the context ({why}); going on uncompacted at "
                f"{size:,} of {self.window:,} tokens"
            )
            return False

        message = UserMessage(
            content=(
                f"{SUMMARY_MARK} {start - head} earlier messages of this conversation were "
                f"replaced by this summary, which you wrote at turn {run.turn}; all of them "
                f"are in {self.transcript.shown}.\n\n{summary}"
            )
        )
        written, replaced = message_tokens(message), messages_tokens(history[head:start])
        if written >= replaced:
            self._failed_at = size
            console.notice(
                f"harness: could not compact the context (the summary, {written:,} tokens, is "
                f"no shorter than the {replaced:,} tokens it would replace); going on "
                f"uncompacted at {size:,} of {self.window:,} tokens"
            )
            return False
        self.transcript.record(run, message, note="summary")
        run.replace_history([*history[:head], message, *history[start:]])
        after = self.meter.size(run.history, self._tools(run))
        self.compactions += 1
        self._failed_at = after if after > self.threshold else None
        still = "; still above the threshold" if after > self.threshold else ""
        console.notice(
            f"harness: compacted the context before request {run.turn}: {size:,} → {after:,} "
            f"tokens of {self.window:,} ({start - head} messages summarised, "
            f"{len(history) - start} kept{still}); the whole history is in "
            f"{self.transcript.shown}"
        )
        return True

    def summarise(self, run: Run, history: Sequence[Message], head: int) -> tuple[str | None, str]:
        """The model's summary of `history`, or None and why there is none."""
        messages = list(history)
        tries = 0
        while True:
            tries += 1
            try:
                reply = ask_model(
                    run.agent.model,
                    [*messages, UserMessage(content=COMPACT_REQUEST)],
                    run.agent.tools.snapshot(),
                    Unshown(run.agent.console),
                    run.turn,
                    purpose="compaction",
                    fields={"tool_choice": "none"},
                )
            except ProviderError as error:
                if not is_context_overflow(error):
                    return None, f"the summary request failed: {error}"
                shorter = without_oldest_turn(messages, after=head)
                if tries > MAX_SUMMARY_RETRIES or shorter is None:
                    return None, f"the summary request was too long, {tries} times"
                run.agent.console.notice(
                    "harness: the summary request was too long for the model; "
                    "asking again without the oldest turn"
                )
                messages = shorter
                continue
            if reply.finish_reason == "length":
                return None, "the summary was cut off at the output limit"
            text = (reply.message.content or "").strip()
            return (text, "") if text else (None, "the model wrote no summary")

    def _tools(self, run: Run) -> int:
        return self.meter.tools(run.agent.tools.snapshot().schemas())


class Unshown:
    """The console as the summary request's observer: everything but the summary's text.

    A console that shows a reply while it streams would write the summary to
    the screen as if the agent were saying it. The trace (each chunk, with
    --trace), the spinner and a failed response still reach the console; the
    text and any reasoning do not. What the summary says is in the transcript.
    """

    def __init__(self, console: ExchangeObserver) -> None:
        self._console = console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)  # whatever else the console can be told

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None:
        self._console.request_sent(title, request)

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        with self._console.waiting(what):
            yield

    def response_received(self, title: str, body: Mapping[str, Any]) -> None:
        self._console.response_received(title, body)

    def response_failed(self, title: str, error: ProviderError) -> None:
        self._console.response_failed(title, error)

    def said_while_calling(self, text: str) -> None:
        """Not shown: a summary request allows no calls, and its text is not the agent's."""

    def chunk_received(self, number: int, chunk: Mapping[str, Any]) -> None:
        forward = getattr(self._console, "chunk_received", None)
        if forward is not None:
            forward(number, chunk)

    def text_arrived(self, text: str) -> None:
        """Not shown."""

    def reasoning_arrived(self, text: str) -> None:
        """Not shown."""


def _sent_before(history: Sequence[Message], reply: ModelReply) -> Sequence[Message]:
    """The messages the request carried: the history up to the reply it got."""
    for index in range(len(history) - 1, -1, -1):
        if history[index] is reply.message:
            return history[:index]
    return history

"""Chapter 11's console: chapter 7's, plus what a reader sees while a request recovers.

It is a `RecoveryObserver` (chapters/ch11/wrapper.py), so the model wrappers
tell it about each wait and the switch to the fallback:

    retry_wait    one line per wait (what failed, how long, why, which attempt
                  comes next); on a terminal, a countdown under the spinner
                  while the wait lasts
    switched      one line, once per run: which model failed and which one
                  answers from now on
    answered_by   with --trace: the model that answered this request

The countdown reads the same `Clock` the retry waits on, so a test can stop
time and read what it would show. A sub-agent's console (`nested`) is one too:
its waits are lines under its own label, counted down under the one spinner.

What chapter 7 streamed is the answer's text, so the answer is not printed on a
terminal twice. Two things change what was streamed: a retry drops the text of
the attempt that failed (the next attempt streams the reply again), and a
continuation request (chapters/ch11/continuation.py) streams the rest of the
same answer, so its text is added to what the cut part already showed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from chapters.ch07.stream_console import StreamingConsole
from chapters.ch11.continuation import CONTINUATION
from chapters.ch11.retry import Clock, SystemClock
from chapters.ch11.wrapper import RetryWait, Switch

if TYPE_CHECKING:
    from rich.console import Console as RichConsole
    from rich.console import ConsoleOptions, RenderResult


@dataclass
class _Waiting:
    """The wait going on now, if any: one for a console and every console nested in it."""

    wait: RetryWait | None = None


class RecoveryConsole(StreamingConsole):
    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        fancy: bool | None = None,
        trace: bool = False,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(out=out, err=err, fancy=fancy, trace=trace)
        self.clock = clock or SystemClock()
        self._waiting = _Waiting()
        self._continues = False  # the next exchange streams the rest of the last one
        self._kept: list[str] = []  # the text streamed before this exchange, of the same answer
        self.keep_in_view(lambda: Countdown(self))

    @property
    def retrying(self) -> RetryWait | None:
        """The wait going on now, if any."""
        return self._waiting.wait

    @retrying.setter
    def retrying(self, wait: RetryWait | None) -> None:
        self._waiting.wait = wait

    def nested(self, label: str) -> RecoveryConsole:
        """Chapter 7's nested console that is also a recovery observer, on the same clock."""
        shape = super().nested(label)
        inner = RecoveryConsole(
            out=self.out, err=self.err, fancy=self.fancy, trace=self.tracing, clock=self.clock
        )
        inner.label, inner.indent = shape.label, shape.indent
        inner._rich_err, inner._rich_out = self._rich_err, self._rich_out
        inner._in_view = self._in_view  # the outer countdown, the plan, the gauge
        inner.timer = self.timer
        inner._waiting = self._waiting  # so the outer countdown counts this one's waits
        return inner

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None:
        self._continues = title.startswith(f"{CONTINUATION} request")
        super().request_sent(title, request)

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        kept = self._streamed if self._continues else []
        self._continues = False
        with super().waiting(what):
            self._kept, self._streamed = list(kept), list(kept)
            yield

    @contextmanager
    def retry_wait(self, wait: RetryWait) -> Iterator[None]:
        self._end_line()  # a stream cut mid-line: the notice starts a line of its own
        self._streamed = list(self._kept)  # the failed attempt's text is not the answer's
        self.notice(self._labelled(wait.line()))
        self.retrying = wait
        try:
            yield
        finally:
            self.retrying = None

    def switched(self, switch: Switch) -> None:
        self._end_line()
        self.notice(self._labelled(switch.line()))

    def answered_by(self, model: str) -> None:
        if self.tracing:
            self.info(self._labelled(f"answered by: {model}"))


class Countdown:
    """What is drawn under the spinner: the time left before the next attempt, if waiting.

    Drawn again at every refresh of the spinner, so it counts down by itself.
    """

    def __init__(self, console: RecoveryConsole) -> None:
        self.console = console

    def text(self) -> str | None:
        wait = self.console.retrying
        if wait is None:
            return None
        left = wait.remaining(self.console.clock.now())
        return f"  ↻ attempt {wait.attempt} of {wait.attempts} in {left:.0f} s"

    def __rich_console__(self, console: RichConsole, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        text = self.text()
        if text is not None:
            yield Text(text, style="yellow")

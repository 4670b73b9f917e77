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
time and read what it would show.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from chapters.ch07.stream_console import StreamingConsole
from chapters.ch11.retry import Clock, SystemClock
from chapters.ch11.wrapper import RetryWait, Switch

if TYPE_CHECKING:
    from rich.console import Console as RichConsole
    from rich.console import ConsoleOptions, RenderResult


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
        self.retrying: RetryWait | None = None  # the wait going on now, if any
        self.keep_in_view(lambda: Countdown(self))

    @contextmanager
    def retry_wait(self, wait: RetryWait) -> Iterator[None]:
        self._end_line()  # a stream cut mid-line: the notice starts a line of its own
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

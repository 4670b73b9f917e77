"""What the composition tests share: chapter 11's agent (chapters/ch11/agent.py) on scripted
streams, in tmp_path/ws with its home folder in tmp_path/home, as the command line builds it
(chapters/testing.py), on a clock that never sleeps and with no jitter.

Each run has its own script, keyed by the prompt it starts with (chapter 7's
`AgentStreams`); a step may hold an exception where a chunk would be, raised when
the stream reaches it: a provider error, as the SDK client would raise it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import date, datetime
from typing import Any

from chapters.ch01.tests.harness import FakeRunner
from chapters.ch03.asking import Asker, ScriptedAsker
from chapters.ch07.scripted_stream import AgentStep, AgentStreams
from chapters.ch09.session_log import SessionLog
from chapters.ch11.recovery_console import RecoveryConsole
from chapters.ch11.tests.support import FakeClock
from chapters.testing import AgentRun
from shared.errors import ProviderError, ProviderErrorKind
from shared.process import CommandRunner

TODAY = date(2026, 5, 1)
STARTED = datetime(2026, 5, 1, 10, 0, 0)


def rate_limited(retry_after: float | None = 1.5) -> ProviderError:
    """A 429 as the SDK client reports it."""
    return ProviderError(
        "HTTP 429: slow down",
        429,
        kind=ProviderErrorKind.RATE_LIMITED,
        retry_after=retry_after,
        body='{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}',
    )


def too_long() -> ProviderError:
    """OpenAI's 400 for a request longer than the model's context."""
    return ProviderError(
        "HTTP 400: the provider refused the request",
        400,
        kind=ProviderErrorKind.BAD_REQUEST,
        body=(
            '{"error": {"message": "This model\'s maximum context length is 8192 tokens. '
            'However, your messages resulted in 9100 tokens.", '
            '"code": "context_length_exceeded"}}'
        ),
    )


@dataclass
class Agent11(AgentRun[AgentStreams]):
    """One run of chapter 11's agent in tmp_path/ws on scripted streams."""

    chapter = 11
    scripts: Mapping[str, Sequence[AgentStep]]
    fallback_scripts: Mapping[str, Sequence[AgentStep]] | None = None
    asker: Asker = field(default_factory=lambda: ScriptedAsker([]))
    clock: FakeClock = field(default_factory=FakeClock)
    terminal: bool = False  # whether the console's stdout and stderr are a terminal
    runner: CommandRunner | None = field(default_factory=FakeRunner)
    deny: Sequence[str] = ()
    fallback: AgentStreams | None = None
    _: KW_ONLY
    console: RecoveryConsole = field(init=False)  # on the rig's clock, a terminal or a pipe

    def __post_init__(self) -> None:
        out, err = (_Terminal(), _Terminal()) if self.terminal else (io.StringIO(), io.StringIO())
        self.console = RecoveryConsole(out=out, err=err, fancy=False, clock=self.clock)

    def make_model(self) -> AgentStreams:
        if self.fallback_scripts is not None:
            self.fallback = AgentStreams(self.fallback_scripts, name="second")
        return AgentStreams(self.scripts, name="primary")

    def given(self) -> dict[str, Any]:
        return {
            "asker": self.asker,
            "today": TODAY,
            "log": SessionLog.new(self.root, 11, STARTED),
            "fallbacks": [self.fallback] if self.fallback is not None else [],
            "clock": self.clock,
            "draw": lambda: 0.0,
            "runner": self.runner,
            "deny": tuple(self.deny),
        }

    def answered(self) -> str:
        """What the console wrote to stdout."""
        assert isinstance(self.console.out, io.StringIO)
        return self.console.out.getvalue()


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, as a person's screen does."""

    def isatty(self) -> bool:
        return True

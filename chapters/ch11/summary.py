"""What recovering cost a run, counted as it happens and said in one line at its end.

Every recovery in chapter 11 is bounded and shown as it happens; the end line
adds it up, so a run that "just worked" still says that it needed four
retries and a fallback to get there. One `RecoveryLog` is shared by every part
that recovers (the model wrappers, the reply check, the repeat guard) and by
every agent of the run, children included; it is safe to write from the
threads that run calls side by side.

    恢复 recovery: 3 retries (waited 7.5 s; Retry-After asked for 6.0 s) · 1 continuation ·
        fell back to deepseek-chat · 2 repeat warnings
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from chapters.ch11.wrapper import RetryWait, Switch
from shared.agent import MAIN_AGENT, Feature, Run


@dataclass
class RecoveryLog:
    retries: int = 0
    waited: float = 0.0  # seconds spent waiting before retries
    asked: float = 0.0  # of those, what providers asked for with Retry-After
    continuations: int = 0
    cut_replies: int = 0  # replies whose tool calls were cut at the output limit
    switch: Switch | None = None
    compactions: int = 0
    repeat_warnings: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def retried(self, wait: RetryWait) -> None:
        with self._lock:
            self.retries += 1
            self.waited += wait.seconds
            self.asked += wait.asked or 0.0

    def continued(self) -> None:
        with self._lock:
            self.continuations += 1

    def cut(self) -> None:
        with self._lock:
            self.cut_replies += 1

    def switched(self, switch: Switch) -> None:
        with self._lock:
            self.switch = switch

    def compacted(self) -> None:
        with self._lock:
            self.compactions += 1

    def warned_of_repeat(self) -> None:
        with self._lock:
            self.repeat_warnings += 1

    def line(self) -> str | None:
        """The end line's recovery part; None when nothing had to be recovered."""
        parts = []
        if self.retries:
            asked = f"; Retry-After asked for {self.asked:.1f} s" if self.asked else ""
            parts.append(f"{_count(self.retries, 'retry', 'retries')} "
                         f"(waited {self.waited:.1f} s{asked})")  # fmt: skip
        if self.continuations:
            parts.append(_count(self.continuations, "continuation"))
        if self.cut_replies:
            parts.append(_count(self.cut_replies, "reply", "replies") + " with cut tool calls")
        if self.switch is not None:
            parts.append(f"fell back to {self.switch.fallback}")
        if self.compactions:
            parts.append(_count(self.compactions, "compaction") + " for the context length")
        if self.repeat_warnings:
            parts.append(_count(self.repeat_warnings, "repeat warning"))
        return "恢复 recovery: " + " · ".join(parts) if parts else None


@dataclass(frozen=True)
class ReportAtEnd(Feature):
    """Prints the log's line on stderr when the run the person started ends, however it ends."""

    log: RecoveryLog

    def on_end(self, run: Run, error: BaseException | None) -> None:
        if run.agent.name == MAIN_AGENT and (line := self.log.line()):
            run.agent.console.info(line)


def _count(number: int, one: str, many: str = "") -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"

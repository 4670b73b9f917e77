"""Chapter 11: a model client that waits and sends again, the one owner of every retry.

`RetryingModel` wraps a model client (chapter 1's, or chapter 7's streaming
one). A failure the taxonomy calls transient (chapters/ch11/failures.py: a
rate limit, a server error, a dropped connection, a stream cut before its
finish, an error inside a 200 body that says so) is sent again after a wait:

    the provider asked (retry-after-ms, or retry-after in seconds or as an
        HTTP date): exactly that long; more than `max_wait` (60 s): no wait,
        the run ends saying how long it asked (`WaitTooLongError`)
    it did not ask, or asked for no wait one can make (negative, infinite,
        NaN, a date already past): exponential backoff, 1 s, 2 s, 4 s, 8 s ..., capped at
        `max_wait`, each shortened by up to a quarter at random (jitter), so
        that many clients failed by the same outage do not come back in step

at most `max_retries` times (`--max-retries`, default 4: five attempts), then
`RetriesExhaustedError`, which says how many retries and how long they took.
Anything else goes up at once, untouched: a 400, 401, 403 or 404 is one clear
line, not five. So does a refused connection before anything has answered at
that URL in this run: nothing listens there, a setting is wrong (the host, the
port), and waiting will not fix it; it is a `ConfigError` (exit 2) naming
that URL's setting (OPENAI_BASE_URL, or the fallback's OPENAI_FALLBACK_BASE_URL).
Once something has answered, a refused connection is a server restarting, and
is retried like any dropped connection.

The SDK's own retries stay off (shared/openai_client.py): two layers of
retries multiply (5 × 3 = 15 attempts) and the inner one ignores what this one
knows. Every wait is made through a `Clock`, so tests measure waits without
sleeping, and every failed attempt is reported to the exchange's observer:
`--trace` shows its status and body, a `RecoveryObserver` shows the wait with
a countdown and the attempt number.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from chapters.ch11.failures import Failure, WaitTooLongError, diagnose, error_in_body
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.wrapper import ModelWrapper, RecoveryObserver, RetryWait, send
from shared.completion import ExchangeObserver, ModelClient
from shared.errors import ConfigError, ProviderError, RefusedConnectionError

DEFAULT_MAX_RETRIES = 4
MAX_WAIT_SECONDS = 60.0
FIRST_BACKOFF_SECONDS = 1.0
JITTER = 0.25  # a backoff wait is shortened by up to this fraction, at random


class Clock(Protocol):
    """Where waits happen: the real clock in a run, a fake one in tests."""

    def now(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)  # Ctrl-C interrupts it at once, on every platform


class RetriesExhaustedError(ProviderError):
    """A transient failure that lasted through every retry; it carries the last error's data."""

    def __init__(self, error: ProviderError, retries: int, waited: float) -> None:
        how = (
            f"gave up after {retries} {'retry' if retries == 1 else 'retries'} "
            f"and {waited:.1f} s of waiting"
            if retries
            else "not retried: --max-retries is 0"
        )
        super().__init__(
            f"{error} ({how}; --max-retries sets how many)",
            error.status,
            kind=error.kind,
            retry_after=error.retry_after,
            body=error.body,
        )
        self.retries = retries
        self.last = error


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = DEFAULT_MAX_RETRIES
    max_wait: float = MAX_WAIT_SECONDS  # no single wait is longer
    first_backoff: float = FIRST_BACKOFF_SECONDS
    jitter: float = JITTER

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {self.max_retries}")
        if self.max_wait <= 0 or self.first_backoff < 0 or not 0 <= self.jitter <= 1:
            raise ValueError(f"not a usable retry policy: {self}")

    def backoff(self, retry: int, draw: float) -> float:
        """The wait before retry number `retry` (1 is the first) when the provider asked for
        none; `draw` is a random number in [0, 1)."""
        return min(self.max_wait, self.first_backoff * 2.0 ** (retry - 1)) * (
            1 - self.jitter * draw
        )

    def wait(self, retry: int, error: ProviderError, draw: float) -> float:
        """What the provider asked for, else the backoff; a request above the cap is an error."""
        asked = error.retry_after
        if asked is None or not 0 <= asked < math.inf:  # < 0, inf, NaN: not a wait
            return self.backoff(retry, draw)
        if asked > self.max_wait:
            raise WaitTooLongError(error, asked, self.max_wait)
        return asked


class RetryingModel(ModelWrapper):
    """`inner`, with transient failures sent again after a bounded wait.

    `retry_overloaded=False` hands an "overloaded" answer up at once instead of
    retrying it: a fallback model above this one takes the request sooner.
    """

    def __init__(
        self,
        inner: ModelClient,
        *,
        policy: RetryPolicy | None = None,
        clock: Clock | None = None,
        draw: Callable[[], float] = random.random,
        log: RecoveryLog | None = None,
        retry_overloaded: bool = True,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self.clock = clock or SystemClock()
        self.draw = draw
        self.log = log
        self.retry_overloaded = retry_overloaded
        self.reached = False  # whether anything has answered at the URL (a body, a status)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        attempts = self.policy.max_retries + 1
        waited = 0.0
        for attempt in range(1, attempts + 1):
            try:
                body = send(self.inner, request, observer)
                self.reached = True
                failed = error_in_body(body)  # a 200 may still carry an error
                if failed is None:
                    return body
                raise failed
            except ProviderError as error:
                self._unreachable(error)  # a wrong URL: no retry
                failure = diagnose(error)
                if not self._retries(failure):
                    raise
                if attempt == attempts:
                    raise RetriesExhaustedError(error, attempt - 1, waited) from error
                seconds = self.policy.wait(attempt, error, self.draw())  # may end the run
                if observer is not None:
                    observer.response_failed(f"attempt {attempt} of {attempts}", error)
                wait = RetryWait(
                    model=self.label,
                    attempt=attempt + 1,
                    attempts=attempts,
                    seconds=seconds,
                    asked=error.retry_after,
                    failure=failure,
                    status=error.status,
                    started=self.clock.now(),
                )
                self._wait(wait, observer)
                waited += seconds
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _unreachable(self, error: ProviderError) -> None:
        """Raise `ConfigError` for a refused connection when nothing has answered yet."""
        self.reached = self.reached or error.status is not None
        if isinstance(error, RefusedConnectionError) and not self.reached:
            raise ConfigError(
                f"{error} (not retried: nothing has answered at that URL in this run)"
            ) from error

    def _retries(self, failure: Failure) -> bool:
        if failure is Failure.OVERLOADED:
            return self.retry_overloaded
        return failure.retried

    def _wait(self, wait: RetryWait, observer: ExchangeObserver | None) -> None:
        if self.log is not None:
            self.log.retried(wait)
        if isinstance(observer, RecoveryObserver):
            with observer.retry_wait(wait):
                self.clock.sleep(wait.seconds)
        else:
            self.clock.sleep(wait.seconds)

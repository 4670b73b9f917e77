"""What chapter 11's model wrappers share: passing a request on, and who hears about recovery.

Retry, fallback and compaction each wrap a model client and are model clients
themselves, so the loop and `ask_model` see one model as before:

    CompactOnOverflow(FallbackModel(RetryingModel(primary), RetryingModel(fallback)))

A wrapper is always a `ReportingModelClient` (shared/completion.py): it is
handed the exchange's observer, passes it on to a client that streams (chapter
7), and tells it what it did. An observer that is a `RecoveryObserver` (a
console, say) also hears each wait before a retry and a switch to the
fallback; any other observer hears only the failed attempts, through the
ordinary `response_failed`, which is what `--trace` shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from shared.completion import ExchangeObserver, ModelClient, ReportingModelClient, client_fields

if TYPE_CHECKING:
    from chapters.ch11.failures import Failure


@dataclass(frozen=True)
class RetryWait:
    """One wait before a retry, as a console shows it and a countdown counts it down."""

    model: str  # the label of the model that failed
    attempt: int  # the attempt the wait is for: 2 is the first retry
    attempts: int  # how many attempts there are at most
    seconds: float  # how long the wait is
    asked: float | None  # what the provider asked for (Retry-After), if it did
    failure: Failure
    status: int | None
    started: float  # the clock's time when the wait began

    def remaining(self, now: float) -> float:
        return max(0.0, self.started + self.seconds - now)

    def line(self) -> str:
        """The console line: what failed, how long the wait is and why, which attempt is next."""
        what = f"HTTP {self.status} ({self.failure.shown})" if self.status else self.failure.shown
        why = "as the provider asked (Retry-After)" if self.asked is not None else "(backoff)"
        return (
            f"重试 retry: {what} from {self.model}; waiting {self.seconds:.1f} s {why}, "
            f"then attempt {self.attempt} of {self.attempts}"
        )


@dataclass(frozen=True)
class Switch:
    """The run moved from its model to the fallback, for the rest of the run."""

    primary: str
    fallback: str
    reason: str  # one line: what the primary said

    def line(self) -> str:
        return (
            f"回退 fallback: {self.primary} failed, {self.reason}; "
            f"the rest of this run uses {self.fallback}"
        )


@runtime_checkable
class RecoveryObserver(ExchangeObserver, Protocol):
    """An exchange observer that also hears how a request recovered from a failure."""

    def retry_wait(self, wait: RetryWait) -> AbstractContextManager[None]:
        """Around the wait before a retry (a countdown under the spinner, say)."""
        ...

    def switched(self, switch: Switch) -> None:
        """Said once per run: from now on the fallback answers."""
        ...

    def answered_by(self, model: str) -> None:
        """Which model answered this request (for `--trace`, when there is a choice)."""
        ...


def send(
    model: ModelClient, request: Mapping[str, Any], observer: ExchangeObserver | None
) -> Mapping[str, Any]:
    """One request to `model`, reporting to `observer` when the model can."""
    if observer is not None and isinstance(model, ReportingModelClient):
        return model.complete_reporting(request, observer)
    return model.complete(request)


def fields_of(model: ModelClient) -> Mapping[str, Any]:
    """The fields a client adds to every request (`max_tokens`, `stream: true`), if any."""
    return client_fields(model)


class ModelWrapper:
    """A model client around another, named as the model it sends to now.

    The name, label and request fields are read from `inner` each time, so a
    wrapper around a `FallbackModel` names the fallback once it answers.
    """

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def label(self) -> str:
        return self.inner.label

    @property
    def request_fields(self) -> Mapping[str, Any]:
        return fields_of(self.inner)

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.complete_reporting(request, None)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        return send(self.inner, request, observer)

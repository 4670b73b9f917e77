"""Chapter 11: a request the provider found too long is compacted and sent once more.

A 400 that says the context is too long is the one 400 worth another try,
and only after the request was made shorter: sent again as it was, it fails
again. `CompactOnOverflow` wraps the model (outside the fallback, so the
shorter request is adapted to whichever model answers) and owns that one
retry:

    too long → `shorten(request)` → a shorter request, sent once → its answer
                                  → None (nothing to compact): the run ends
    too long again after compacting: the run ends (`ContextTooLongError`)

Compacting may itself ask the model (chapter 8 asks it for a summary, through
this same model): a request that is too long while compacting is not
compacted again, it goes to the compaction as it is, which decides.

How a history is made shorter is chapter 8's business; a model client does
not even know which run a request belongs to. `compacting(current, compact)`
joins the two: `CurrentRun` (a feature) remembers, per thread, the run that
is about to send a request, `compact(run)` shortens that run's history, and
the request is built again from it, as the loop would have built it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from chapters.ch11.failures import Failure, diagnose
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.wrapper import ModelWrapper, send
from shared.agent import Feature, Run
from shared.completion import ExchangeObserver, ModelClient
from shared.contract import ContractChecker
from shared.errors import ProviderError
from shared.messages import Message

# Given the request a provider found too long: a shorter one to send once more, or None.
Shorten = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]


class ContextTooLongError(ProviderError):
    """The request is longer than the model's context, and compacting did not fix it."""

    def __init__(self, error: ProviderError, *, compacted: bool) -> None:
        why = (
            "still too long after compacting the history once"
            if compacted
            else "and it could not be compacted"
        )
        super().__init__(
            f"{error} ({why}: start a new session, ask for less at a time, "
            "or use a model with a longer context)",
            error.status,
            kind=error.kind,
            body=error.body,
        )


class CompactOnOverflow(ModelWrapper):
    def __init__(
        self, inner: ModelClient, shorten: Shorten, *, log: RecoveryLog | None = None
    ) -> None:
        super().__init__(inner)
        self.shorten = shorten
        self.log = log
        self._compacting: ContextVar[bool] = ContextVar("compacting", default=False)

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        try:
            return send(self.inner, request, observer)
        except ProviderError as error:
            if diagnose(error) is not Failure.CONTEXT_TOO_LONG or self._compacting.get():
                raise  # a request made while compacting: the compaction handles it
            token = self._compacting.set(True)
            try:
                shorter = self.shorten(request)
            finally:
                self._compacting.reset(token)
            if shorter is None:
                raise ContextTooLongError(error, compacted=False) from error
            if self.log is not None:
                self.log.compacted()
            if observer is not None:
                observer.response_failed("context too long; compacting once", error)
                observer.request_sent("request after compacting", shorter)
        try:
            return send(self.inner, shorter, observer)
        except ProviderError as again:
            if diagnose(again) is Failure.CONTEXT_TOO_LONG:
                raise ContextTooLongError(again, compacted=True) from again
            raise


class CurrentRun(Feature):
    """Which run is about to send a request, on this thread (agents may run side by side)."""

    def __init__(self) -> None:
        self._run: ContextVar[Run | None] = ContextVar("current_run", default=None)

    def before_request(self, run: Run) -> None:
        self._run.set(run)

    @property
    def run(self) -> Run | None:
        return self._run.get()


def compacting(current: CurrentRun, compact: Callable[[Run], bool]) -> Shorten:
    """A `Shorten` that compacts the history of the run that sent the request.

    `compact(run)` shortens `run.history` in place (chapter 8) and says whether
    it could; the shorter request is the old one with its messages built again
    from the history, checked against the message contract as every request is.
    Only a request that is the run's history as it stands is compacted: one
    with more in it (chapter 8's own summary request, a continuation) was sent
    by someone who handles a refusal themselves.
    """

    def shorten(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        run = current.run
        if run is None or request.get("messages") != _sent(run.history):
            return None  # not the run's own next request (a summary, say): its sender decides
        if not compact(run):
            return None
        return {**request, "messages": _sent(run.history)}

    return shorten


def _sent(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages of a request built from `history`, as the loop builds them."""
    return ContractChecker().check(history).messages

"""Chapter 11's model: how its three wrappers nest around the model the command line built.

    CompactOnOverflow(                    a 400 "context too long": compact, send once more
        FallbackModel(                    the primary cannot serve: the fallback, for good
            RetryingModel(primary),       transient failures: wait, send again (bounded)
            RetryingModel(fallback)))     the same rules for the fallback's requests

Each failure has one owner (chapters/ch11/failures.py): retries sit closest
to each model, so the fallback is asked only once the primary's retries are
spent; compaction sits outside, so the shorter request is adapted to whichever
model answers. Without a fallback, an "overloaded" answer is retried like any
server error; with one, it goes to the fallback at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from chapters.ch11.fallback import FallbackModel
from chapters.ch11.overflow import CompactOnOverflow, Shorten
from chapters.ch11.retry import Clock, RetryingModel, RetryPolicy
from chapters.ch11.summary import RecoveryLog
from shared.completion import ModelClient


def recovering_model(
    primary: ModelClient,
    *,
    fallback: ModelClient | None = None,
    shorten: Shorten | None = None,
    policy: RetryPolicy | None = None,
    clock: Clock | None = None,
    draw: Callable[[], float] = random.random,
    log: RecoveryLog | None = None,
) -> ModelClient:
    """`primary` (and `fallback`, if any) wrapped for recovery, in the order above."""

    def retrying(model: ModelClient, *, retry_overloaded: bool) -> RetryingModel:
        return RetryingModel(
            model, policy=policy, clock=clock, draw=draw, log=log, retry_overloaded=retry_overloaded
        )

    model: ModelClient = retrying(primary, retry_overloaded=fallback is None)
    if fallback is not None:  # the fallback has nobody to hand "overloaded" to: it retries
        model = FallbackModel(model, retrying(fallback, retry_overloaded=True), log=log)
    if shorten is not None:
        model = CompactOnOverflow(model, shorten, log=log)
    return model

"""Chapter 11: a second model for when the first cannot serve, once, for the rest of the run.

`FallbackModel(primary, fallback)` sends every request to the primary until
the primary fails in a way another model can help with:

    it failed after its retries (`RetriesExhaustedError`), or the provider
        asked for a wait above the cap
    it answered that the model does not exist, is overloaded, or that the
        quota is used up: no retry would help, so there is none

Then the same request goes to the fallback, and so does every later request
of the run: the console says so once, and `--trace` names the model that
answered each request. Fallback is not retry: it happens once, and the
fallback's requests follow the same retry rules (it is wrapped in its own
`RetryingModel`); when the fallback fails too, the run ends with both reasons.
A 400, 401 or 403 is not a reason to switch: the request or the key is wrong,
and another model would only hide it.

What one provider left in the history for itself is not sent to another:
DeepSeek's `reasoning_content` beside tool calls, Gemini's `extra_content` on
a call (its thought signature). The fallback gets them only for the messages
it wrote; the history itself is not changed, only the request sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from typing import Any

from chapters.ch11.failures import diagnose, summary
from chapters.ch11.retry import RetriesExhaustedError
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.wrapper import ModelWrapper, RecoveryObserver, Switch, fields_of, send
from shared.completion import ExchangeObserver, ModelClient
from shared.errors import ProviderError

PROVIDER_EXTRAS = ("reasoning_content",)  # on an assistant message
CALL_EXTRAS = ("extra_content",)  # on a tool call


class FallbackFailedError(ProviderError):
    """The fallback failed too; the message says why each of the two models failed."""

    def __init__(self, error: ProviderError, switch: Switch) -> None:
        super().__init__(
            f"{error} (this was the fallback model {switch.fallback}; the first model, "
            f"{switch.primary}, had failed: {switch.reason})",
            error.status,
            kind=error.kind,
            retry_after=error.retry_after,
            body=error.body,
        )


class FallbackModel(ModelWrapper):
    def __init__(
        self, primary: ModelClient, fallback: ModelClient, *, log: RecoveryLog | None = None
    ) -> None:
        super().__init__(primary)
        self.primary = primary
        self.fallback = fallback
        self.log = log
        self.switch: Switch | None = None  # set once, when the run moves to the fallback
        self._lock = threading.Lock()  # agents running side by side may fail at once
        self._theirs: set[str] = set()  # digests of the extras the fallback itself sent

    def complete_reporting(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        if self.switch is None:
            try:
                body = send(self.primary, request, observer)
            except ProviderError as error:
                if not self.falls_back(error):
                    raise
                self._switch_over(error, observer)
            else:
                _tell_answered(observer, self.primary.label)
                return body
        return self._on_fallback(request, observer)

    @staticmethod
    def falls_back(error: ProviderError) -> bool:
        """Whether the fallback may take a request the primary failed with `error`."""
        return isinstance(error, RetriesExhaustedError) or diagnose(error).falls_back

    def adapted(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The request as the fallback gets it: its model name and fields, and the
        primary's provider extras left out of the messages."""
        own = fields_of(self.fallback)
        adapted = {k: v for k, v in request.items() if k not in fields_of(self.primary)}
        adapted.update(own)
        adapted["model"] = self.fallback.name
        adapted["messages"] = [self._without_foreign_extras(m) for m in request["messages"]]
        return adapted

    def _switch_over(self, error: ProviderError, observer: ExchangeObserver | None) -> None:
        with self._lock:
            if self.switch is not None:  # another agent of the run switched meanwhile
                return
            switch = Switch(self.primary.label, self.fallback.label, summary(error))
            self.switch = switch
            self.inner = self.fallback  # from now on the name, label and fields are its
        if self.log is not None:
            self.log.switched(switch)
        if observer is not None:
            observer.response_failed(f"{switch.primary}, switching to the fallback", error)
        if isinstance(observer, RecoveryObserver):
            observer.switched(switch)

    def _on_fallback(
        self, request: Mapping[str, Any], observer: ExchangeObserver | None
    ) -> Mapping[str, Any]:
        assert self.switch is not None
        adapted = self.adapted(request)
        if observer is not None and adapted != request:  # the trace shows what is really sent
            observer.request_sent(f"request as sent to {self.fallback.label}", adapted)
        try:
            body = send(self.fallback, adapted, observer)
        except ProviderError as error:
            raise FallbackFailedError(error, self.switch) from error
        self._remember_extras(body)
        _tell_answered(observer, self.fallback.label)
        return body

    def _without_foreign_extras(self, message: Mapping[str, Any]) -> Mapping[str, Any]:
        """The wire message, with any extra the fallback did not write left out (a copy:
        the history's wire dicts are shared and never changed)."""
        if message.get("role") != "assistant":
            return message
        kept = {
            k: v
            for k, v in message.items()
            if k not in PROVIDER_EXTRAS or _digest(v) in self._theirs
        }
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            kept["tool_calls"] = [
                {
                    k: v
                    for k, v in call.items()
                    if k not in CALL_EXTRAS or _digest(v) in self._theirs
                }
                for call in calls
            ]
        return kept if kept != message else message

    def _remember_extras(self, body: Mapping[str, Any]) -> None:
        choices = body.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices else None
        if not isinstance(message, Mapping):
            return
        found = [message[k] for k in PROVIDER_EXTRAS if message.get(k)]
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                found += [call[k] for k in CALL_EXTRAS if call.get(k)]
        with self._lock:
            self._theirs.update(_digest(value) for value in found)


def _tell_answered(observer: ExchangeObserver | None, label: str) -> None:
    if isinstance(observer, RecoveryObserver):
        observer.answered_by(label)


def _digest(value: object) -> str:
    """A short fingerprint of an extra's value, as the history sends it back."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

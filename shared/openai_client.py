"""The real model: any OpenAI-compatible Chat Completions endpoint, through the `openai` SDK.

`openai` is imported only when a client is built, so `--help`, `--demo` and a
config error never pay for it. The SDK's own retries are off: this chapter shows
every failure as it is, and chapter 11 adds retry with Retry-After on purpose.

Every SDK exception becomes one `ProviderError` line that names the HTTP status
and the fix; the raw response body is returned untouched for `--trace`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from shared.config import EXAMPLE_BASE_URL, Settings
from shared.errors import ProviderError, one_line

if TYPE_CHECKING:
    from openai import OpenAI

REQUEST_TIMEOUT_SECONDS = 600.0  # small local models on a CPU can take minutes per turn


class OpenAIChatModel:
    def __init__(self, settings: Settings, *, timeout: float = REQUEST_TIMEOUT_SECONDS) -> None:
        self.settings = settings
        self.name = settings.model
        self.label = f"{settings.model} @ {settings.base_url}"
        self.timeout = timeout
        self._client: OpenAI | None = None

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        import openai

        client = self._client or self._connect()
        try:
            raw = client.chat.completions.with_raw_response.create(**request)
            text = raw.http_response.text
        except openai.APIStatusError as error:
            raise ProviderError(
                _status_message(error.status_code, error, self.settings), error.status_code
            ) from None
        except openai.APITimeoutError:
            raise ProviderError(
                f"no answer from {self.settings.base_url} within {self.timeout:g} s; "
                "the server may be overloaded or the model too slow"
            ) from None
        except openai.APIConnectionError as error:
            raise ProviderError(
                f"cannot connect to {self.settings.base_url} ({_root_cause(error)}). "
                "Check OPENAI_BASE_URL (host, port, http or https) and that the server is running"
            ) from None
        try:
            body: Mapping[str, Any] = json.loads(text)
        except json.JSONDecodeError:
            raise ProviderError(
                f"the provider answered HTTP 200 with a body that is not JSON: {text[:200]!r}. "
                f"Check OPENAI_BASE_URL: it should be the API root, e.g. {EXAMPLE_BASE_URL}"
            ) from None
        return body

    def _connect(self) -> OpenAI:
        from openai import OpenAI

        self._client = OpenAI(
            base_url=self.settings.base_url,
            api_key=self.settings.api_key.get_secret_value(),
            timeout=self.timeout,
            max_retries=0,
        )
        return self._client


def _status_message(status: int, error: Exception, settings: Settings) -> str:
    said = _provider_said(error)
    if status in (401, 403):
        return (
            f"HTTP {status}: the API key was rejected or has no access to model "
            f"{settings.model!r}. Check OPENAI_API_KEY and OPENAI_MODEL{said}"
        )
    if status == 404:
        return (
            f"HTTP 404: nothing at {settings.base_url}/chat/completions, or no model "
            f"{settings.model!r}. Check OPENAI_BASE_URL (usually a missing /v1, e.g. "
            f"{EXAMPLE_BASE_URL}) and OPENAI_MODEL{said}"
        )
    if status == 429:
        return (
            "HTTP 429: the provider is busy or your rate limit or quota is used up. "
            f"Wait and run again; chapter 11 adds automatic retry{said}"
        )
    if status >= 500:
        return (
            f"HTTP {status}: the provider had a server error or is overloaded. "
            f"Wait and run again{said}"
        )
    return f"HTTP {status}: the provider refused the request{said}"


def _provider_said(error: Exception) -> str:
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, Mapping) else None
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        message = body["error"].get("message")
    message = message or getattr(error, "message", "")
    return f" (provider said: {one_line(str(message), 200)})" if message else ""


def _root_cause(error: BaseException) -> str:
    """The innermost reason, e.g. "[Errno 111] Connection refused" or a DNS failure."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return str(error) or type(error).__name__

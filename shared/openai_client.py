"""The real model: any OpenAI-compatible Chat Completions endpoint, through the `openai` SDK.

`openai` is imported only when a client is built, so `--help`, `--demo` and a
config error never pay for it. The SDK's own retries are off: every failure is
shown as it is, and whoever wants to retry does it on purpose, in one place,
with what the error carries.

Every SDK exception becomes one `ProviderError` line that names the HTTP status
and the fix, and carries its kind, its status, the Retry-After the provider
asked for, and the body it sent (for `--trace`). A successful body is returned
untouched, also for `--trace`.

The body is read piece by piece through the reply's bound (shared/reply_bound.py:
`OPENAI_MAX_REPLY_SECONDS`, `OPENAI_MAX_REPLY_CHARS`), so a body that never
ends, or is huge, is cut instead of being read into memory whole.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from shared.config import SETTING_NAMES, Settings
from shared.errors import ProviderError, ProviderErrorKind, RefusedConnectionError, one_line
from shared.reply_bound import ReplyBound

if TYPE_CHECKING:
    import openai
    from openai import OpenAI

REQUEST_TIMEOUT_SECONDS = 600.0  # small local models on a CPU can take minutes per turn


class OpenAIChatModel:
    def __init__(self, settings: Settings, *, timeout: float = REQUEST_TIMEOUT_SECONDS) -> None:
        self.settings = settings
        self.name = settings.model
        self.label = f"{settings.model} @ {settings.base_url}"
        self.timeout = timeout
        self._client: OpenAI | None = None

    @property
    def request_fields(self) -> Mapping[str, Any]:
        """Added to every request: a bound on the reply (`OPENAI_MAX_TOKENS`), and the
        temperature when `OPENAI_TEMPERATURE` sets one (else the provider's default)."""
        temperature = self.settings.temperature
        return {"max_tokens": self.settings.max_tokens} | (
            {} if temperature is None else {"temperature": temperature}
        )

    @property
    def read_timeout(self) -> float:
        """How long the SDK waits for any byte: never longer than a whole reply may take."""
        return min(self.timeout, self.settings.max_reply_seconds)

    def reply_bound(self) -> ReplyBound:
        """The bounds of one reply, starting now: make it just before its request is sent."""
        return ReplyBound(self.settings.max_reply_seconds, self.settings.max_reply_chars)

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        import openai

        client = self._client or self._connect()
        bound = self.reply_bound()
        try:
            with client.chat.completions.with_streaming_response.create(
                **{**self.request_fields, **request}
            ) as raw:
                data = self.read_body(bound.read(raw.iter_bytes()))
        except (openai.APIStatusError, openai.APIConnectionError) as error:
            raise self.provider_error(error) from None
        text = data.decode("utf-8", errors="replace")
        try:
            body: Mapping[str, Any] = json.loads(text)
        except ValueError:
            raise self.not_json_error(text) from None
        except RecursionError:
            raise ProviderError(
                "the provider answered HTTP 200 with JSON nested too deeply to read: "
                f"{text[:60]!r}…; that is no completion. Run again",
                kind=ProviderErrorKind.BAD_RESPONSE,
            ) from None
        return body

    def read_body(self, pieces: Iterable[bytes]) -> bytes:
        """All of a body (as bounded as `pieces` are); a dropped connection is a `ProviderError`.

        The SDK turns what goes wrong before the body into its own errors; what goes
        wrong while this client reads the body itself is turned here, the same way.
        """
        import httpx2  # the SDK's HTTP library

        try:
            return b"".join(pieces)
        except httpx2.TimeoutException:
            raise self.timeout_error() from None
        except httpx2.TransportError as error:
            raise self.connection_error(error) from None

    def not_json_error(self, text: str) -> ProviderError:
        """An HTTP 200 whose body is not JSON (a web page, say): the URL is the likely cause."""
        return ProviderError(
            f"the provider answered HTTP 200 with a body that is not JSON: {text[:200]!r}. "
            f"Check {self.settings.setting_name('OPENAI_BASE_URL')}: it should be the API root, "
            "such as "
            f"{_api_root_example(self.settings.base_url)}",
            kind=ProviderErrorKind.BAD_RESPONSE,
            body=text,
        )

    def provider_error(
        self, error: openai.APIStatusError | openai.APIConnectionError
    ) -> ProviderError:
        """The one line (and the kind, status, Retry-After and body) for a failed request."""
        import openai

        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            return ProviderError(
                _status_message(status, error, self.settings),
                status,
                kind=status_kind(status),
                retry_after=retry_after_seconds(error.response.headers),
                body=_body_text(error.response),
            )
        if isinstance(error, openai.APITimeoutError):
            return self.timeout_error()
        return self.connection_error(error)

    def timeout_error(self) -> ProviderError:
        return ProviderError(
            f"no answer from {self.settings.base_url} within {self.read_timeout:g} s; "
            "the server may be overloaded or the model too slow",
            kind=ProviderErrorKind.CONNECTION,
        )

    def connection_error(self, error: BaseException) -> ProviderError:
        message = (
            f"cannot connect to {self.settings.base_url} ({_root_cause(error)}). "
            f"Check {self.settings.setting_name('OPENAI_BASE_URL')} (host, port, http or https) "
            "and that the server is running"
        )
        if isinstance(_innermost(error), ConnectionRefusedError):  # nothing listens there
            return RefusedConnectionError(message)
        return ProviderError(message, kind=ProviderErrorKind.CONNECTION)

    def _connect(self) -> OpenAI:
        from openai import OpenAI

        self._client = OpenAI(
            base_url=self.settings.base_url,
            api_key=self.settings.api_key.get_secret_value(),
            timeout=self.read_timeout,
            max_retries=0,
        )
        return self._client


def status_kind(status: int) -> ProviderErrorKind:
    """What an HTTP status says about the failure."""
    if status in (401, 403):
        return ProviderErrorKind.AUTHENTICATION
    if status == 404:
        return ProviderErrorKind.NOT_FOUND
    if status == 429:
        return ProviderErrorKind.RATE_LIMITED
    if status >= 500:
        return ProviderErrorKind.SERVER
    return ProviderErrorKind.BAD_REQUEST


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """How long the provider asked us to wait: `retry-after-ms`, else `retry-after`.

    `retry-after` is either seconds or an HTTP date. Anything that is no wait
    (unreadable, negative, infinite, NaN, a date already past) counts as not
    asked, so the caller backs off as if there were no header; an unusable
    `retry-after-ms` leaves `retry-after` to be read.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    try:
        seconds = _a_wait(float(lowered.get("retry-after-ms", "nan")) / 1000)
    except ValueError:
        seconds = None
    if seconds is not None:
        return seconds
    value = lowered.get("retry-after", "").strip()
    try:
        return _a_wait(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return _a_wait(when.timestamp() - (time.time() if now is None else now))


def _a_wait(seconds: float) -> float | None:
    """`seconds` when it is a wait one can make: finite and not negative."""
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _body_text(response: Any, limit: int = 20_000) -> str | None:
    try:
        text = str(response.text)
    except Exception:  # a body that cannot be read is just not shown
        return None
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def _api_root_example(base_url: str) -> str:
    """The user's own URL with `/v1` where it usually belongs."""
    root = base_url.rstrip("/")
    return root if root.endswith("/v1") else f"{root}/v1"


def _status_message(status: int, error: Exception, settings: Settings) -> str:
    said = _provider_said(error)
    url, key, model = map(settings.setting_name, SETTING_NAMES)
    if status in (401, 403):
        return (
            f"HTTP {status}: the API key was rejected or has no access to model "
            f"{settings.model!r}. Check {key} and {model}{said}"
        )
    if status == 404 and settings.base_url.rstrip("/").endswith("/v1"):  # the URL looks right
        return (
            f"HTTP 404: no model {settings.model!r} at {settings.base_url}, or nothing at its "
            f"/chat/completions. Check {model} first: {settings.model!r} may not be a "
            "model this provider serves (its /models lists the ids it does); then "
            f"{url}{said}"
        )
    if status == 404:
        return (
            f"HTTP 404: nothing at {settings.base_url}/chat/completions, or no model "
            f"{settings.model!r}. Check {url} (usually a missing /v1: "
            f"{_api_root_example(settings.base_url)}) and {model}{said}"
        )
    if status == 429:
        return (
            "HTTP 429: the provider is busy or your rate limit or quota is used up. "
            f"Wait and run again{said}"
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
    error = _innermost(error)
    return str(error) or type(error).__name__


def _innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return error

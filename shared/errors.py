"""Every way a run can fail on purpose, as one hierarchy.

A caller catches at the level it cares about: the CLI catches `TutorialError`
and prints `cli_line()`; a test catches the exact class it names. Each error
carries the exit code the CLI returns for it, so the codes are stated once:

    0 success · 1 agent failure · 2 usage or config error · 130 interrupted

Tool failures are *not* here: a failing tool returns a `ToolResult` the model
reads (see `shared/tools.py`), it never raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum

EXIT_OK = 0
EXIT_AGENT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class TutorialError(Exception):
    """Base of every expected failure; the CLI prints one line, never a traceback."""

    exit_code = EXIT_AGENT_FAILURE

    def cli_line(self) -> str:
        return f"{type(self).__name__}: {self}"


class ConfigError(TutorialError):
    """Settings are missing or malformed; raised before any request is sent."""

    exit_code = EXIT_USAGE

    def cli_line(self) -> str:
        return f"配置错误：{self}"


class WorkingFolderError(TutorialError):
    """The folder the command was started in cannot be used: deleted, moved away, unreadable."""

    exit_code = EXIT_USAGE

    def cli_line(self) -> str:
        return str(self)


class AgentError(TutorialError):
    """The loop stopped without an answer."""


class AgentLimitError(AgentError):
    """The loop used every model request it was allowed."""

    def __init__(self, max_turns: int, limit: str = "max_turns", fix: str = "") -> None:
        fix = fix or (
            "every model request was used and there is still no answer. Raise --max-turns, "
            "or make the prompt more specific (run with --trace to see what it kept doing)"
        )
        super().__init__(f"Agent exceeded {limit}={max_turns}: {fix}")
        self.max_turns = max_turns
        self.limit = limit


class FinishReasonError(AgentError):
    """The provider ended the answer for a reason this chapter does not recover from."""

    def __init__(self, message: str, finish_reason: str | None) -> None:
        super().__init__(message)
        self.finish_reason = finish_reason


class OutputTruncatedError(FinishReasonError):
    def __init__(self) -> None:
        super().__init__(
            "Model output reached the token limit (finish_reason=length). This agent does "
            "not continue a cut-off answer: shorten the task or use a model with a larger "
            "output limit.",
            "length",
        )


class ContentFilterError(FinishReasonError):
    def __init__(self) -> None:
        super().__init__(
            "The provider's content filter stopped the answer (finish_reason=content_filter). "
            "Rephrase the prompt or try another model.",
            "content_filter",
        )


class UnsupportedFinishReasonError(FinishReasonError):
    def __init__(self, finish_reason: str | None) -> None:
        shown = "null" if finish_reason is None else finish_reason
        super().__init__(f"Unsupported finish_reason: {shown}", finish_reason)


class EmptyReplyError(AgentError):
    """The model answered with neither text nor tool calls: never a silent empty answer."""

    def __init__(self) -> None:
        super().__init__(
            "The model returned neither text nor tool calls; there is no answer to show. "
            "Run again, or use --trace to see the raw response."
        )


class MessageContractError(AgentError):
    """The history breaks the tool-call pairing rule; caught here instead of as a vague 400."""


class ProviderErrorKind(StrEnum):
    """What kind of failure a provider error is: decides whether trying again can help."""

    AUTHENTICATION = "authentication"  # 401, 403: the key or its access
    NOT_FOUND = "not_found"  # 404: the URL or the model name
    RATE_LIMITED = "rate_limited"  # 429: too many requests, or the quota is used up
    SERVER = "server"  # 5xx: the provider failed or is overloaded
    CONNECTION = "connection"  # no connection, or no answer in time
    BAD_REQUEST = "bad_request"  # another 4xx: the provider refused what was sent
    BAD_RESPONSE = "bad_response"  # an answer that is not a usable completion


class ProviderError(AgentError):
    """The model endpoint failed; the message names the HTTP status and the fix.

    `kind`, `status` and `retry_after` (seconds, from the `retry-after-ms` or
    `retry-after` header) let a caller decide whether and when to try again;
    `body` is what the provider sent, for `--trace`.
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        kind: ProviderErrorKind = ProviderErrorKind.BAD_RESPONSE,
        retry_after: float | None = None,
        body: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after
        self.body = body


class ReplyLimitError(ProviderError):
    """A reply went on past a bound the client keeps, and was cut there; nothing of it is kept.

    The provider sent no error: it kept sending (text for ever, keep-alive
    comments for ever, a body with no end). Its kind is a connection's, as for
    a reply cut before its end: sending the request again may get a reply
    that ends.
    """

    def __init__(self, setting: str, value: float, what: str, fix: str) -> None:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        super().__init__(
            f"the reply went on past {setting}={shown} ({what}) and was cut there; nothing "
            f"of it was kept. Run again; {fix}",
            kind=ProviderErrorKind.CONNECTION,
        )
        self.setting = setting

    @classmethod
    def too_slow(cls, seconds: float) -> ReplyLimitError:
        return cls(
            "OPENAI_MAX_REPLY_SECONDS",
            seconds,
            "seconds for the whole reply",
            "a model that is only slow needs a larger OPENAI_MAX_REPLY_SECONDS",
        )

    @classmethod
    def too_long(cls, chars: int) -> ReplyLimitError:
        return cls(
            "OPENAI_MAX_REPLY_CHARS",
            chars,
            "characters",
            "a reply that is only long needs a larger OPENAI_MAX_REPLY_CHARS or OPENAI_MAX_TOKENS",
        )


def quoted_ids(ids: Iterable[str]) -> str:
    """Render ids as a JSON list (`["call_2"]`), the form the error messages promise."""
    return json.dumps(list(ids), ensure_ascii=False)


def one_line(text: str, limit: int) -> str:
    """A provider's message squeezed into one line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class RefusedConnectionError(ProviderError):
    """Nothing accepted the connection: no server at that host and port. A retry owner may
    call it a setting to fix rather than a failure that passes, when nothing has answered
    at that URL before."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind=ProviderErrorKind.CONNECTION)

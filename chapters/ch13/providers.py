"""Where a provider wants the events: a setting of the provider, not a branch in the loop.

The inbox delivers its events as one `user` message just before a request
(chapters/ch13/inbox.py). When the history ends with tool results, that is a
`user` message right after a `tool` message, which OpenAI and most servers take
and Mistral refuses (HTTP 400: an unexpected role after a tool message). For a
provider like that the events go at the end of the last tool message instead.

    the base URL's host      api.mistral.ai (any host under mistral.ai)  → append
                             everything else                             → user
    OPENAI_EVENT_DELIVERY    user | append: wins over the host, for a provider this
                             table does not know (a proxy in front of Mistral, say)

The choice is read once, when the command connects to the model (chapter 11's
way of reading settings: CONNECT is decorated, chapters/ch13/parts.py). A
scripted model (`--demo`, the tests) connects to nothing: a user message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from chapters.ch13.inbox import Delivery
from shared.errors import ConfigError

DELIVERY_VARIABLE = "OPENAI_EVENT_DELIVERY"
NAMED = {"user": Delivery.USER_MESSAGE, "append": Delivery.APPEND_TO_TOOL}
# Hosts (and every host under them) whose API refuses a user message after a tool message.
APPEND_HOSTS = ("mistral.ai",)


@dataclass
class ProviderProfile:
    """What the run knows of its provider's habits; `delivery` is set when it connects."""

    delivery: Delivery = Delivery.USER_MESSAGE
    source: str = "a scripted model"  # why: the banner says it


def delivery_for(base_url: str, environ: Mapping[str, str]) -> ProviderProfile:
    """The profile for this endpoint: `OPENAI_EVENT_DELIVERY` if set, else by the URL's host.
    A value that is neither `user` nor `append` is a `ConfigError` (exit 2) with the fix."""
    value = environ.get(DELIVERY_VARIABLE, "").strip()
    if value:
        chosen = NAMED.get(value.lower())
        if chosen is None:
            raise ConfigError(
                f"{DELIVERY_VARIABLE}={value!r} is not a way to deliver events: set it to "
                "`user` (a user message after the tool results) or `append` (added to the last "
                "tool result, for providers that refuse a user message there), or unset it to "
                "choose by the host of OPENAI_BASE_URL"
            )
        return ProviderProfile(chosen, DELIVERY_VARIABLE)
    host = (urlsplit(base_url).hostname or "").lower()
    for known in APPEND_HOSTS:
        if host == known or host.endswith("." + known):
            return ProviderProfile(Delivery.APPEND_TO_TOOL, f"the host {host}")
    return ProviderProfile(Delivery.USER_MESSAGE, f"the host {host or base_url}")


def described(profile: ProviderProfile) -> str:
    """`events: a user message (the host 127.0.0.1)`, for the banner."""
    how = {
        Delivery.USER_MESSAGE: "a user message",
        Delivery.APPEND_TO_TOOL: "appended to the last tool result",
    }[profile.delivery]
    return f"events: {how} ({profile.source})"

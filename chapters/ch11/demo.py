"""`--demo`: a rate limit waited out, one search made three times, an answer cut and continued.

The workspace is a new temporary folder with chapter 6's small shop. The
model is scripted; everything else (the retry, the repeat guard, the
continuation, the console and the end line) is the chapter's real code:

    request 1   HTTP 429 with Retry-After: 1 s; waited, then sent again
    reply 1     grep CODES in shop/cart.py
    replies 2-3 the same grep again: the third identical result tells the model
                it is repeating itself
    reply 4     the answer, cut at the output limit (finish_reason "length")
    reply 5     the continuation request's reply: the rest of the answer, joined
                to the first part into one message

Every text the model writes starts with [scripted], and so does the 429's
message. The wait is real only where a person watches: `DemoClock` sleeps when
stderr is a terminal; in a pipe, a test or the text's generator the wait
passes at once, and the lines still say how long it was.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chapters.ch06.demo import write_demo_files
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, text_stream
from shared.console import is_terminal
from shared.errors import ProviderError, ProviderErrorKind
from shared.scripted import scripted_text

DEMO_PROMPT = "Which discount codes does shop/cart.py accept, and what does each take off?"
DEMO_MODEL = "scripted-demo"
CART = "shop/cart.py"
RETRY_AFTER_SECONDS = 1.0  # what the scripted 429 asks for: short, for a person watching
RATE_LIMIT_MESSAGE = scripted_text(
    "Rate limit reached for scripted-demo on requests per min (RPM): Limit 3, Used 3, "
    "Requested 1. Please try again in 1s."
)
CUT_ANSWER = scripted_text(
    "shop/cart.py accepts two discount codes, both in CODES: WELCOME10 takes 10 percent off "
    "the subtotal"
)
REST_OF_ANSWER = (
    ", and STAFF takes 30 percent off. Any other code, or none, takes nothing off; "
    "apply_discount in shop/pricing.py rounds the result to cents."
)


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch11-demo-"))
    write_demo_files(folder)
    return folder


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The six exchanges above, the first of which fails."""
    replies: Sequence[AgentStep] = [
        [rate_limited()],
        calls_stream(_search(1), text=scripted_text("I look for the codes in the cart.")),
        calls_stream(_search(2), text=scripted_text("Let me look again.")),
        calls_stream(_search(3), text=scripted_text("Once more, to be sure.")),
        text_stream(*_pieces(CUT_ANSWER), finish_reason="length"),
        text_stream(*_pieces(REST_OF_ANSWER)),
    ]
    return AgentStreams({DEMO_PROMPT: replies}, name=DEMO_MODEL, stream=stream)


def rate_limited() -> ProviderError:
    """What the SDK client makes of a 429 with `retry-after: 1` (shared/openai_client.py)."""
    body = {
        "error": {"message": RATE_LIMIT_MESSAGE, "type": "requests", "code": "rate_limit_exceeded"}
    }
    return ProviderError(
        f"HTTP 429: the provider is busy or your rate limit or quota is used up "
        f"(provider said: {RATE_LIMIT_MESSAGE})",
        429,
        kind=ProviderErrorKind.RATE_LIMITED,
        retry_after=RETRY_AFTER_SECONDS,
        body=json.dumps(body),
    )


@dataclass
class DemoClock:
    """The demo's time: a wait is waited only where a person watches (`watched`).

    Elsewhere the clock moves on by the wait at once, so the countdown and every
    line say what they would on a terminal.
    """

    watched: bool
    skipped: float = 0.0

    @classmethod
    def for_this_terminal(cls) -> DemoClock:
        return cls(watched=is_terminal(sys.stderr))

    def now(self) -> float:
        return time.monotonic() + self.skipped

    def sleep(self, seconds: float) -> None:
        if self.watched:
            time.sleep(seconds)
        else:
            self.skipped += seconds


def _search(number: int) -> tuple[str, str, str]:
    """The same call each time: only its id differs."""
    return f"call_{number}", "grep", json.dumps({"pattern": "CODES", "path": CART})


def _pieces(text: str) -> list[str]:
    """A text in pieces of a few words, as a stream brings it."""
    words = text.split(" ")
    pieces = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    return [piece if n == 0 else " " + piece for n, piece in enumerate(pieces)]

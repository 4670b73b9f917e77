"""What a secret looks like, so that it is never saved as a memory.

A memory is a plain file that a later session reads back, and its description
goes into every system prompt, which is sent to the model's provider. A key
written there is a key leaked, so memory_write refuses any text with one of
these shapes and says which one it saw (never the secret itself):

    an OpenAI-style API key        sk-..., sk-proj-..., sk-ant-... (20 or more characters after sk-)
    an AWS access key id           AKIA or ASIA and 16 capitals or digits
    a GitHub token                 ghp_, gho_, ghu_, ghs_, ghr_ and 36 or more characters
    a Slack token                  xoxb-, xoxp-, xoxa-, xoxr-, xoxs-...
    a Google API key               AIza and 35 characters
    a private key block            -----BEGIN ... PRIVATE KEY-----
    a password assignment          password=..., passwd=..., pwd=..., secret=..., api_key=...,
                                   token=... (a value right after the =)

These are shapes, not proof: a false alarm costs one rewritten memory, a miss
costs a key. The model is told to say where a secret is kept, not what it is.
"""

from __future__ import annotations

import re

SECRET_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an API key (sk-...)", re.compile(r"\bsk-[A-Za-z0-9_-]{20,}")),
    ("an AWS access key id (AKIA...)", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token (ghp_...)", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}")),
    ("a Slack token (xox...)", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("a Google API key (AIza...)", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    (
        "a private key block (-----BEGIN ... PRIVATE KEY-----)",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
    (
        "a password assignment (password=...)",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|"
            r"auth[_-]?token|token)\s*=\s*['\"]?[^\s'\"]+"
        ),
    ),
)


def secret_shape(text: str) -> str | None:
    """The first secret shape `text` has, as words for the model; None if it has none."""
    for shape, pattern in SECRET_SHAPES:
        if pattern.search(text):
            return shape
    return None

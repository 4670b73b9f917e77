"""Text that UTF-8 cannot carry: lone surrogates, replaced with U+FFFD where text comes in.

JSON may write any UTF-16 code unit as an escape, so a provider (or a file)
can send `"\\ud800"`: half of a surrogate pair with no other half. Python
decodes it into a `str` that cannot be encoded as UTF-8, and the failure
comes later, far from its cause: the next request, a log line, a hook's
input. So text is cleaned where it enters (the reply parser, a log being
read back), and nothing downstream has to care.

A pair written as two escapes (`"\\ud83d\\ude00"`, or one half at the end of
one streamed piece and the other at the start of the next, joined) is one
character and stays one: only halves without their other half are replaced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD; pairs joined into their character."""
    if _SURROGATE.search(text) is None:
        return text  # the usual case: no copy
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_json(value: Any) -> Any:
    """A JSON value (as `json.loads` returns it) with every string, keys included, cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_json(item) for item in value]
    if isinstance(value, Mapping):
        return {clean_text(str(key)): clean_json(item) for key, item in value.items()}
    return value

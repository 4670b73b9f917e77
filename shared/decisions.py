"""The four answers anything that judges a tool call can give.

A permission rule, a mode, a hook and a human all answer in these words, so
that one of them can be weighed against another in a fixed order.
"""

from __future__ import annotations

from enum import StrEnum


class Decision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    PASSTHROUGH = "passthrough"  # no opinion: whatever judges next decides

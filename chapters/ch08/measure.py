"""How big the context is: measured where the provider counted it, estimated only for the rest.

Only the provider knows how many tokens a request is: it says so in each
response (`usage.prompt_tokens`, read by shared/completion.py into `Usage`).
That count is exact for the messages and tools it was sent with, so the meter
keeps it, and estimates only what changed since:

    context = prompt_tokens of the last response
              + estimate(messages added since)  - estimate(messages removed since)
              + estimate(tool schemas now)      - estimate(tool schemas then)

Before the first response, or with a provider that sends no usage, all of it
is estimated. The estimate is a rule of thumb, counted on the JSON each
message is sent as (so its role, ids and arguments count too):

    a CJK character (Chinese, Japanese kana, Korean hangul, full-width forms)  1 token
    any other character                                                      1/4 token

rounded up per message. Real tokenizers differ by model (code and JSON often
run nearer 3 characters per token): the error lasts one request, until the
next response measures again.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.completion import Usage
from shared.messages import Message

CHARS_PER_TOKEN = 4  # other text: English, code, JSON
# One token each: CJK punctuation, kana, CJK ideographs (with extension A and the
# compatibility block), hangul syllables, full-width forms.
CJK = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def estimate_tokens(text: str) -> int:
    """Tokens in `text` by the rule above: one per CJK character, one per four others."""
    wide = 0 if text.isascii() else len(CJK.findall(text))
    narrow = len(text) - wide
    return wide + -(-narrow // CHARS_PER_TOKEN)


def message_tokens(message: Message) -> int:
    """A message's estimate, counted on its JSON as it is sent."""
    return estimate_tokens(json.dumps(message.wire, ensure_ascii=False))


def messages_tokens(messages: Iterable[Message]) -> int:
    return sum(message_tokens(message) for message in messages)


def tools_tokens(schemas: Sequence[Mapping[str, Any]]) -> int:
    """The tool schemas' estimate, counted on their JSON as it is sent."""
    return estimate_tokens(json.dumps(list(schemas), ensure_ascii=False)) if schemas else 0


@dataclass
class ContextMeter:
    """The context size of a run: the last measurement, and what changed since it."""

    last: int = 0  # the newest size worked out: what the gauge shows
    measured: bool = False  # whether `last` starts from a provider's count
    _count: int | None = None  # prompt_tokens of the newest response that had it
    _sent: tuple[Message, ...] = ()  # the messages that request carried
    _sent_tools: int = 0  # the estimate of its tool schemas
    _schemas: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    _schemas_tokens: int = field(default=0, repr=False)

    def measure(self, sent: Sequence[Message], tools: int, usage: Usage | None) -> None:
        """A response arrived: remember its count and what it was counting, if it had one."""
        if usage is None or usage.prompt_tokens is None:
            return  # keep the older measurement: what changed since it is still estimated
        self._count, self._sent, self._sent_tools = usage.prompt_tokens, tuple(sent), tools

    def size(self, history: Sequence[Message], tools: int) -> int:
        """The size of a request carrying `history` and tools estimated at `tools`."""
        if self._count is None:
            self.last, self.measured = messages_tokens(history) + tools, False
            return self.last
        now = {id(message) for message in history}
        then = {id(message) for message in self._sent}
        added = messages_tokens(m for m in history if id(m) not in then)
        removed = messages_tokens(m for m in self._sent if id(m) not in now)
        size = self._count + added - removed + tools - self._sent_tools
        self.last, self.measured = max(size, 0), True
        return self.last

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        """`tools_tokens`, worked out again only when the schemas are other objects
        (a registry builds each tool's schema once, so a snapshot hands the same ones)."""
        same = len(schemas) == len(self._schemas) and all(map(operator.is_, schemas, self._schemas))
        if not same:
            self._schemas, self._schemas_tokens = tuple(schemas), tools_tokens(schemas)
        return self._schemas_tokens

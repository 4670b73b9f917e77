"""The bounds a client keeps on one reply, whatever the provider does: a deadline and a size cap.

`max_tokens` asks the provider to stop; a provider that does not (a broken
server, a proxy that loops, a hostile one) could send for ever, and the SDK's
timeout would never fire, because every piece that arrives starts it again.
So the client counts for itself:

    OPENAI_MAX_REPLY_SECONDS   wall-clock time from sending the request to the
                               reply's last byte; checked each time bytes arrive
                               (keep-alive comments too), and a server silent
                               for longer is cut by the read timeout, which is
                               never longer than this
    OPENAI_MAX_REPLY_CHARS     what the reply may hold: a plain body, in bytes
                               as they arrive; a streamed reply, in characters
                               of its text, reasoning and arguments (the
                               assembler counts them), because a stream's
                               framing is many times larger than what it carries

Past either, the reply is a `ReplyLimitError` (shared/errors.py): one line
naming the setting, and nothing of the reply is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from shared.errors import ReplyLimitError


@dataclass
class ReplyBound:
    """One reply's deadline and size cap, counted from when it is made (the request is sent)."""

    seconds: float
    chars: int
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def check_time(self) -> None:
        """Raise once the deadline has passed."""
        if self.clock() - self.started > self.seconds:
            raise ReplyLimitError.too_slow(self.seconds)

    def read(self, pieces: Iterable[bytes], *, sized: bool = True) -> Iterator[bytes]:
        """`pieces` as they arrive, until the deadline passes or (when `sized`) the cap does.

        A stream's pieces are read unsized: what it carries is counted after
        its framing is taken off.
        """
        size = 0
        for piece in pieces:
            self.check_time()
            size += len(piece)
            if sized and size > self.chars:
                raise ReplyLimitError.too_long(self.chars)
            yield piece

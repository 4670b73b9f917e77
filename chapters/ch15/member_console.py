"""A teammate's console: each line it prints starts with its name, and it never spins.

The lead and its teammates print to the same terminal at the same time. Two
rules keep that readable:

    whole lines, tagged   a teammate's console writes into `TaggedLines`, which
                          keeps a piece of a line until the line ends (streamed
                          text arrives a few characters at a time) and hands whole
                          lines to the team's `LineSink`, each starting `[alice] `
    one spinner           a teammate's console is plain (`fancy` off): it draws no
                          spinner, so it never clears or overwrites the lead's,
                          which is the only one on the screen

The sink writes under one lock, so the lines of one write (a tool's result)
stay together. With --trace, a request or a response (`--- request 2 ---` and
its JSON, written at once) is the one thing not tagged: it goes whole, its title
naming the member (`--- alice · request 2 ---`), so that its JSON stays JSON to
copy. In a terminal the sink prints through the lead's rich console, which prints
above the lead's spinner and gives each name a colour; otherwise it writes plain
lines, as every console does without a terminal.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.console import Console

TRACE_TITLE = "--- "  # how a traced request or response starts (shared/console.py)
COLOURS = ("cyan", "magenta", "green", "blue", "yellow", "bright_red")


class LineSink:
    """Where every teammate's whole lines go: the lead console's error stream, one at a time."""

    def __init__(self, lead: Console) -> None:
        self.lead = lead
        self._lock = threading.Lock()

    def block(self, text: str) -> None:
        """A trace block, whole and untagged."""
        with self._lock:
            if self.lead.fancy:
                self.lead._err().print(text, end="", markup=False, highlight=False)
            else:
                self.lead.err.write(text)
                self.lead.err.flush()

    def write(self, tag: str, colour: str, lines: list[str]) -> None:
        with self._lock:
            if self.lead.fancy:
                from rich.text import Text

                rich = self.lead._err()  # the lead's: its prints go above its spinner
                for line in lines:
                    rich.print(Text.assemble((tag, f"bold {colour}"), " ", line), highlight=False)
            else:
                self.lead.err.write("".join(f"{tag} {line}\n" for line in lines))
                self.lead.err.flush()


class TaggedLines(io.TextIOBase):
    """A text stream that gives the sink whole lines only, each to be tagged `[name]`."""

    def __init__(self, name: str, colour: str, sink: LineSink) -> None:
        self.name = name
        self.tag = f"[{name}]"
        self.colour = colour
        self.sink = sink
        self._partial = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text.startswith(TRACE_TITLE) and text.endswith("\n") and not self._partial:
            self.sink.block(f"{TRACE_TITLE}{self.name} · {text[len(TRACE_TITLE) :]}")
            return len(text)
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
        if lines:
            self.sink.write(self.tag, self.colour, lines)
        return len(text)

    def flush(self) -> None:
        """A line still being written stays until it ends: half a line is not shown."""

    def close(self) -> None:
        with self._lock:
            rest, self._partial = self._partial, ""
        if rest:
            self.sink.write(self.tag, self.colour, [rest])
        super().close()


def member_console(lead: Console, name: str, number: int, sink: LineSink) -> Console:
    """The console of teammate `name` (the `number`th to join): the lead's kind of console
    (it streams, it counts retries), plain, writing tagged lines to `sink`."""
    console = lead.nested(name)
    console.fancy = False  # no spinner of its own: the lead's is the only one
    console.label = ""  # the tag names it: "[alice] … request 2", not "alice · request 2"
    console.indent = ""
    console.err = TaggedLines(name, COLOURS[number % len(COLOURS)], sink)
    console._rich_err = None
    console._in_view = []  # what the lead keeps in view is drawn under the lead's spinner
    return console

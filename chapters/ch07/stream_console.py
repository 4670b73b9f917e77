"""Chapter 7's console: a reply shown as it arrives, and a trace of every chunk.

It is chapter 1's console (shared/console.py) plus the three observer calls a
stream makes (chapters/ch07/assembly.py, `StreamObserver`):

    chunk_received      with --trace: the chunk's JSON on one line, as it arrived
    reasoning_arrived   the reasoning, dimmed; never part of the answer
    text_arrived        the text, written at once; the spinner stops at the first piece

A sub-agent's console (`nested`, as chapter 6 builds it) streams too: its text
appears as it arrives, each line indented under the parent's.

Streamed text goes where progress goes, to stderr. The final answer still goes
to stdout alone, so `> answer.txt` captures exactly the answer, as before;
only when both stdout and stderr are the terminal, and the answer was already
streamed there, it is not printed a second time. With --trace the chunks are
the record, so their text is not echoed beside them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any, TextIO

from shared.console import Console, is_terminal

REASONING_LABEL = "思考 reasoning: "


class StreamingConsole(Console):
    """A `Console` that is also a `StreamObserver`."""

    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        fancy: bool | None = None,
        trace: bool = False,
    ) -> None:
        super().__init__(out=out, err=err, fancy=fancy, trace=trace)
        self._spinner: ExitStack | None = None
        self._mode = ""  # what the last piece written was: "", "reasoning" or "text"
        self._streamed: list[str] = []  # the text of the current exchange

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """Chapter 1's spinner, until the first piece of the reply arrives."""
        self._streamed = []
        self._mode = ""
        with ExitStack() as spinner:
            spinner.enter_context(super().waiting(what))
            self._spinner = spinner
            try:
                yield
            finally:
                self._spinner = None
                self._end_line()  # also after Ctrl-C: the next line starts on its own

    def nested(self, label: str) -> StreamingConsole:
        """Chapter 6's nested console (shared/console.py) that is also a stream observer."""
        shape = super().nested(label)
        inner = StreamingConsole(out=self.out, err=self.err, fancy=self.fancy, trace=self.tracing)
        inner.label, inner.indent = shape.label, shape.indent
        inner._rich_err, inner._rich_out = self._rich_err, self._rich_out
        inner._in_view, inner.timer = self._in_view, self.timer
        return inner

    def chunk_received(self, number: int, chunk: Mapping[str, Any]) -> None:
        if not self.tracing:
            return
        self._stop_spinner()
        line = f"chunk {number}: {json.dumps(chunk, ensure_ascii=False)}"
        if self.fancy:
            self._err().print(line, style="cyan", markup=False, highlight=False, soft_wrap=True)
        else:
            self._plain(line)

    def reasoning_arrived(self, text: str) -> None:
        self._write_streamed(text, "reasoning")

    def text_arrived(self, text: str) -> None:
        self._streamed.append(text)
        self._write_streamed(text, "text")

    def said_while_calling(self, text: str) -> None:
        if not (self._echoed() and self._streamed):  # else on the screen already, as it came
            super().said_while_calling(text)

    def answer(self, text: str) -> None:
        """The answer on stdout; on a terminal that watched it stream, only what is new."""
        shown = "".join(self._streamed)
        if shown and self._echoed() and is_terminal(self.out) and is_terminal(self.err):
            rest = text[len(shown) :] if text.startswith(shown) else text
            if rest.strip():  # a feature added to the streamed answer
                super().answer(rest.lstrip("\n"))
            return
        super().answer(text)

    # -- plumbing ---------------------------------------------------------------------------

    def _echoed(self) -> bool:
        """Whether streamed text is written as it arrives (not with --trace)."""
        return not self.tracing

    def _write_streamed(self, text: str, mode: str) -> None:
        if not self._echoed():
            return
        self._stop_spinner()
        if mode != self._mode:
            if self._mode:
                self._end_line()
            if self.indent:  # a nested console: its lines start under the parent's
                self.err.write(self.indent)
            if mode == "reasoning" and not self.fancy:
                self.err.write(REASONING_LABEL)
            self._mode = mode
        if self.indent:
            text = text.replace("\n", "\n" + self.indent)
        if self.fancy:
            style = "dim" if mode == "reasoning" else None
            self._err().print(
                text, style=style, end="", markup=False, highlight=False, soft_wrap=True
            )
            self.err.flush()
        else:
            self.err.write(text)
            self.err.flush()

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.close()
            self._spinner = None

    def _end_line(self) -> None:
        if self._mode:
            self.err.write("\n")
            self.err.flush()
            self._mode = ""

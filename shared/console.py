"""What the reader sees: spinner, approval panel, tool output, trace, final answer.

Two rules shape this module. The final answer alone goes to stdout, so
`python -m tutorial run ... > answer.txt` captures just the answer; everything
else goes to stderr. And rich rendering is only for a terminal: when stderr is
not a terminal, or `NO_COLOR` is set, the same information is printed as plain
lines, which is also what the tests read.

An agent started inside another agent's run prints through `nested(label)`: the
same streams, its lines indented under the outer agent's, its spinner and its
trace titles starting with the label, so a reader can tell whose work a line is.

On a terminal a wait says how long it has lasted: the spinner while the model
thinks ends with the seconds waited, and an approved command gets a spinner of
its own while it runs. Plain output shows no time: two runs of the same script
print the same lines, and the generated texts do not change from run to run.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # rich is imported lazily: `--help` and config errors stay fast
    from rich.console import Console as RichConsole
    from rich.console import ConsoleOptions, RenderableType, RenderResult

    from shared.errors import ProviderError

TOOL_OUTPUT_PREVIEW_LINES = 20
TOOL_OUTPUT_LINE_CHARS = 400  # one very long line must not flood the terminal
NESTED_INDENT = "  │ "  # what each level of nesting puts before a plain line


class Console:
    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        fancy: bool | None = None,
        trace: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        if fancy is None:
            fancy = is_terminal(self.err) and "NO_COLOR" not in os.environ
        self.fancy = fancy
        self.tracing = trace
        self.label = ""  # whose console this is, when it is nested; "" for the outermost
        self.indent = ""  # put before each line it prints (not before trace JSON)
        self._rich_err: RichConsole | None = None
        self._rich_out: RichConsole | None = None
        self._in_view: list[Callable[[], RenderableType | None]] = []
        self.timer: Callable[[], float] = time.monotonic  # what a spinner's seconds are read from

    def nested(self, label: str) -> Console:
        """The console of an agent started inside this one's run (by a tool call, say).

        It writes to the same streams and keeps the same things in view. Each
        line it prints is indented one level under this console's lines, and its
        spinner and `--trace` titles start with `label` ("explore · request 1"):
        trace JSON stays unindented, because it is data to copy.
        """
        inner = Console(out=self.out, err=self.err, fancy=self.fancy, trace=self.tracing)
        inner.label = f"{self.label} › {label}" if self.label else label
        inner.indent = self.indent + NESTED_INDENT
        inner._rich_err, inner._rich_out = self._rich_err, self._rich_out
        inner._in_view = self._in_view  # the same list: what the outer agent keeps in view
        inner.timer = self.timer
        return inner

    def _labelled(self, title: str) -> str:
        return f"{self.label} · {title}" if self.label else title

    # -- progress ---------------------------------------------------------------------------

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """A spinner on stderr while the model thinks, with the seconds waited; one plain
        line otherwise.

        What `keep_in_view` was given is drawn under the spinner, and
        disappears with it when the model answers.
        """
        what = self._labelled(what)
        if not self.fancy:
            self._plain(f"… {what}")
            yield
            return
        from rich.console import Group
        from rich.live import Live

        shown = [render() for render in self._in_view]
        below = [item for item in shown if item is not None]
        spinner = Ticking(self.indent + what, self.timer)
        group = Group(spinner, *below) if below else spinner
        with Live(group, console=self._err(), transient=True, refresh_per_second=12.5):
            yield

    @contextmanager
    def running(self, what: str) -> Iterator[None]:
        """On a terminal, a spinner with the seconds taken while `what` (a command) runs.

        Plain output prints nothing here: the result, printed when the command
        ends, says what ran.
        """
        if not self.fancy:
            yield
            return
        from rich.live import Live

        spinner = Ticking(f"{self.indent}运行中 running: {what}", self.timer)
        with Live(spinner, console=self._err(), transient=True, refresh_per_second=4):
            yield

    def keep_in_view(self, render: Callable[[], RenderableType | None]) -> None:
        """Keep something in view under the spinner while the model thinks.

        `render` is called each time a wait starts, so it shows the state of
        that moment; returning None shows nothing. Several may be kept in view,
        in the order given. Plain output ignores them: there, what changed was
        already printed as lines.
        """
        self._in_view.append(render)

    def info(self, text: str) -> None:
        if self.fancy:
            self._err().print(self._indented(text), style="dim", markup=False, highlight=False)
        else:
            self._plain(text)

    def notice(self, text: str) -> None:
        if self.fancy:
            self._err().print(self._indented(text), style="yellow", markup=False, highlight=False)
        else:
            self._plain(text)

    def error(self, text: str) -> None:
        if self.fancy:
            self._err().print(self._indented(text), style="bold red", markup=False, highlight=False)
        else:
            self._plain(text)

    # -- the exchange with the model (shared/completion.py's ExchangeObserver) --------------

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None:
        self.trace(self._labelled(title), request)

    def response_received(self, title: str, body: Mapping[str, Any]) -> None:
        self.trace(self._labelled(title), body)

    def response_failed(self, title: str, error: ProviderError) -> None:
        """With --trace: what came back instead of a completion (status and body)."""
        if not self.tracing:
            return
        status = f"HTTP {error.status}" if error.status is not None else str(error.kind)
        body = error.body if error.body is not None else "(no body)"
        self._trace_text(f"{self._labelled(title)} (failed: {status})", body)

    def said_while_calling(self, text: str) -> None:
        """Text the model wrote beside its tool calls."""
        self.info(f"assistant: {text}")

    # -- the data ---------------------------------------------------------------------------

    def trace(self, title: str, payload: Mapping[str, Any]) -> None:
        """With --trace: the exact JSON of a request or a response."""
        if not self.tracing:
            return
        text = json.dumps(payload, ensure_ascii=False, indent=2)
        if self.fancy:
            from rich.rule import Rule

            self._err().print(Rule(title, style="cyan"))
            self._err().print_json(text)
        else:
            self._write(f"--- {title} ---\n{text}")

    def _trace_text(self, title: str, text: str) -> None:
        """With --trace: a body that is not JSON (an error page, say), as text."""
        if self.fancy:
            from rich.rule import Rule

            self._err().print(Rule(title, style="red"))
            self._err().print(text, markup=False, highlight=False)
        else:
            self._write(f"--- {title} ---\n{text}")

    def approval_request(
        self,
        tool_name: str,
        reason: str,
        arguments: Mapping[str, Any],
        preview: str | None = None,
        agent: str | None = None,
    ) -> None:
        """The three lines a human needs to decide: which tool, why it asks, with what.

        A preview (the diff of a write) follows them; long argument values are
        shortened, because the preview is what shows the change. `agent` names
        the agent that asks when it is not the one the human started.
        """
        args = json.dumps({k: _shorten(v) for k, v in arguments.items()}, ensure_ascii=False)
        lines = [f"工具 tool: {tool_name}", f"原因 reason: {reason}", f"参数 arguments: {args}"]
        if agent:
            lines.insert(0, f"智能体 agent: {agent}")
        if self.fancy:
            from rich.console import Group
            from rich.panel import Panel
            from rich.syntax import Syntax
            from rich.text import Text

            parts: list[Any] = [Text("\n".join(lines))]
            if preview:
                parts.append(Syntax(preview, "diff", theme="ansi_dark", word_wrap=True))
            title = "需要批准 approval needed" + (f" · {agent}" if agent else "")
            panel = Panel(Group(*parts), title=Text(title), border_style="yellow")  # not markup
            self._err().print(self._padded(panel))
        else:
            self._plain("\n".join(lines) + (f"\n{preview.rstrip()}" if preview else ""))

    def ask(self, prompt: str, stdin: TextIO) -> str:
        """Ask on stderr, read one line; EOF raises EOFError like `input()` does."""
        if self.fancy:
            self._err().print(
                self.indent + prompt, style="bold", end=" ", markup=False, highlight=False
            )
        else:
            self.err.write(self.indent + prompt + " ")
        self.err.flush()
        line = stdin.readline()
        if not line:
            raise EOFError
        return line

    def tool_result(self, tool_name: str, status: str, content: str) -> None:
        """A call's result as the human sees it: the first lines, each cut to a sane width.

        The model gets all of it; the console only has to show what happened.
        """
        lines = content.splitlines()
        preview = [_cut(line) for line in lines[:TOOL_OUTPUT_PREVIEW_LINES]]
        if len(lines) > len(preview):
            preview.append(f"… ({len(lines) - len(preview)} more lines sent to the model)")
        if self.fancy:
            from rich.panel import Panel
            from rich.text import Text

            style = "green" if status == "ok" else "red"
            title = f"{tool_name} → {status}"
            panel = Panel(Text("\n".join(preview)), title=Text(title), border_style=style)
            self._err().print(self._padded(panel))
        else:
            self._plain(f"[{tool_name} → {status}]\n" + "\n".join(preview))

    def answer(self, text: str) -> None:
        """The final answer, alone on stdout."""
        if self.fancy and is_terminal(self.out):
            from rich.markdown import Markdown

            self._out().print(Markdown(text))
        else:
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.out.flush()

    # -- plumbing ---------------------------------------------------------------------------

    def _plain(self, text: str) -> None:
        self._write(self._indented(text))

    def _write(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def _indented(self, text: str) -> str:
        if not self.indent:
            return text
        return "\n".join(self.indent + line for line in text.split("\n"))

    def _padded(self, renderable: RenderableType) -> RenderableType:
        """A panel of a nested console, indented as its lines are."""
        if not self.indent:
            return renderable
        from rich.padding import Padding

        return Padding(renderable, (0, 0, 0, len(self.indent)))

    def _err(self) -> RichConsole:
        if self._rich_err is None:
            from rich.console import Console as RichConsole

            # Fancy was decided already (a terminal, or a test that asked for it).
            self._rich_err = RichConsole(file=self.err, stderr=True, force_terminal=True)
        return self._rich_err

    def _out(self) -> RichConsole:
        if self._rich_out is None:
            from rich.console import Console as RichConsole

            self._rich_out = RichConsole(file=self.out)
        return self._rich_out


class Ticking:
    """A spinner whose text ends with the time since it started: `… (turn 2) · 12s`.

    The live display draws it again at every refresh, so the time counts up by
    itself; `timer` is read each time (a test moves it by hand).
    """

    def __init__(self, what: str, timer: Callable[[], float]) -> None:
        self.what = what
        self.timer = timer
        self.started = timer()
        self._spinner: Any = None  # made at the first drawing: rich is imported lazily

    def text(self) -> str:
        return f"{self.what} · {waited(self.timer() - self.started)}"

    def __rich_console__(self, console: RichConsole, options: ConsoleOptions) -> RenderResult:
        from rich.spinner import Spinner
        from rich.text import Text

        if self._spinner is None:
            self._spinner = Spinner("dots")
        # Text, not str: a str is read as markup, and a command's `[/]` made rich raise.
        self._spinner.update(text=Text(self.text()))
        yield self._spinner


def waited(seconds: float) -> str:
    """A time waited as a spinner shows it: `7s`, then `1m05s` from a minute on."""
    whole = max(0, int(seconds))
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


def _cut(line: str) -> str:
    if len(line) <= TOOL_OUTPUT_LINE_CHARS:
        return line
    more = len(line) - TOOL_OUTPUT_LINE_CHARS
    return f"{line[:TOOL_OUTPUT_LINE_CHARS]}… ({more} more characters sent to the model)"


def controlling_terminal() -> TextIO | None:
    """The terminal this process was started from, opened for writing; None if there is none."""
    name = "CONOUT$" if sys.platform == "win32" else "/dev/tty"
    try:
        return open(name, "w", encoding="utf-8", errors="replace")
    except OSError:
        return None


def _shorten(value: Any, limit: int = 80) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return f"{value[: limit - 20]}… ({len(value)} characters)"
    return value


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

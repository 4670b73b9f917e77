"""What the reader sees of a streamed reply: text as it comes, the answer once."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch07.scripted_stream import chunk, text_stream
from chapters.ch07.stream_console import REASONING_LABEL, StreamingConsole
from chapters.ch07.tests.support import ShellAgent, Terminal, err_text, out_text
from shared.console import Console


def test_text_goes_to_stderr_as_it_arrives_and_stdout_gets_exactly_the_answer() -> None:
    agent = ShellAgent([text_stream("Hel", "lo", ".")])
    answer = run_agent("hi", agent.spec)
    agent.console.answer(answer)
    assert out_text(agent.console) == "Hello.\n"  # stdout is not a terminal: as before
    assert "Hello.\n" in err_text(agent.console)


def terminal_console(**options: bool) -> StreamingConsole:
    return StreamingConsole(out=Terminal(), err=Terminal(), fancy=False, **options)


def stream_answer(console: StreamingConsole, *pieces: str) -> None:
    with console.waiting("waiting"):
        for piece in pieces:
            console.text_arrived(piece)


def test_on_a_terminal_the_streamed_answer_is_not_printed_twice() -> None:
    console = terminal_console()
    stream_answer(console, "Hel", "lo.")
    console.answer("Hello.")
    assert out_text(console) == ""
    assert err_text(console).count("Hello.") == 1


def test_on_a_terminal_only_what_a_feature_added_to_the_answer_is_printed() -> None:
    console = terminal_console()
    stream_answer(console, "Hello.")
    console.answer("Hello.\n\n(2 plan items still open)")
    assert out_text(console) == "(2 plan items still open)\n"


def test_with_stderr_redirected_the_terminal_still_gets_the_answer() -> None:
    console = StreamingConsole(out=Terminal(), err=io.StringIO(), fancy=False)
    stream_answer(console, "Hello.")
    console.answer("Hello.")
    assert out_text(console) == "Hello.\n"


def test_reasoning_is_labelled_and_kept_apart_from_the_text() -> None:
    agent = ShellAgent([[chunk({"reasoning_content": "think"}), *text_stream("Answer.")]])
    answer = run_agent("hi", agent.spec)
    assert answer == "Answer."
    assert f"{REASONING_LABEL}think\nAnswer.\n" in err_text(agent.console)


def test_reasoning_is_dimmed_on_a_terminal() -> None:
    console = StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=True)
    with console.waiting("waiting"):
        console.reasoning_arrived("think")
        console.text_arrived("Answer.")
    shown = err_text(console)
    assert "\x1b[2mthink" in shown  # SGR 2: dim
    assert "\x1b[2mAnswer." not in shown


def test_the_spinner_stops_at_the_first_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    @contextmanager
    def spinner(self: Console, what: str) -> Iterator[None]:
        seen.append("spinner on")
        yield
        seen.append("spinner off")

    class Recording(io.StringIO):
        def write(self, text: str) -> int:
            seen.append(f"wrote {text!r}")
            return super().write(text)

    monkeypatch.setattr(Console, "waiting", spinner)
    console = StreamingConsole(out=io.StringIO(), err=Recording(), fancy=False)
    stream_answer(console, "Hel", "lo.")
    assert seen == ["spinner on", "spinner off", "wrote 'Hel'", "wrote 'lo.'", "wrote '\\n'"]


def test_ctrl_c_mid_text_ends_the_line_and_stops_the_spinner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stopped: list[bool] = []

    @contextmanager
    def spinner(self: Console, what: str) -> Iterator[None]:
        try:
            yield
        finally:
            stopped.append(True)

    monkeypatch.setattr(Console, "waiting", spinner)
    console = StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=False)
    with pytest.raises(KeyboardInterrupt), console.waiting("waiting"):
        raise KeyboardInterrupt
    assert stopped == [True]
    with pytest.raises(KeyboardInterrupt), console.waiting("waiting"):
        console.text_arrived("half")
        raise KeyboardInterrupt
    assert err_text(console).endswith("half\n")


def test_text_beside_calls_is_not_repeated_after_it_streamed() -> None:
    console = terminal_console()
    stream_answer(console, "Let me look.")
    console.said_while_calling("Let me look.")
    assert err_text(console).count("Let me look.") == 1


def test_text_beside_calls_that_did_not_stream_is_shown_once() -> None:
    """A reply that arrived whole (--no-stream, or a server that ignored `stream`)."""
    console = terminal_console()
    with console.waiting("waiting"):
        pass
    console.said_while_calling("Let me look.")
    assert "assistant: Let me look.\n" in err_text(console)


def test_with_trace_each_chunk_is_one_line_and_its_text_is_not_echoed_beside_it() -> None:
    console = StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=False, trace=True)
    with console.waiting("waiting"):
        console.chunk_received(1, {"choices": [{"delta": {"content": "Hi"}}]})
        console.text_arrived("Hi")
    lines = err_text(console).splitlines()
    assert lines[-1] == 'chunk 1: {"choices": [{"delta": {"content": "Hi"}}]}'
    assert "Hi" not in [line.strip() for line in lines]


def test_a_nested_console_streams_too_each_line_indented_under_the_parents() -> None:
    parent = StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=False)
    child = parent.nested("explore")
    assert isinstance(child, StreamingConsole)
    with child.waiting("waiting"):
        child.reasoning_arrived("look first")
        child.text_arrived("Found it:\nline 18")
        child.text_arrived(".")
    child.info("done")
    assert err_text(parent) == (
        "  │ … explore · waiting\n"
        f"  │ {REASONING_LABEL}look first\n"
        "  │ Found it:\n  │ line 18.\n"
        "  │ done\n"
    )


def test_on_a_terminal_the_spinner_shows_the_time_waited_until_the_first_piece() -> None:
    """Chapter 1's spinner with its seconds (shared/console.py), in a nested console too."""
    now = [100.0]
    console = StreamingConsole(out=io.StringIO(), err=io.StringIO(), fancy=True)
    console.timer = lambda: now[0]
    inner = console.nested("explore")
    with inner.waiting("waiting"):
        now[0] += 4
        inner.text_arrived("Hi.")
    assert "explore · waiting · 4s" in err_text(console)

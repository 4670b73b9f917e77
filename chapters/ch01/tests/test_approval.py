"""The approval prompt: three lines, then `允许本次调用？[y/N]`; a clear yes approves, a clear
no refuses, anything else is asked again, at most three times in all."""

from __future__ import annotations

import io

import pytest

from chapters.ch01.tests.harness import Harness, plain_console
from shared import approval
from shared.approval import (
    APPROVAL_PROMPT,
    HIDDEN_PROMPT_NOTICE,
    MAX_UNCLEAR_ANSWERS,
    NO_TTY_NOTICE,
    ApprovalRequest,
    TerminalApprover,
)
from shared.console import Console
from shared.scripted import response, tool_call

REQUEST = ApprovalRequest("shell", "execute: runs a program", {"command": "echo 42"})


def ask(answer: str, console: Console | None = None) -> bool:
    console = console or plain_console()
    approver = TerminalApprover(console, stdin=io.StringIO(answer), interactive=True)
    return approver.approve(REQUEST)


def err(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


@pytest.mark.parametrize("answer", ["y\n", "yes\n", "Y\n", " YES \n"])
def test_y_or_yes_approves(answer: str) -> None:
    assert ask(answer) is True


@pytest.mark.parametrize("answer", ["\n", "n\n", "no\n", "yep\n", "ja\n", "y es\n"])
def test_anything_else_denies(answer: str) -> None:
    assert ask(answer) is False


@pytest.mark.parametrize(
    "answer",
    [
        "ok",
        "OK!",
        "okay.",
        "Sure",
        "yes please",
        "Yes, please!",
        "是",
        "好",
        "好。",
        "可以！",
        "行",
        "允许",
        "  y  ",
    ],
)
def test_the_common_yeses_approve(answer: str) -> None:
    assert ask(answer + "\n") is True


@pytest.mark.parametrize(
    "answer", ["\n", "n\n", "No.\n", "nope\n", "不\n", "不行！\n", "n too risky\n"]
)
def test_a_clear_no_denies_at_once_without_asking_again(answer: str) -> None:
    console = plain_console()
    stdin = io.StringIO(answer + "y\n")  # a yes that must not be read
    approver = TerminalApprover(console, stdin=stdin, interactive=True)
    assert approver.approve(REQUEST) is False
    assert stdin.read() == "y\n"
    assert err(console).count(APPROVAL_PROMPT) == 1


def test_an_unclear_answer_is_asked_again_and_the_panel_is_not_shown_again() -> None:
    console = plain_console()
    assert ask("ok go ahead\ny\n", console) is True
    text = err(console)
    assert text.count(APPROVAL_PROMPT) == 2
    assert text.count("echo 42") == 1
    assert "没听懂「ok go ahead」" in text and "y（允许）或 n（拒绝）" in text


def test_after_three_unclear_answers_the_call_is_refused_and_no_more_is_read() -> None:
    console = plain_console()
    stdin = io.StringIO("hmm\nwhat is this\nlater\ny\n")
    approver = TerminalApprover(console, stdin=stdin, interactive=True)
    assert approver.approve(REQUEST) is False
    assert MAX_UNCLEAR_ANSWERS == 3
    assert stdin.read() == "y\n"
    text = err(console)
    assert text.count(APPROVAL_PROMPT) == 3
    assert "3 次都没听懂，按拒绝处理。" in text


def test_shows_tool_reason_and_arguments_then_the_prompt() -> None:
    console = plain_console()
    ask("y\n", console)
    lines = err(console).splitlines()
    assert lines[0].endswith("shell")
    assert "execute: runs a program" in lines[1]
    assert '{"command": "echo 42"}' in lines[2]
    assert lines[3].startswith(APPROVAL_PROMPT) and APPROVAL_PROMPT == "允许本次调用？[y/N]"


def test_end_of_input_denies() -> None:
    assert ask("") is False


class Interrupting(io.StringIO):
    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise KeyboardInterrupt


def test_ctrl_c_at_the_prompt_is_not_an_answer_it_stops_the_run() -> None:
    approver = TerminalApprover(plain_console(), stdin=Interrupting(), interactive=True)
    with pytest.raises(KeyboardInterrupt):
        approver.approve(REQUEST)


def test_ctrl_c_at_the_prompt_sends_no_further_request() -> None:
    h = Harness(
        steps=[response(None, [tool_call("c1", "shell", '{"command": "ls"}')]), response("ok")]
    )
    h.approver = TerminalApprover(h.console, stdin=Interrupting(), interactive=True)  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        h.run()
    assert len(h.model.requests) == 1 and h.runner.commands == []


def test_no_terminal_denies_without_reading() -> None:
    console = plain_console()
    stdin = io.StringIO("y\n")  # would approve if it were read
    approver = TerminalApprover(console, stdin=stdin)  # StringIO is not a TTY
    assert approver.approve(REQUEST) is False
    assert NO_TTY_NOTICE in err(console) and NO_TTY_NOTICE == "无交互输入，默认拒绝。"
    assert stdin.read() == "y\n"


def test_no_terminal_in_the_loop_denies_and_the_model_is_told() -> None:
    h = Harness(
        steps=[response(None, [tool_call("c1", "shell", '{"command": "ls"}')]), response("ok")]
    )
    h.approver = TerminalApprover(h.console, stdin=io.StringIO("y\n"))  # type: ignore[assignment]
    assert h.run() == "ok"
    assert h.runner.commands == []
    assert h.tool_messages()[0].content.startswith("denied")
    assert NO_TTY_NOTICE in h.console_text()


# -- asked where the person is ---------------------------------------------------------------


def only_stdin_is_a_terminal(monkeypatch: pytest.MonkeyPatch, stdin: io.StringIO) -> None:
    """stdin is a terminal, stderr is redirected (say `--trace 2>trace.log`)."""
    monkeypatch.setattr(approval, "is_terminal", lambda stream: stream is stdin)


def test_with_stderr_redirected_the_question_goes_to_the_controlling_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdin, terminal = io.StringIO("y\n"), io.StringIO()
    only_stdin_is_a_terminal(monkeypatch, stdin)
    monkeypatch.setattr(approval, "controlling_terminal", lambda: terminal)
    console = plain_console()
    assert TerminalApprover(console, stdin=stdin).approve(REQUEST) is True
    assert APPROVAL_PROMPT in terminal.getvalue() and "echo 42" in terminal.getvalue()
    assert APPROVAL_PROMPT not in err(console)  # not into the redirected stderr


def test_with_stderr_redirected_and_no_terminal_to_ask_on_the_call_is_denied_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdin = io.StringIO("y\n")  # would approve if it were read
    only_stdin_is_a_terminal(monkeypatch, stdin)
    monkeypatch.setattr(approval, "controlling_terminal", lambda: None)
    console = plain_console()
    assert TerminalApprover(console, stdin=stdin).approve(REQUEST) is False
    assert HIDDEN_PROMPT_NOTICE in err(console)
    assert stdin.read() == "y\n"

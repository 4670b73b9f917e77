"""Chapter 3's prompt `允许本次调用？[y/a/N]` at a terminal: a clear yes, `a`, a clear no
(with words for the model after `n`), and anything else asked again, at most three times."""

from __future__ import annotations

import io

import pytest

from chapters.ch01.tests.harness import plain_console, printed
from chapters.ch03.asking import ASK_PROMPT, TerminalAsker
from shared.approval import ApprovalRequest
from shared.console import Console

REQUEST = ApprovalRequest("shell", "execute · policy: no rule", {"command": "git push"})


def asker(typed: str, console: Console | None = None) -> tuple[TerminalAsker, io.StringIO]:
    stdin = io.StringIO(typed)
    return TerminalAsker(console or plain_console(), stdin=stdin, interactive=True), stdin


@pytest.mark.parametrize(
    "typed", ["y", "YES", "ok", "Okay!", "sure", "yes please", "是", "好", "可以。", "行", "允许"]
)
def test_the_common_yeses_approve_this_once(typed: str) -> None:
    terminal, _ = asker(typed + "\n")
    answer = terminal.ask(REQUEST)
    assert (answer.approved, answer.always, answer.how) == (True, False, "yes")


@pytest.mark.parametrize("typed", ["a", "always", "A."])
def test_a_is_always(typed: str) -> None:
    terminal, _ = asker(typed + "\n")
    answer = terminal.ask(REQUEST)
    assert (answer.approved, answer.always) == (True, True)


@pytest.mark.parametrize(
    ("typed", "feedback"),
    [
        ("n", ""),
        ("", ""),
        ("不", ""),
        ("n use git diff", "use git diff"),
        ("不，先跑测试", "先跑测试"),
    ],
)
def test_a_clear_no_refuses_at_once_and_keeps_the_words_after_it(typed: str, feedback: str) -> None:
    terminal, stdin = asker(typed + "\ny\n")
    answer = terminal.ask(REQUEST)
    assert (answer.approved, answer.feedback, answer.typed) == (False, feedback, True)
    assert stdin.read() == "y\n"  # not asked again


def test_words_that_are_neither_yes_nor_no_are_asked_about_again() -> None:
    console = plain_console()
    terminal, _ = asker("go on then\nyes please\n", console)
    answer = terminal.ask(REQUEST)
    assert answer.approved and answer.how == "yes"
    text = printed(console)
    assert text.count(ASK_PROMPT) == 2 and text.count("git push") == 1
    assert "没听懂「go on then」" in text and "n（拒绝" in text


def test_three_unclear_answers_are_a_no_without_words_for_the_model() -> None:
    console = plain_console()
    terminal, stdin = asker("hmm\nwhat\nlater\ny\n", console)
    answer = terminal.ask(REQUEST)
    assert (answer.approved, answer.feedback, answer.typed) == (False, "", True)
    assert answer.how == "no (3 unclear answers)"
    assert stdin.read() == "y\n"
    assert printed(console).count(ASK_PROMPT) == 3


def test_end_of_input_after_an_unclear_answer_is_no_answer() -> None:
    terminal, _ = asker("hmm\n")
    answer = terminal.ask(REQUEST)
    assert (answer.approved, answer.how, answer.typed) == (False, "no answer", False)

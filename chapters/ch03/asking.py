"""The human's answer when the policy says ask: `允许本次调用？[y/a/N]`.

    y        yes, this once (or ok, sure, yes please, 是, 好, 可以, ... as in chapter 1)
    a        always, for the rest of this run (an exact allow rule is added and shown)
    n        no;  n <text>  no, and the text goes back to the model (不，<text> too)
    other    asked again, with what the answers are; after three answers that are
             neither yes, a nor no, the call is refused (with no text for the model)

No terminal, end of input or Ctrl-C: no, as in chapter 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol, TextIO

from shared.approval import (
    MAX_UNCLEAR_ANSWERS,
    NO_ANSWERS,
    YES_ANSWERS,
    ApprovalRequest,
    TerminalApprover,
    first_word,
    normalized,
)
from shared.console import Console

ASK_PROMPT = "允许本次调用？[y/a/N]"
ASK_HINT = "请回答 y（允许）、a（本次运行都允许）或 n（拒绝；n 后面可以写给模型的话）。"
ALWAYS_ANSWERS = frozenset({"a", "always"})
UNCLEAR = "unclear"  # the `how` of an answer that is neither yes, always nor no
NO_TERMINAL, NO_ANSWER = "no terminal", "no answer"  # how the audit records that nobody answered


@dataclass(frozen=True)
class HumanAnswer:
    approved: bool
    always: bool = False
    feedback: str = ""  # what the human told the model along with a "no"
    how: str = ""  # for the audit: "yes", "always", "no", "no terminal", ...
    typed: bool = False  # the human typed it: a no of theirs holds for the run


def parse_answer(text: str) -> HumanAnswer:
    """What the human typed, as an answer; an unclear one is a no, with `how` UNCLEAR."""
    said = normalized(text)
    if said in YES_ANSWERS:
        return HumanAnswer(approved=True, how="yes", typed=True)
    if said in ALWAYS_ANSWERS:
        return HumanAnswer(approved=True, always=True, how="always", typed=True)
    word, rest = first_word(text)
    if said in NO_ANSWERS or word in NO_ANSWERS - {""}:
        feedback = rest if word in NO_ANSWERS else ""
        how = "no" + (f": {feedback}" if feedback else "")
        return HumanAnswer(approved=False, feedback=feedback, how=how, typed=True)
    return HumanAnswer(approved=False, how=UNCLEAR, typed=True)


class Asker(Protocol):
    def ask(self, request: ApprovalRequest) -> HumanAnswer: ...


class TerminalAsker:
    """Chapter 1's terminal prompt, asking `[y/a/N]` and reading the answer's words."""

    def __init__(
        self, console: Console, *, stdin: TextIO | None = None, interactive: bool | None = None
    ) -> None:
        self.terminal = TerminalApprover(console, stdin=stdin, interactive=interactive)

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        text = self.terminal.answer(request, ASK_PROMPT, understood=_understood, hint=ASK_HINT)
        if text is None:
            how = NO_ANSWER if self.terminal.interactive else NO_TERMINAL
            return HumanAnswer(approved=False, how=how)
        answer = parse_answer(text)
        if answer.how == UNCLEAR:  # asked as often as the bound allows
            return replace(answer, how=f"no ({MAX_UNCLEAR_ANSWERS} unclear answers)")
        return answer


def _understood(text: str) -> bool:
    return parse_answer(text).how != UNCLEAR


@dataclass
class ScriptedAsker:
    """Answers with typed text from a list, parsed like the terminal's; records requests.

    It answers once per request: an unclear text is the no the terminal ends with.
    """

    answers: list[str]
    requests: list[ApprovalRequest] = field(default_factory=list)

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"ScriptedAsker was not told how to answer {request}")
        return parse_answer(self.answers.pop(0))

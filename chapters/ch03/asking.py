"""The human's answer when the policy says ask: `允许本次调用? [y/a/N]`.

    y        yes, this once
    a        always, for the rest of this run (an exact allow rule is added and shown)
    n        no;  n <text>  no, and the text goes back to the model
    other    no (only y/yes and a/always approve); any words typed go back to the model

No terminal, end of input or Ctrl-C: no, as in chapter 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TextIO

from shared.approval import ApprovalRequest, TerminalApprover
from shared.console import Console

ASK_PROMPT = "允许本次调用? [y/a/N]"
NO_TERMINAL, NO_ANSWER = "no terminal", "no answer"  # how the audit records that nobody answered


@dataclass(frozen=True)
class HumanAnswer:
    approved: bool
    always: bool = False
    feedback: str = ""  # what the human told the model along with a "no"
    how: str = ""  # for the audit: "yes", "always", "no", "no terminal", ...


def parse_answer(text: str) -> HumanAnswer:
    head, _, rest = text.strip().partition(" ")
    word = head.lower().rstrip(",.:;")
    if word in ("y", "yes") and not rest.strip():
        return HumanAnswer(approved=True, how="yes")
    if word in ("a", "always") and not rest.strip():
        return HumanAnswer(approved=True, always=True, how="always")
    feedback = rest.strip() if word in ("n", "no") else text.strip()
    return HumanAnswer(
        approved=False, feedback=feedback, how="no" + (f": {feedback}" if feedback else "")
    )


class Asker(Protocol):
    def ask(self, request: ApprovalRequest) -> HumanAnswer: ...


class TerminalAsker:
    """Chapter 1's terminal prompt, asking `[y/a/N]` and reading the answer's words."""

    def __init__(
        self, console: Console, *, stdin: TextIO | None = None, interactive: bool | None = None
    ) -> None:
        self.terminal = TerminalApprover(console, stdin=stdin, interactive=interactive)

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        text = self.terminal.answer(request, ASK_PROMPT)
        if text is None:
            how = NO_ANSWER if self.terminal.interactive else NO_TERMINAL
            return HumanAnswer(approved=False, how=how)
        return parse_answer(text)


@dataclass
class ScriptedAsker:
    """Answers with typed text from a list, parsed like the terminal's; records requests."""

    answers: list[str]
    requests: list[ApprovalRequest] = field(default_factory=list)

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"ScriptedAsker was not told how to answer {request}")
        return parse_answer(self.answers.pop(0))

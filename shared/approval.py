"""The human in the loop: asks before a tool with a side effect runs.

The approver is an object handed to the loop, never a global `input()` call
buried in it: the CLI passes a `TerminalApprover`, a test passes one that answers from a
list and records what it was asked.

Every doubt resolves to "no": no terminal, end of input. A clear yes (y, yes,
ok, okay, sure, yes please, 是, 好, 可以, 行, 允许; in any case, with punctuation
after it) approves; a clear no (Enter alone, n, no, nope, 不, 否, 不行, 不要,
不可以, 拒绝, or a line starting with one of them) refuses; anything else is
asked again, and after three answers that are neither, the call is refused. A
denied call is reported to the model as data. Ctrl-C at the prompt is not an
answer: it stops the whole run (exit 130).

The question is asked where the person is. When stderr is redirected (say
`--trace 2>trace.log`) but stdin is a terminal, the panel and the prompt go
to the controlling terminal; if there is none, nobody can see what they would
approve, so the call is denied as without a terminal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from shared.console import Console, controlling_terminal, is_terminal

APPROVAL_PROMPT = "允许本次调用？[y/N]"
NO_TTY_NOTICE = "无交互输入，默认拒绝。"
HIDDEN_PROMPT_NOTICE = (
    "stderr is not a terminal and there is no controlling terminal to ask on, "
    "so nobody could see the call: denied."
)
YES_ANSWERS = frozenset(
    {"y", "yes", "ok", "okay", "sure", "yes please", "是", "好", "可以", "行", "允许"}
)
NO_ANSWERS = frozenset({"", "n", "no", "nope", "不", "否", "不行", "不要", "不可以", "拒绝"})
MAX_UNCLEAR_ANSWERS = 3  # answers that are neither yes nor no; then the call is refused
APPROVAL_HINT = "请回答 y（允许）或 n（拒绝）；yes、ok、好、可以 也算允许。"
_PUNCTUATION = re.compile(r"[\W_]+")  # any run of what is not a letter or a digit
_FIRST_WORD = re.compile(r"\s*(\w*)[\W_]*(.*)", re.S)


def normalized(answer: str) -> str:
    """An answer as it is compared: lower case, punctuation and extra spaces gone."""
    return " ".join(_PUNCTUATION.sub(" ", answer.lower()).split())


def first_word(answer: str) -> tuple[str, str]:
    """The answer's first word, normalized, and the rest as it was typed: `n use X`."""
    found = _FIRST_WORD.match(answer.strip())
    assert found is not None  # the pattern matches any text
    return found[1].lower(), found[2].strip()


def yes_or_no(answer: str) -> bool | None:
    """True for a clear yes, False for a clear no, None for an answer that is neither."""
    said = normalized(answer)
    if said in YES_ANSWERS:
        return True
    if said in NO_ANSWERS or first_word(answer)[0] in NO_ANSWERS - {""}:
        return False
    return None


@dataclass(frozen=True)
class ApprovalRequest:
    tool_name: str
    reason: str
    arguments: Mapping[str, Any]
    preview: str | None = None  # e.g. the unified diff of a write: approve a change, not a blob
    agent: str | None = None  # the agent that asks, when it is not the one the human started


class Approver(Protocol):
    def approve(self, request: ApprovalRequest) -> bool: ...


class TerminalApprover:
    """Shows the request and asks `允许本次调用？[y/N]`; a clear yes approves."""

    def __init__(
        self,
        console: Console,
        *,
        stdin: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        """`interactive` None: decide from the terminal (tests pass True or False)."""
        self.console = console  # where notices go
        self.asking = console  # where the panel and the prompt go
        self.stdin = stdin or sys.stdin
        self.hidden = False  # stdin is a terminal, but the question could not be shown
        if interactive is None:
            interactive = is_terminal(self.stdin)
            if interactive and not is_terminal(console.err):
                terminal = controlling_terminal()
                if terminal is None:
                    interactive, self.hidden = False, True
                else:
                    self.asking = Console(out=terminal, err=terminal)
        self.interactive = interactive

    def approve(self, request: ApprovalRequest) -> bool:
        def understood(answer: str) -> bool:
            return yes_or_no(answer) is not None

        answer = self.answer(request, APPROVAL_PROMPT, understood=understood)
        approved = answer is not None and yes_or_no(answer) is True
        if answer is not None and not approved:
            self.asking.notice("已拒绝 denied.")
        return approved

    def answer(
        self,
        request: ApprovalRequest,
        prompt: str,
        *,
        understood: Callable[[str], bool] | None = None,
        hint: str = APPROVAL_HINT,
    ) -> str | None:
        """Show the request, ask `prompt`, read a line; None when nobody can answer.

        A line that `understood` does not accept is asked about again, with
        `hint`, up to `MAX_UNCLEAR_ANSWERS` lines in all; then the last one is
        returned, for the caller to read as the refusal it is. Nobody can answer
        without a terminal or at end of input. Ctrl-C is not an answer:
        `KeyboardInterrupt` goes on up and ends the run. Other questions
        (`[y/a/N]`, say) are asked through this same method.
        """
        if self.hidden:
            self.console.notice(HIDDEN_PROMPT_NOTICE)
            return None
        self.asking.approval_request(
            request.tool_name, request.reason, request.arguments, request.preview, request.agent
        )
        if not self.interactive:
            self.asking.notice(NO_TTY_NOTICE)
            return None
        line = ""
        for asked in range(1, MAX_UNCLEAR_ANSWERS + 1):
            try:
                line = self.asking.ask(prompt, self.stdin)
            except EOFError:
                self.asking.notice("\n已拒绝 (no answer).")
                return None
            if understood is None or understood(line):
                return line
            left = MAX_UNCLEAR_ANSWERS - asked
            if left:
                self.asking.notice(
                    f"没听懂「{line.strip()}」。{hint}（再有 {left} 次听不懂就拒绝）"
                )
        self.asking.notice(f"{MAX_UNCLEAR_ANSWERS} 次都没听懂，按拒绝处理。")
        return line

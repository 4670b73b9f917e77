"""The human in the loop: asks before a tool with a side effect runs.

The approver is an object handed to the loop, never a global `input()` call
buried in it: the CLI passes a `TerminalApprover`, tests pass a
`ScriptedApprover` that answers from a list and records what it was asked.

Every doubt resolves to "no": no terminal, end of input, an answer other
than y/yes. A denied call is reported to the model as data. Ctrl-C at the
prompt is not an answer: it stops the whole run (exit 130).

The question is asked where the person is. When stderr is redirected (say
`--trace 2>trace.log`) but stdin is a terminal, the panel and the prompt go
to the controlling terminal; if there is none, nobody can see what they would
approve, so the call is denied as without a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from shared.console import Console, controlling_terminal, is_terminal

APPROVAL_PROMPT = "允许本次调用? [y/N]"
NO_TTY_NOTICE = "无交互输入,默认拒绝。"
HIDDEN_PROMPT_NOTICE = (
    "stderr is not a terminal and there is no controlling terminal to ask on, "
    "so nobody could see the call: denied."
)
YES_ANSWERS = frozenset({"y", "yes"})


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
    """Shows the request and asks `允许本次调用? [y/N]`; only y/yes approves."""

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
        answer = self.answer(request, APPROVAL_PROMPT)
        approved = answer is not None and answer.strip().lower() in YES_ANSWERS
        if answer is not None and not approved:
            self.asking.notice("已拒绝 denied.")
        return approved

    def answer(self, request: ApprovalRequest, prompt: str) -> str | None:
        """Show the request, ask `prompt`, read one line; None when nobody can answer.

        Nobody can answer without a terminal or at end of input. Ctrl-C is not
        an answer: `KeyboardInterrupt` goes on up and ends the run. Other
        questions (`[y/a/N]`, say) are asked through this same method.
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
        try:
            return self.asking.ask(prompt, self.stdin)
        except EOFError:
            self.asking.notice("\n已拒绝 (no answer).")
            return None


@dataclass
class ScriptedApprover:
    """Answers from a list, in order, and records every request it saw."""

    answers: list[bool]
    requests: list[ApprovalRequest] = field(default_factory=list)

    @classmethod
    def always(cls, answer: bool, times: int = 1000) -> ScriptedApprover:
        return cls([answer] * times)

    def approve(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"ScriptedApprover was not told how to answer {request}")
        return self.answers.pop(0)

"""Chapter 4's loop: chapter 1's loop with two more seams, shown whole again.

Two hook events belong to the loop itself rather than to one tool call:
UserPromptSubmit runs before the prompt enters the history (it may add context
or block), and Stop runs when the model stops calling tools (it may refuse the
stop; its reason goes back to the model as a user message and the loop goes
on). Refusals are bounded twice: by max_turns, and by `max_stop_refusals` in a
row, so a Stop hook cannot keep the agent running forever.
"""

from __future__ import annotations

from chapters.ch01.loop import DEFAULT_MAX_TURNS, CallHandler, final_answer
from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import Decision
from chapters.ch04.hooks import HookEvent, Hooks
from shared.completion import ModelClient, ask_model, check_finish_reason
from shared.console import Console
from shared.contract import ContractChecker
from shared.errors import AgentLimitError, HookBlockedError, StopRefusedError
from shared.messages import Message, SystemMessage, ToolMessage, UserMessage
from shared.tools import ToolRegistry

MAX_STOP_REFUSALS = 3


def run_agent(
    prompt: str,
    *,
    model: ModelClient,
    tools: ToolRegistry,
    handle_call: CallHandler,
    hooks: Hooks,
    workspace: Workspace,
    console: Console,
    system_prompt: str,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_stop_refusals: int = MAX_STOP_REFUSALS,
    history: list[Message] | None = None,
) -> str:
    """Chapter 1's loop, plus UserPromptSubmit before it and Stop at its exit."""
    history = [] if history is None else history
    if not history:
        history.append(SystemMessage(content=system_prompt))
    event = {"workspace": str(workspace.root), "prompt": prompt}
    submitted = hooks.run(
        HookEvent.USER_PROMPT_SUBMIT, {"event": HookEvent.USER_PROMPT_SUBMIT, **event}
    )
    if submitted.decision is Decision.DENY:
        raise HookBlockedError(f"a UserPromptSubmit hook blocked the prompt: {submitted.reason}")
    history.append(UserMessage(content=prompt))  # 1. the prompt enters the history
    if submitted.context:
        history.append(UserMessage(content=f"[UserPromptSubmit hook] {submitted.context}"))
    contract, refusals = ContractChecker(), 0

    for turn in range(1, max_turns + 1):
        snapshot = tools.snapshot()  # 2.
        reply = ask_model(model, history, snapshot, console, turn, contract)
        check_finish_reason(reply)
        history.append(reply.message)  # 3.

        if not reply.message.tool_calls:  # the model wants to stop: may it?
            answer = final_answer(reply.message)
            stop = hooks.run(HookEvent.STOP, {"event": HookEvent.STOP, **event, "answer": answer})
            if stop.decision is not Decision.DENY:
                return answer
            if refusals == max_stop_refusals:
                raise StopRefusedError(f"the Stop hook refused {refusals + 1} times: {stop.reason}")
            refusals += 1
            console.notice(f"Stop hook refused the stop: {stop.reason}")
            more = f"\n{stop.context}" if stop.context else ""
            history.append(UserMessage(content=f"[Stop hook] Do not stop yet: {stop.reason}{more}"))
            continue

        refusals = 0
        for call in reply.message.tool_calls:  # 4. PreToolUse, policy, tool, PostToolUse
            result = handle_call(call, snapshot)
            history.append(ToolMessage(tool_call_id=call.id, content=result.content))
        # 5. back to step 2

    raise AgentLimitError(max_turns)

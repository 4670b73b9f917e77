"""Chapter 5's loop: chapter 4's loop with a plan in it, shown whole again.

Three steps are new. Before each request, a plan that has open items and has
not been updated for `plan.remind_after` replies adds a reminder to the history
(a user-role message marked as coming from the harness). After each reply, the
plan counts it. And when the model stops with items still open, the answer
says so; a run that ends out of turns says it on the console. `todo_write`
itself is an ordinary tool, run in step 4 like the others.
"""

from __future__ import annotations

from chapters.ch01.loop import DEFAULT_MAX_TURNS, CallHandler, final_answer
from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import Decision
from chapters.ch04.hooks import HookEvent, Hooks
from chapters.ch04.loop import MAX_STOP_REFUSALS
from chapters.ch05.todo import TodoPlan
from shared.completion import ModelClient, ask_model, check_finish_reason
from shared.console import Console
from shared.contract import ContractChecker
from shared.errors import AgentLimitError, HookBlockedError, StopRefusedError
from shared.messages import Message, SystemMessage, ToolMessage, UserMessage
from shared.tools import ToolRegistry


def run_agent(
    prompt: str,
    *,
    model: ModelClient,
    tools: ToolRegistry,
    handle_call: CallHandler,
    hooks: Hooks,
    workspace: Workspace,
    plan: TodoPlan,
    console: Console,
    system_prompt: str,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_stop_refusals: int = MAX_STOP_REFUSALS,
    history: list[Message] | None = None,
) -> str:
    """Chapter 4's loop, plus a reminder when the plan goes stale and a note if it is left open."""
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
        if reminder := plan.reminder():  # open items, no todo_write for a while: remind
            console.notice(f"harness: reminding the model of its plan ({plan.summary()})")
            history.append(UserMessage(content=reminder))
        snapshot = tools.snapshot()  # 2.
        reply = ask_model(model, history, snapshot, console, turn, contract)
        check_finish_reason(reply)
        history.append(reply.message)  # 3.
        plan.count_reply()  # an accepted todo_write in step 4 sets the count back to 0

        if not reply.message.tool_calls:  # the model wants to stop: may it?
            answer = final_answer(reply.message)
            stop = hooks.run(
                HookEvent.STOP,
                {"event": HookEvent.STOP, **event, "answer": answer, "plan": plan.as_json()},
            )
            if stop.decision is not Decision.DENY:
                left_open = plan.left_open()  # the answer says what was not finished
                return f"{answer.rstrip()}\n\n{left_open}" if left_open else answer
            if refusals == max_stop_refusals:
                raise StopRefusedError(f"the Stop hook refused {refusals + 1} times: {stop.reason}")
            refusals += 1
            console.notice(f"Stop hook refused the stop: {stop.reason}")
            more = f"\n{stop.context}" if stop.context else ""
            history.append(UserMessage(content=f"[Stop hook] Do not stop yet: {stop.reason}{more}"))
            continue

        refusals = 0
        for call in reply.message.tool_calls:  # 4. todo_write runs here like any tool
            result = handle_call(call, snapshot)
            history.append(ToolMessage(tool_call_id=call.id, content=result.content))
        # 5. back to step 2

    if left_open := plan.left_open():  # out of turns: say where the plan stood
        console.notice(left_open)
    raise AgentLimitError(max_turns)

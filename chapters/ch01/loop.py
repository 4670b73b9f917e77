"""Chapter 1: the agent loop, the only thing between a model and the real world.

Read `run_agent` beside docs/ch01-agent-loop.md, "五个步骤": the numbered
comments are the five steps of the text. The loop succeeds in one way only, a
reply without tool calls that has text; every other way out is a named error
from shared/errors.py (an empty reply, a finish_reason it cannot continue from,
a broken message contract, a provider error, or `AgentLimitError`).

This is the course's one loop. Everything a run needs comes in one
`AgentSpec` (shared/agent.py); the lines that call `run.` are its named
moments, where features plug in. With no features, as here, they do nothing.
"""

from __future__ import annotations

from shared.agent import AgentSpec, KeepGoing, Run
from shared.completion import ask_model
from shared.errors import AgentLimitError, EmptyReplyError
from shared.messages import AssistantMessage, Message, ToolMessage


def run_agent(prompt: str, agent: AgentSpec, *, history: list[Message] | None = None) -> str:
    """Run the loop until the model answers in text; return that text."""
    run = Run(agent, prompt, [] if history is None else history)  # pass a list to watch it
    with run.ending():  # however the run ends, the features hear of it
        run.start()  # 1. the prompt enters the history
        for turn in range(1, agent.max_turns + 1):  # max_turns counts model requests
            run.turn = turn
            run.before_request()
            snapshot = agent.tools.snapshot()  # 2. freeze the tools this request may see and use
            reply = ask_model(agent.model, run.history, snapshot, agent.console, turn, run.contract)
            reply = agent.check_reply(run, reply)  # length, content_filter, unknown: an error
            run.add(reply.message)  # 3. the assistant message, as it came
            run.after_reply(reply)

            if not reply.message.tool_calls:  # the only exit: no tool calls...
                stop = run.may_stop(final_answer(reply.message))
                if not isinstance(stop, KeepGoing):
                    return stop
                run.add(stop.message)  # ...unless a feature sends the model back to work
                continue

            for call, result in agent.calls.run(reply.message.tool_calls, snapshot, run):
                run.add(ToolMessage(tool_call_id=call.id, content=result.content))  # 4. one each
            # 5. the results are in the history; the `for` goes back to step 2

        raise AgentLimitError(agent.max_turns)


def final_answer(message: AssistantMessage) -> str:
    """Text only: the answer. Neither text nor tool calls: an explicit failure."""
    if message.content is None or not message.content.strip():
        raise EmptyReplyError()
    return message.content

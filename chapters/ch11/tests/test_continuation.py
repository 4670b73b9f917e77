"""A reply cut at the output limit: text is continued and joined, a tool call never runs, and
both count against one bound."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from chapters.ch01.loop import run_agent
from chapters.ch07.parallel import ParallelCallPipeline
from chapters.ch11.continuation import (
    ANSWER_PROMPT,
    CONTINUE_PROMPT,
    ContinuationsExhaustedError,
    ContinueAfterLength,
)
from chapters.ch11.guarded_calls import GuardedCalls
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.tests.support import printed, recording_console
from shared.agent import AgentSpec, Run
from shared.calls import CallPipeline
from shared.completion import parse_completion
from shared.errors import ContentFilterError, OutputTruncatedError
from shared.messages import AssistantMessage, Message, ToolMessage
from shared.scripted import ScriptedModel, Step, response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

CUT = "length"


class WriteFile(BaseModel):
    path: str
    content: str


class Recorder:
    """A write tool that records every call that really ran."""

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    def tools(self) -> ToolRegistry:
        def write(arguments: WriteFile) -> ToolResult:
            self.ran.append(arguments.model_dump())
            return ToolResult.success(f"ok: wrote {arguments.path}")

        return ToolRegistry(
            [
                PydanticTool(
                    name="write_file",
                    description="Write a file.",
                    args_model=WriteFile,
                    side_effect=SideEffect.WRITE,
                    run=write,
                    concurrency_safe=True,  # so chapter 7's pipeline would run two side by side
                )
            ]
        )


def write(call_id: str, path: str = "a.txt", content: str = "hello") -> dict[str, Any]:
    return tool_call(call_id, "write_file", json.dumps({"path": path, "content": content}))


class Agent:
    def __init__(
        self,
        steps: Sequence[Step],
        *,
        max_continuations: int = 3,
        guarded: bool = True,
        parallel: bool = False,
    ) -> None:
        self.model = ScriptedModel(steps)
        self.tool = Recorder()
        self.log = RecoveryLog()
        self.console = recording_console()
        check = ContinueAfterLength(max_continuations, log=self.log)
        inner = ParallelCallPipeline() if parallel else CallPipeline()
        self.spec = AgentSpec(
            model=self.model,
            tools=self.tool.tools(),
            calls=GuardedCalls(inner=inner, cut_replies=check) if guarded else inner,
            console=self.console,
            system_prompt="test",
            check_reply=check,
        )
        self.history: list[Message] = []

    def run(self, prompt: str = "go") -> str:
        return run_agent(prompt, self.spec, history=self.history)

    def results(self) -> list[str]:
        return [m.content for m in self.history if isinstance(m, ToolMessage)]


# --- text cut at the limit ------------------------------------------------------------------------


def test_a_cut_answer_is_continued_and_joined_into_one_message() -> None:
    agent = Agent([
        response("The three steps are: one, tw", finish_reason=CUT),
        response("o, and three.", finish_reason="stop"),
    ])  # fmt: skip
    assert agent.run() == "The three steps are: one, two, and three."
    assistants = [m for m in agent.history if isinstance(m, AssistantMessage)]
    assert assistants == [AssistantMessage(content="The three steps are: one, two, and three.")]
    assert agent.log.continuations == 1


def test_the_continuation_request_is_the_partial_reply_then_a_request_to_go_on() -> None:
    agent = Agent([response("Part one", finish_reason=CUT), response(" and two.")])
    agent.run("explain")
    first, second = agent.model.requests
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][len(first["messages"]) :] == [
        {"role": "assistant", "content": "Part one"},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    assert second["tools"] == first["tools"]  # the same request otherwise: the cache still fits


def test_each_continuation_sends_everything_so_far_as_one_assistant_message() -> None:
    agent = Agent([
        response("a", finish_reason=CUT),
        response("b", finish_reason=CUT),
        response("c", finish_reason=CUT),
        response("d"),
    ])  # fmt: skip
    assert agent.run() == "abcd"
    last = agent.model.requests[-1]["messages"]
    assert last[-2:] == [
        {"role": "assistant", "content": "abc"},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]


def test_after_max_continuations_the_run_ends_with_chapter_1s_error() -> None:
    agent = Agent([response(str(n), finish_reason=CUT) for n in range(5)])
    with pytest.raises(ContinuationsExhaustedError) as caught:
        agent.run()
    assert isinstance(caught.value, OutputTruncatedError)
    assert caught.value.finish_reason == "length"
    assert "after 3 continuations" in str(caught.value)
    assert "--max-continuations" in str(caught.value)
    assert len(agent.model.requests) == 4  # the reply and three continuations, not one more


def test_zero_continuations_is_chapter_1s_behaviour() -> None:
    agent = Agent([response("cut", finish_reason=CUT)], max_continuations=0)
    with pytest.raises(OutputTruncatedError):
        agent.run()
    assert len(agent.model.requests) == 1


def test_a_cut_with_no_text_at_all_asks_for_an_answer_not_a_continuation() -> None:
    agent = Agent([response(None, finish_reason=CUT), response("Short answer.")])
    assert agent.run() == "Short answer."
    assert agent.model.requests[1]["messages"][-1] == {"role": "user", "content": ANSWER_PROMPT}
    assert agent.model.requests[1]["messages"][-2]["role"] == "user"  # no empty assistant


def test_every_continuation_is_shown() -> None:
    agent = Agent([response("a", finish_reason=CUT), response("b")])
    agent.run()
    assert "asking the model to continue (1 of 3)" in printed(agent.console)


def test_other_finish_reasons_are_still_chapter_1s() -> None:
    agent = Agent([response("no", finish_reason="content_filter")])
    with pytest.raises(ContentFilterError):
        agent.run()


# --- a tool call cut at the limit -------------------------------------------------------------


def test_a_cut_tool_call_never_runs_even_when_its_json_looks_complete() -> None:
    agent = Agent([
        response(None, [write("c1")], finish_reason=CUT),  # valid, complete-looking JSON
        response(None, [write("c2", content="hel")]),
        response("done"),
    ])  # fmt: skip
    assert agent.run() == "done"
    assert agent.tool.ran == [{"path": "a.txt", "content": "hel"}]  # only c2 ran
    cut = agent.results()[0]
    assert cut.startswith("cut_off: your reply reached the output token limit")
    assert "arguments are cut off, even if they look complete; it did not run" in cut
    assert "smaller pieces" in cut and "in parts" in cut


def test_no_call_of_a_cut_reply_runs_and_each_gets_its_own_answer() -> None:
    agent = Agent(
        [response(None, [write("c1"), write("c2", "b.txt")], finish_reason=CUT), response("ok")],
        parallel=True,
    )
    agent.run()
    assert agent.tool.ran == []
    first, last = agent.results()
    assert "after this write_file call, while writing a later one" in first
    assert "while writing this write_file call" in last
    ids = [m.tool_call_id for m in agent.history if isinstance(m, ToolMessage)]
    assert ids == ["c1", "c2"]  # one result each, in call order
    assert "[write_file → cut_off]" in printed(agent.console)


def test_a_cut_tool_call_whose_json_is_broken_gets_the_same_answer() -> None:
    agent = Agent([
        response(None, [tool_call("c1", "write_file", '{"path": "a.txt", "content": "hel')],
                 finish_reason=CUT),
        response("ok"),
    ])  # fmt: skip
    agent.run()
    assert agent.results()[0].startswith("cut_off:")  # not chapter 1's invalid_arguments


def test_cut_tool_calls_count_against_the_same_bound() -> None:
    agent = Agent([response(None, [write(f"c{n}")], finish_reason=CUT) for n in range(5)])
    with pytest.raises(ContinuationsExhaustedError) as caught:
        agent.run()
    assert "4 times in a row, the last time in a tool call" in str(caught.value)
    assert len(agent.model.requests) == 4
    assert agent.tool.ran == []
    assert agent.log.cut_replies == 3


def test_a_continuation_that_ends_in_a_cut_call_counts_twice() -> None:
    agent = Agent(
        [
            response("Writing it now", finish_reason=CUT),
            response(None, [write("c1")], finish_reason=CUT),
            response(None, [write("c2")], finish_reason=CUT),
        ],
        max_continuations=2,
    )
    with pytest.raises(ContinuationsExhaustedError):
        agent.run()
    assert agent.tool.ran == []


def test_a_reply_that_finishes_starts_the_count_again() -> None:
    cut_call = [response(None, [write(f"c{n}")], finish_reason=CUT) for n in range(3)]
    agent = Agent(
        [*cut_call, response(None, [write("ok")]), *cut_call, response("done")],
    )
    assert agent.run() == "done"
    assert len(agent.tool.ran) == 1


def test_without_the_guarded_pipeline_a_cut_call_ends_the_run_as_in_chapter_1() -> None:
    """Nobody would stop the call from running: the safe answer is chapter 1's error."""
    agent = Agent([response(None, [write("c1")], finish_reason=CUT)], guarded=False)
    with pytest.raises(OutputTruncatedError):
        agent.run()
    assert agent.tool.ran == []


def test_the_record_of_cut_calls_is_read_once() -> None:
    agent = Agent([])
    check = agent.spec.check_reply
    assert isinstance(check, ContinueAfterLength)
    run = Run(agent.spec, "go", [])
    reply = check(run, parse_completion(response(None, [write("c1")], finish_reason=CUT)))
    assert check.cut_calls(run, reply.message.tool_calls)
    assert not check.cut_calls(run, reply.message.tool_calls)  # answered: forgotten

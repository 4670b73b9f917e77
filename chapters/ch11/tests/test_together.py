"""The mechanisms composed as the chapter's agent will compose them, in one streamed run:
a stream cut and retried, a cut tool call answered, a cut answer continued, a repeat
warned, and the end line that adds it all up."""

from __future__ import annotations

import json

from pydantic import BaseModel

from chapters.ch01.loop import run_agent
from chapters.ch07.parallel import ParallelCallPipeline
from chapters.ch07.scripted_stream import ScriptedStreamingModel, call_stream, text_stream
from chapters.ch11.continuation import ContinueAfterLength
from chapters.ch11.guarded_calls import GuardedCalls
from chapters.ch11.models import recovering_model
from chapters.ch11.repeats import RepeatGuard
from chapters.ch11.summary import RecoveryLog, ReportAtEnd
from chapters.ch11.tests.support import FakeClock, printed, recording_console
from shared.agent import AgentSpec
from shared.messages import AssistantMessage, Message, ToolMessage
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult


class Note(BaseModel):
    text: str


def echo(ran: list[str]) -> ToolRegistry:
    def run(arguments: Note) -> ToolResult:
        ran.append(arguments.model_dump_json())
        return ToolResult.success("ok: noted")

    return ToolRegistry(
        [
            PydanticTool(
                name="note",
                description="Take a note.",
                args_model=Note,
                side_effect=SideEffect.READ,
                run=run,
                concurrency_safe=True,
            )
        ]
    )


def test_every_mechanism_in_one_streamed_run() -> None:
    note = json.dumps({"text": "x"})
    streams = [
        text_stream("The answer is")[:-1],  # cut before its finish
        call_stream("c1", "note", note[:5], note[5:], finish_reason="length"),  # a cut call
        *(call_stream(f"n{n}", "note", note) for n in range(3)),  # the same note three times
        text_stream("Half", finish_reason="length"),  # a cut answer
        text_stream(" and the rest."),
    ]
    clock, log = FakeClock(), RecoveryLog()
    ran: list[str] = []
    console = recording_console(clock=clock)
    check = ContinueAfterLength(log=log)
    spec = AgentSpec(
        model=recovering_model(
            ScriptedStreamingModel(streams), clock=clock, draw=lambda: 0.0, log=log
        ),
        tools=echo(ran),
        calls=GuardedCalls(
            inner=ParallelCallPipeline(), cut_replies=check, repeats=RepeatGuard(log=log)
        ),
        console=console,
        system_prompt="test",
        features=[ReportAtEnd(log)],
        check_reply=check,
    )
    history: list[Message] = []
    assert run_agent("go", spec, history=history) == "Half and the rest."

    assert clock.sleeps == [1.0]  # the cut stream, retried after a backoff
    results = [m.content for m in history if isinstance(m, ToolMessage)]
    assert results[0].startswith("cut_off:")
    assert "[harness] repeat: this is the 3rd time" in results[3]
    assert len(ran) == 3  # the three notes; never the cut one
    assert [m.content for m in history if isinstance(m, AssistantMessage)][-1] == (
        "Half and the rest."
    )
    text = printed(console)
    assert "重试 retry: connection from scripted-model" in text
    assert text.rstrip().splitlines()[-1] == (
        "恢复 recovery: 1 retry (waited 1.0 s) · 1 continuation · 1 reply with cut tool calls "
        "· 1 repeat warning"
    )

"""A request the provider found too long: compacted once and sent again, never more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, Reply
from chapters.ch11.models import recovering_model
from chapters.ch11.overflow import (
    CompactOnOverflow,
    ContextTooLongError,
    CurrentRun,
    compacting,
)
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.tests import provider_errors as errors
from chapters.ch11.tests.support import FakeClock, ask, plain_model, printed, recording_console
from shared.agent import AgentSpec, Run
from shared.calls import CallPipeline
from shared.errors import ProviderError
from shared.messages import Message, SystemMessage, UserMessage
from shared.scripted import ScriptedModel, response
from shared.tools import ToolRegistry

TOO_LONG = Reply(errors.OPENAI_CONTEXT.status, errors.OPENAI_CONTEXT.body)
OK = Reply(200, response("fits now"))


class Shortener:
    """A stand-in for compaction: drops every message but the last, and counts its calls."""

    def __init__(self, can: bool = True) -> None:
        self.can = can
        self.calls = 0

    def __call__(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        self.calls += 1
        return {**request, "messages": request["messages"][-1:]} if self.can else None


def through(replies: list[Reply], shorten: Shortener, trace: bool = False) -> tuple[Any, ...]:
    log = RecoveryLog()
    console = recording_console(trace=trace)
    with ChatServer(replies) as server:
        model = CompactOnOverflow(plain_model(server.base_url), shorten, log=log)
        try:
            outcome: object = ask(model, console).message.content
        except ProviderError as error:
            outcome = error
        sent = [r.body for r in server.completion_requests()]
    return outcome, sent, log, printed(console)


def test_too_long_is_compacted_and_sent_once_more() -> None:
    shorten = Shortener()
    answer, sent, log, _ = through([TOO_LONG, OK], shorten)
    assert answer == "fits now"
    assert shorten.calls == 1
    assert [len(body["messages"]) for body in sent] == [2, 1]
    assert log.line() == "恢复 recovery: 1 compaction for the context length"


def test_still_too_long_after_compacting_ends_the_run() -> None:
    shorten = Shortener()
    error, sent, _, _ = through([TOO_LONG, TOO_LONG, OK], shorten)
    assert isinstance(error, ContextTooLongError)
    assert "still too long after compacting the history once" in str(error)
    assert len(sent) == 2 and shorten.calls == 1


def test_nothing_to_compact_ends_the_run_at_once() -> None:
    error, sent, _, _ = through([TOO_LONG, OK], Shortener(can=False))
    assert isinstance(error, ContextTooLongError)
    assert "could not be compacted" in str(error) and "\n" not in str(error)
    assert len(sent) == 1


@pytest.mark.parametrize(
    "failure",
    [errors.DEEPSEEK_CONTEXT, errors.VLLM_CONTEXT, errors.LLAMA_CPP_CONTEXT],
    ids=lambda f: f.name,
)
def test_each_providers_too_long_is_recognised(failure: errors.ProviderFailure) -> None:
    answer, _, _, _ = through([Reply(failure.status, failure.body), OK], Shortener())
    assert answer == "fits now"


def test_other_400s_are_not_compacted() -> None:
    shorten = Shortener()
    error, sent, _, _ = through([Reply(400, errors.OPENAI_BAD_REQUEST.body), OK], shorten)
    assert isinstance(error, ProviderError) and shorten.calls == 0 and len(sent) == 1


def test_the_trace_shows_the_failure_and_the_shorter_request() -> None:
    _, _, _, text = through([TOO_LONG, OK], Shortener(), trace=True)
    assert "--- context too long; compacting once (failed: HTTP 400) ---" in text
    assert "--- request after compacting ---" in text


def test_compacting_shortens_the_history_of_the_run_that_sent_the_request() -> None:
    """The hook the composition wires to chapter 8: the run's own history is compacted, and the
    request is built again from it."""
    current = CurrentRun()
    compacted: list[str] = []

    def compact(run: Run) -> bool:  # a stand-in for chapter 8: keep the system prompt and a note
        compacted.append(run.prompt)
        run.history[:] = [run.history[0], UserMessage(content="[summary] earlier: hello")]
        return True

    clock = FakeClock()
    with ChatServer([TOO_LONG, OK]) as server:
        model = recovering_model(
            plain_model(server.base_url), shorten=compacting(current, compact), clock=clock
        )
        spec = AgentSpec(
            model=model,
            tools=ToolRegistry(),
            calls=CallPipeline(),
            console=recording_console(),
            system_prompt="sys",
            features=[current],
        )
        history: list[Message] = [SystemMessage(content="sys")]
        history += [UserMessage(content=f"earlier {n}") for n in range(3)]
        assert run_agent("go on", spec, history=history) == "fits now"
        sent = [r.body for r in server.completion_requests()]
    assert compacted == ["go on"]
    assert len(sent[0]["messages"]) == 5  # sys, three earlier messages, the prompt
    assert sent[1]["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "[summary] earlier: hello"},
    ]
    assert clock.sleeps == []  # compaction is not a wait


def test_a_compaction_that_asks_the_same_model_is_not_compacted_again() -> None:
    """Chapter 8 asks the model for a summary; if that is too long too, the compaction hears
    it (and gives up, here) instead of compacting inside its own compaction, forever."""
    heard: list[str] = []
    holder: list[CompactOnOverflow] = []

    def summarise_then_shorten(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        try:
            holder[0].complete({"model": "m", "messages": [{"role": "user", "content": "sum"}]})
        except ProviderError as error:
            heard.append(str(error)[:8])
            return None
        return request

    with ChatServer([TOO_LONG, TOO_LONG, OK]) as server:
        holder.append(CompactOnOverflow(plain_model(server.base_url), summarise_then_shorten))
        with pytest.raises(ContextTooLongError):
            ask(holder[0])
        assert len(server.completion_requests()) == 2  # the request, the summary request
    assert heard == ["HTTP 400"]


def test_without_a_run_there_is_nothing_to_compact() -> None:
    shorten = compacting(CurrentRun(), lambda run: True)
    assert shorten({"messages": []}) is None


def test_only_the_runs_own_next_request_is_compacted() -> None:
    """A request with more than the history (chapter 8's summary request, a continuation)
    was sent by someone who handles its refusal: the run's history is left alone."""
    current = CurrentRun()
    compacted: list[str] = []

    def compact(run: Run) -> bool:
        compacted.append(run.prompt)
        return True

    spec = AgentSpec(
        model=ScriptedModel([]),
        tools=ToolRegistry(),
        calls=CallPipeline(),
        console=recording_console(),
        system_prompt="sys",
    )
    run = Run(spec, "go", [SystemMessage(content="sys"), UserMessage(content="go")])
    current.before_request(run)
    shorten = compacting(current, compact)
    own = [m.wire for m in run.history]
    summary = [*own, {"role": "user", "content": "[compact] summarise"}]
    assert shorten({"messages": summary}) is None
    assert compacted == []
    assert shorten({"messages": own}) == {"messages": own}
    assert compacted == ["go"]

"""The end line: what recovering cost the run, said once on stderr, only when there was any."""

from __future__ import annotations

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch11.continuation import ContinueAfterLength
from chapters.ch11.failures import Failure
from chapters.ch11.summary import RecoveryLog, ReportAtEnd
from chapters.ch11.tests.support import printed, recording_console
from chapters.ch11.wrapper import RetryWait, Switch
from shared.agent import AgentSpec
from shared.calls import CallPipeline
from shared.errors import OutputTruncatedError
from shared.scripted import ScriptedModel, response
from shared.tools import ToolRegistry


def wait(seconds: float, asked: float | None) -> RetryWait:
    return RetryWait("m", 2, 5, seconds, asked, Failure.RATE_LIMITED, 429, 0.0)


def test_a_run_that_needed_nothing_says_nothing() -> None:
    assert RecoveryLog().line() is None


def test_everything_that_happened_is_in_one_line() -> None:
    log = RecoveryLog()
    log.retried(wait(1.5, 1.5))
    log.retried(wait(2.0, None))
    log.retried(wait(4.0, None))
    log.continued()
    log.cut()
    log.cut()
    log.switched(Switch("a", "deepseek-chat @ https://api.deepseek.com/v1", "HTTP 503"))
    log.compacted()
    log.warned_of_repeat()
    log.warned_of_repeat()
    assert log.line() == (
        "恢复 recovery: 3 retries (waited 7.5 s; Retry-After asked for 1.5 s) · 1 continuation · "
        "2 replies with cut tool calls · fell back to deepseek-chat @ https://api.deepseek.com/v1 "
        "· 1 compaction for the context length · 2 repeat warnings"
    )


def spec(steps: list[dict[str, object]], log: RecoveryLog, name: str = "main") -> AgentSpec:
    return AgentSpec(
        model=ScriptedModel(steps),
        tools=ToolRegistry(),
        calls=CallPipeline(),
        console=recording_console(),
        system_prompt="test",
        name=name,
        features=[ReportAtEnd(log)],
        check_reply=ContinueAfterLength(1, log=log),
    )


def test_the_line_is_printed_when_the_run_ends() -> None:
    log = RecoveryLog()
    agent = spec([response("a", finish_reason="length"), response("b")], log)
    assert run_agent("go", agent) == "ab"
    assert printed(agent.console).splitlines()[-1] == "恢复 recovery: 1 continuation"


def test_the_line_is_printed_when_the_run_fails_too() -> None:
    log = RecoveryLog()
    agent = spec([response("a", finish_reason="length")] * 2, log)
    with pytest.raises(OutputTruncatedError):
        run_agent("go", agent)
    assert printed(agent.console).splitlines()[-1] == "恢复 recovery: 1 continuation"


def test_a_child_agent_does_not_print_the_familys_line() -> None:
    log = RecoveryLog()
    agent = spec([response("a", finish_reason="length"), response("b")], log, name="explore")
    run_agent("go", agent)
    assert "恢复 recovery" not in printed(agent.console)
    assert log.continuations == 1  # counted all the same, for the parent's line

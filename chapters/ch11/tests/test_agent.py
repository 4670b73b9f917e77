"""Chapter 11's composition (chapters/ch11/agent.py): the recovery mechanisms inside chapter 10's
agent, on scripted streams with real tool_calls and finish_reasons, on a clock that never sleeps.

What only the composed agent can show: that a wait is made on the injected clock and
added up in the end line; that a continued answer is one message in the history and
printed once on a terminal, exactly once on a pipe; that a cut write never reaches the
permission gate; that the guard catches a call refused by the policy, not only one that
ran; that a provider's "context too long" is compacted by chapter 8's compactor; and
that children recover through the same wrappers: a child's wait is shown under its
label, a child that repeats itself fails as a task, and a fallback serves children too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from chapters.ch07.scripted_stream import AgentStep, call_stream, calls_stream, text_stream
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from chapters.ch08.tests.composed import reads, write_files
from chapters.ch11.continuation import CONTINUE_PROMPT
from chapters.ch11.repeats import RepeatedCallError
from chapters.ch11.retry import RetriesExhaustedError
from chapters.ch11.tests.composed import Agent11, rate_limited, too_long
from shared.errors import ProviderError, ProviderErrorKind

pytestmark = pytest.mark.usefixtures("isolated")

Scripts = Mapping[str, Sequence[AgentStep]]
PROMPT = "Find the codes."
CHILD_TASK = "Find where CODES is defined."


def call(call_id: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    return calls_stream((call_id, tool, json.dumps(arguments)))


def end_line(agent: Agent11) -> str:
    return agent.printed().rstrip().splitlines()[-1]


# --- retries -----------------------------------------------------------------------------------


def test_a_rate_limit_is_waited_out_on_the_clock_and_the_end_line_adds_it_up(
    tmp_path: Path,
) -> None:
    agent = Agent11(tmp_path, {PROMPT: [[rate_limited(1.5)], text_stream("Two codes.")]})
    assert agent.run(PROMPT) == "Two codes."
    assert agent.clock.sleeps == [1.5]
    assert len(agent.requests) == 2
    assert "waiting 1.5 s as the provider asked (Retry-After), then attempt 2 of 5" in (
        agent.printed()
    )
    assert end_line(agent) == "恢复 recovery: 1 retry (waited 1.5 s; Retry-After asked for 1.5 s)"


def test_max_retries_is_passed_to_the_one_retry_owner(tmp_path: Path) -> None:
    script: Scripts = {PROMPT: [[rate_limited()], [rate_limited()], text_stream("late")]}
    agent = Agent11(tmp_path, script, options={"max_retries": 1})
    with pytest.raises(RetriesExhaustedError, match="gave up after 1 retry"):
        agent.run(PROMPT)
    assert len(agent.requests) == 2


# --- continuation, and what the screen shows ----------------------------------------------------


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_a_continued_answer_is_one_message_and_is_printed_once(
    tmp_path: Path, terminal: bool
) -> None:
    script: Scripts = {PROMPT: [text_stream("Two codes: WELCOME10", finish_reason="length"),
                       text_stream(" and STAFF.")]}  # fmt: skip
    agent = Agent11(tmp_path, script, terminal=terminal)
    answer = agent.run(PROMPT)
    assert answer == "Two codes: WELCOME10 and STAFF."
    assert agent.said() == [answer]  # one joined message, not the parts
    sent = agent.requests[1]["messages"]
    assert sent[-2:] == [
        {"role": "assistant", "content": "Two codes: WELCOME10"},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    assert agent.console is not None
    agent.console.answer(answer)
    # A terminal watched both parts stream: nothing again. A pipe gets exactly the answer.
    assert agent.answered() == ("" if terminal else answer + "\n")


def test_a_stream_cut_and_sent_again_is_not_printed_twice_on_a_terminal(tmp_path: Path) -> None:
    script: Scripts = {
        PROMPT: [text_stream("Two codes")[:-1], text_stream("Two codes.")]
    }  # no finish
    agent = Agent11(tmp_path, script, terminal=True)
    answer = agent.run(PROMPT)
    assert agent.clock.sleeps == [1.0]  # a backoff: the stream said nothing about waiting
    assert agent.console is not None
    agent.console.answer(answer)
    assert agent.answered() == ""


def test_a_cut_write_never_runs_and_the_model_is_told_to_send_smaller_pieces(
    tmp_path: Path,
) -> None:
    arguments = json.dumps({"path": "notes.md", "content": "# Notes\n"})
    script: Scripts = {PROMPT: [call_stream("w1", "write_file", arguments, finish_reason="length"),
                       text_stream("I will write it in parts.")]}  # fmt: skip
    agent = Agent11(tmp_path, script)
    agent.run(PROMPT)
    assert not (agent.root / "notes.md").exists()
    (result,) = agent.results()
    assert result.startswith("cut_off: your reply reached the output token limit")
    assert "write a long file in parts" in result
    assert "1 reply with cut tool calls" in end_line(agent)


# --- the repeat guard --------------------------------------------------------------------------


def test_the_same_call_refused_by_the_policy_is_warned_then_ends_the_run(tmp_path: Path) -> None:
    """Same call, same refusal: the gate's denial is a result the guard reads like any other."""
    script: Scripts = {PROMPT: [call(f"c{n}", "shell", command="rm -rf build") for n in range(8)]}
    agent = Agent11(tmp_path, script, deny=["shell(rm:*)"])
    with pytest.raises(RepeatedCallError, match="same call 5 times with nothing new in between"):
        agent.run(PROMPT)
    assert agent.runner is not None and agent.runner.commands == []  # type: ignore[attr-defined]
    results = agent.results()
    assert len(results) == 5 and all(r.startswith("denied:") for r in results)
    assert "[harness] repeat" not in results[1]
    assert "this is the 3rd time that you called" in results[2]
    assert "fails the same way every time" in results[2]
    assert end_line(agent) == "恢复 recovery: 3 repeat warnings"


# --- context too long ---------------------------------------------------------------------------


def test_a_request_the_provider_finds_too_long_is_compacted_by_chapter_8_and_sent_again(
    tmp_path: Path,
) -> None:
    files = {f"{name}.txt": f"{name} " * 3_000 for name in ("a", "b", "c")}
    write_files(tmp_path / "ws", files)
    script: Scripts = {PROMPT: [reads("a.txt"), reads("b.txt", first=2), reads("c.txt", first=3),
                       [too_long()], text_stream("SUMMARY: read a, b and c."),
                       text_stream("Done.")]}  # fmt: skip
    # A window the three reads fit in (no compaction before a request), with old enough
    # messages to summarise when the provider, which counts otherwise, refuses.
    agent = Agent11(tmp_path, script, options={"context_window": 6_000})
    assert agent.run(PROMPT) == "Done."
    refused, summary_request, again = agent.requests[3:]
    assert str(summary_request["messages"][-1]["content"]).startswith(COMPACT_MARK)
    assert len(again["messages"]) < len(refused["messages"])
    assert any(str(m["content"]).startswith(SUMMARY_MARK) for m in again["messages"])
    assert agent.clock.sleeps == []  # compaction is not a wait
    assert end_line(agent) == "恢复 recovery: 1 compaction for the context length"


# --- children ------------------------------------------------------------------------------------


def delegate(agent: str = "explore") -> list[dict[str, Any]]:
    return call("t1", "task", description="find CODES", prompt=CHILD_TASK, agent=agent)


def test_a_child_waits_out_a_rate_limit_under_its_own_label(tmp_path: Path) -> None:
    script: Scripts = {
        PROMPT: [delegate(), text_stream("In shop/cart.py.")],
        CHILD_TASK: [[rate_limited(2.0)], text_stream("shop/cart.py, line 7.")],
    }
    agent = Agent11(tmp_path, script)
    assert agent.run(PROMPT) == "In shop/cart.py."
    assert agent.clock.sleeps == [2.0]
    assert "  │ explore · 重试 retry: HTTP 429 (rate limited) from primary" in agent.printed()
    assert end_line(agent).startswith("恢复 recovery: 1 retry (waited 2.0 s")  # the family's


def test_a_child_that_repeats_itself_fails_and_the_parent_reads_why(tmp_path: Path) -> None:
    search = call("g", "grep", pattern="CODES")
    script: Scripts = {
        PROMPT: [delegate(), text_stream("I will search myself.")],
        CHILD_TASK: [search] * 6,
    }
    agent = Agent11(tmp_path, script)
    assert agent.run(PROMPT) == "I will search myself."
    (result,) = agent.results()
    assert result.startswith("subagent_failed: explore ended without an answer")
    assert "RepeatedCallError: The model made the same call 5 times with nothing new" in result


def test_after_the_switch_the_fallback_serves_the_parent_and_its_children(tmp_path: Path) -> None:
    missing = ProviderError(
        "HTTP 404: no model",
        404,
        kind=ProviderErrorKind.NOT_FOUND,
        body=json.dumps(
            {"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}}
        ),
    )
    script: Scripts = {PROMPT: [[missing]]}
    fallback = {
        PROMPT: [delegate(), text_stream("In shop/cart.py.")],
        CHILD_TASK: [text_stream("shop/cart.py, line 7.")],
    }
    agent = Agent11(tmp_path, script, fallback_scripts=fallback)
    assert agent.run(PROMPT) == "In shop/cart.py."
    assert len(agent.requests) == 1  # the primary was asked once, and never again
    assert agent.fallback is not None and len(agent.fallback.requests) == 3
    assert agent.printed().count("回退 fallback: primary (scripted stream, no network) failed") == 1
    assert end_line(agent) == "恢复 recovery: fell back to second (scripted stream, no network)"

"""Chapter 8's composition (chapters/ch08/agent.py): the mechanisms inside chapter 7's agent.

What only the composed agent can show: that the summary a compaction asks for is
not streamed to the screen as if the agent said it, that the request budget
counts the loop's requests and not the harness's summary requests, that a
child's big result goes through the same offloading finisher while the child
itself is never compacted, that the context gauge stands under the spinner in a
terminal, and that the shell now keeps a megabyte so that big output is saved
whole instead of cut.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from chapters.ch03.asking import ScriptedAsker
from chapters.ch04.demo import python_command
from chapters.ch06.budget import RequestBudget
from chapters.ch06.prompt import EXPLORE_PROMPT
from chapters.ch07.scripted_stream import calls_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import Terminal, recording_console
from chapters.ch08.measure import messages_tokens, tools_tokens
from chapters.ch08.prompt import SYSTEM_PROMPT
from chapters.ch08.tests.composed import (
    Agent8,
    answer,
    args,
    counted,
    is_compaction,
    lines_of,
    reads,
    summary,
)
from shared.messages import Message

pytestmark = pytest.mark.usefixtures("isolated")

WIRE = TypeAdapter(Message)

PROMPT = "Read a.txt and b.txt and tell me how they differ."
SUMMARY = "SUMMARY-TEXT: a.txt was read; b.txt is being read."
ANSWER = "ANSWER-TEXT: they differ in their numbers."
FILES = {"a.txt": lines_of(6_000, "alpha"), "b.txt": lines_of(6_000, "beta")}


def compacting_run(tmp_path: Path, **options: object) -> Agent8:
    """Two reads of 6,000 characters; the provider counts 9,000 tokens after the second, so
    the third request (window 10,000, compact at 80%) is compacted first."""
    scripts = {
        PROMPT: [
            reads("a.txt", tokens=1_000),
            reads("b.txt", first=2, tokens=9_000),
            summary(SUMMARY),
            answer(ANSWER),
        ]
    }
    console = options.pop("console", recording_console())
    assert isinstance(console, StreamingConsole)
    return Agent8(
        tmp_path, scripts, FILES, console=console, options={"context_window": 10_000, **options}
    )


# --- the summary is for the model ----------------------------------------------------------------


def test_the_summary_is_not_streamed_to_the_console_but_the_answer_is(tmp_path: Path) -> None:
    agent = compacting_run(tmp_path)
    assert agent.run(PROMPT) == ANSWER
    printed = agent.printed()
    assert agent.compactor.compactions == 1
    assert "(turn 3, compaction)\nharness: compacted the context before request 3:" in printed
    assert SUMMARY not in printed  # what the harness asked the model for, not what it said
    assert f"(turn 3)\n{ANSWER}\n" in printed  # the answer streams as in chapter 7
    assert str(agent.history[2].content).endswith(SUMMARY)  # where the model reads it


def test_with_trace_the_summarys_chunks_are_shown_like_any_others(tmp_path: Path) -> None:
    agent = compacting_run(tmp_path, console=recording_console(trace=True))
    agent.run(PROMPT)
    printed = agent.printed()
    exchange = printed[
        printed.index("--- compaction request 3 ---") : printed.index(
            "--- compaction response 3 ---"
        )
    ]
    assert '"tool_choice": "none"' in exchange
    assert f'"content": "{SUMMARY}"' in exchange.split("\nchunk 2: ", 1)[1]


# --- the budget counts the agent's requests ----------------------------------------------------


def test_a_compactions_summary_request_is_not_counted_by_the_request_budget(
    tmp_path: Path,
) -> None:
    """Three loop requests and one summary request fit a budget of three."""
    agent = compacting_run(tmp_path, max_requests=3)
    assert agent.run(PROMPT) == ANSWER
    requests = agent.requests_of(PROMPT)
    assert [is_compaction(r) for r in requests] == [False, False, True, False]
    assert agent.feature(RequestBudget).used == 3


# --- sub-agents -----------------------------------------------------------------------------------

CHILD = "Read the four parts and report their first words."
PARTS = {f"part{n}.txt": lines_of(6_000, f"part{n}") for n in range(1, 5)}


def test_a_childs_big_results_are_saved_by_the_shared_finisher_and_the_child_is_never_compacted(
    tmp_path: Path,
) -> None:
    """The child's second request is over the parent's threshold: a child with a compactor
    would compact it. Its four results of 6,000 characters are saved and read as views."""
    task = ("call_1", "task", args(description="Read the parts", prompt=CHILD, agent="explore"))
    scripts = {
        PROMPT: [counted(calls_stream(task), 2_000), answer(ANSWER)],
        CHILD: [reads(*PARTS), answer("part1 to part4.")],
    }
    options = {"context_window": 3_500, "offload_over": 3_000}
    agent = Agent8(tmp_path, scripts, PARTS, options=options)
    assert agent.run(PROMPT) == ANSWER

    child_requests = agent.requests_of(CHILD)
    assert len(child_requests) == 2 and not any(map(is_compaction, child_requests))
    assert not any(map(is_compaction, agent.requests_of(PROMPT)))
    second = child_requests[1]
    size = messages_tokens(WIRE.validate_python(m) for m in second["messages"])
    assert size + tools_tokens(second["tools"]) > agent.compactor.threshold

    printed = agent.printed()
    for n, name in enumerate(PARTS, 1):
        whole = agent.saved(f"call_{n}.txt").read_text(encoding="utf-8")
        assert whole.startswith(f"ok: {name}, lines 1-")  # the child's result, whole
        assert f"harness: explore's read_file result ({len(whole):,} characters) saved" in printed
        sent = second["messages"][2 + n]["content"]
        assert len(sent) < 3_000 and f".tutorial/tool-results/call_{n}.txt" in sent

    # The transcript is the parent's: the child's messages are not in it.
    roles = [line["message"]["role"] for line in agent.transcript]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert not any(EXPLORE_PROMPT in str(line["message"]) for line in agent.transcript)


# --- the gauge ------------------------------------------------------------------------------------


def test_the_context_gauge_stands_under_the_spinner_in_a_terminal(tmp_path: Path) -> None:
    console = StreamingConsole(out=io.StringIO(), err=Terminal(), fancy=True)
    scripts = {PROMPT: [reads("a.txt", tokens=4_321), answer(ANSWER)]}
    agent = Agent8(tmp_path, scripts, FILES, console=console)
    agent.run(PROMPT)
    printed = agent.printed()
    first = printed.index("(turn 1)")
    second = printed.index("(turn 2)")
    # before any response: estimated; after one: the provider's count plus what came since
    assert "/ 32,000 tokens" in printed[first:second]
    assert "), estimated" in printed[first:second]
    measured = agent.compactor.meter.last
    assert measured > 4_321
    assert "上下文 context " in printed[second:]
    assert f"{measured:,} / 32,000 tokens ({measured / 32_000:.0%}), measured" in printed[second:]


# --- the shell keeps big output whole ----------------------------------------------------------


def test_a_commands_big_output_is_saved_whole_not_cut(tmp_path: Path) -> None:
    """Chapter 1's shell cuts each stream at 20,000 bytes; here it keeps up to 1 MB, and the
    offloading finisher saves all 50,000 characters."""
    script = tmp_path / "loud.py"
    script.write_text("print('x' * 50_000)\n", encoding="utf-8")
    shell = ("call_1", "shell", args(command=python_command(script)))
    scripts = {PROMPT: [calls_stream(shell), answer(ANSWER)]}
    agent = Agent8(tmp_path, scripts, asker=ScriptedAsker(["y"]), runner=None)
    agent.run(PROMPT)
    whole = agent.saved("call_1.txt").read_text(encoding="utf-8")
    assert "x" * 50_000 in whole
    assert "[... output truncated" not in whole
    sent = str(agent.history[3].content)
    assert len(sent) < 3_000
    assert "The whole text is saved in .tutorial/tool-results/call_1.txt" in sent


def test_the_system_prompt_says_where_saved_and_summarised_text_is(tmp_path: Path) -> None:
    agent = Agent8(tmp_path, {PROMPT: [answer(ANSWER)]})
    agent.run(PROMPT)
    (request,) = agent.requests_of(PROMPT)
    assert request["messages"][0]["content"] == SYSTEM_PROMPT
    assert "read_file (offset, limit)" in SYSTEM_PROMPT and "summary" in SYSTEM_PROMPT

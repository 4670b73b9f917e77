"""Sub-agents side by side: which task calls run together, how their children print, how a
child fails, and how children stop. The agent is chapter 7's composition
(chapters/ch07/agent.py); every run has its own scripted stream, keyed by the prompt it
starts with (support.py), so two children asking at once each get their own replies.

No test sleeps: overlap is proven with a `threading.Barrier` that only two children
running at the same time can pass, and order with events.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chapters.ch03.asking import HumanAnswer
from chapters.ch03.tests.support import read_audit, read_outcomes
from chapters.ch07.parallel import ParallelCallPipeline
from chapters.ch07.scripted_stream import AgentStep, calls_stream, text_stream
from chapters.ch07.tests import provider_streams as streams
from chapters.ch07.tests.provider_streams import ProviderStream
from chapters.ch07.tests.support import Family, args, err_text, task
from chapters.ch07.tests.test_parallel import held_elsewhere
from shared.approval import ApprovalRequest
from shared.errors import AgentLimitError
from shared.tools import Arguments

pytestmark = pytest.mark.usefixtures("isolated")

WAIT = 5.0  # seconds a broken test gets before it fails instead of hanging
PARENT = "Where are alpha and beta defined?"
A, B = "Find where alpha is defined.", "Find where beta is defined."


def header(prompt: str, agent: str = "explore") -> str:
    """The line that opens a child's output: its agent and its task's description."""
    return f"子智能体 sub-agent {agent}: {prompt[:40]}\n"


def grep(call_id: str = "call_1") -> list[dict[str, Any]]:
    return calls_stream((call_id, "grep", args(pattern="def")))


def explore(found: str) -> list[AgentStep]:
    return [grep(), text_stream(found)]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- which task calls are safe -----------------------------------------------------------------


def test_a_task_is_concurrency_safe_when_its_agent_has_only_safe_tools(tmp_path: Path) -> None:
    agents = tmp_path / "ws" / ".tutorial" / "agents"
    for name, tools in (("reader", "read_file, grep"), ("writer", "read_file, edit_file")):
        write(agents / f"{name}.md", f"---\nname: {name}\ndescription: d\ntools: {tools}\n---\nx\n")
    task_tool = Family(tmp_path, {}).build().tools["task"]

    def safe(agent: str) -> bool:
        arguments = task_tool.validate({"description": "d", "prompt": "p", "agent": agent})
        assert isinstance(arguments, Arguments)
        return bool(task_tool.concurrency_safe_for(arguments))  # type: ignore[attr-defined]

    assert {name: safe(name) for name in ("explore", "reader", "general", "writer", "nobody")} == {
        "explore": True,  # read_file, glob, grep
        "reader": True,
        "general": False,  # the parent's tools: shell, write_file, edit_file, ...
        "writer": False,
        "nobody": False,  # prepare refuses it anyway
    }
    assert not task_tool.concurrency_safe  # as a whole it is not: general writes


def test_tasks_for_an_agent_that_can_write_run_one_after_the_other(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [
                calls_stream(task("t1", A, "general"), task("t2", B, "general")),
                text_stream("ok"),
            ],
            A: [text_stream("alpha done")],
            B: [text_stream("beta done")],
        },
    )
    family.run(PARENT)
    text = err_text(family.console)
    assert "side by side" not in text
    # each child ran and was answered before the next one started
    assert text.index("[task → ok]\nalpha done") < text.index(header(B, "general"))


# --- children side by side, each in a block of its own ------------------------------------------


def test_two_explore_tasks_run_their_children_side_by_side_in_labelled_blocks(
    tmp_path: Path,
) -> None:
    meet = threading.Barrier(2, timeout=WAIT)  # only two children running at once pass it
    b_answered = threading.Event()

    def first(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        meet.wait()
        return grep()

    def a_answers(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        assert b_answered.wait(WAIT)  # beta answers first
        return text_stream("alpha: a.py, ", "line 1.")

    def b_answers(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        b_answered.set()
        return text_stream("beta: b.py, ", "line 2.")

    family = Family(
        tmp_path,
        {
            PARENT: [calls_stream(task("t1", A), task("t2", B)), text_stream("Both found.")],
            A: [first, a_answers],
            B: [first, b_answers],
        },
    )
    assert family.run(PARENT) == "Both found."
    assert family.result("t1").startswith("alpha: a.py, line 1.\n\n[sub-agent explore: 2 model")
    assert family.result("t2").startswith("beta: b.py, line 2.\n\n[sub-agent explore: 2 model")

    text = err_text(family.console)
    group = text.index("并行 side by side: task · task (at most 8 at once)\n")
    a_block, a_result = text.index(header(A)), text.index("[task → ok]\nalpha")
    b_block, b_result = text.index(header(B)), text.index("[task → ok]\nbeta")
    assert group < a_block < a_result < b_block < b_result  # call order, whoever finished first
    for start, end, other in ((a_block, a_result, "beta"), (b_block, b_result, "alpha")):
        lines = text[start:end].splitlines()[1:]
        assert lines and all(line.startswith("  │ ") for line in lines), lines
        assert "  │ … explore · 等待模型" in text[start:end]  # the spinner line names the agent
        assert other not in text[start:end]  # nothing of the other child inside
    assert "  │ beta: b.py, line 2.\n" in text[b_block:b_result]  # its streamed text, whole


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "side_by_side"])
def test_a_child_alone_prints_as_it_goes_beside_others_when_the_group_is_done(
    tmp_path: Path, beside: bool
) -> None:
    shown_while_working: list[str] = []

    def answers(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        shown_while_working.append(err_text(family.console))
        return text_stream("alpha.")

    calls = [task("t1", A), task("t2", B)] if beside else [task("t1", A)]
    family = Family(
        tmp_path,
        {
            PARENT: [calls_stream(*calls), text_stream("ok")],
            A: [grep(), answers],
            B: [text_stream("beta.")],
        },
    )
    family.run(PARENT)
    (shown,) = shown_while_working
    assert (header(A) in shown) is not beside  # live, or kept for its block
    assert header(A) in err_text(family.console)


# --- a child's failure is the parent's data --------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "error"),
    [
        (streams.CUT_OFF, "BrokenStreamError"),
        (streams.OPENAI_ERROR, "BrokenStreamError"),
        (streams.NOTHING_SAID, "EmptyReplyError"),
    ],
    ids=lambda s: s.provider if isinstance(s, ProviderStream) else "",
)
@pytest.mark.parametrize("beside", [False, True], ids=["alone", "side_by_side"])
def test_a_childs_failed_stream_is_subagent_failed_for_the_parent(
    tmp_path: Path, stream: ProviderStream, error: str, beside: bool
) -> None:
    calls = [task("t1", A), task("t2", B)] if beside else [task("t1", A)]
    family = Family(
        tmp_path,
        {
            PARENT: [calls_stream(*calls), text_stream("Noted.")],
            A: [stream.chunks()],
            B: [text_stream("beta.")],
        },
    )
    assert family.run(PARENT) == "Noted."  # the parent goes on
    assert family.result("t1").startswith(
        "subagent_failed: explore ended without an answer after 1 model request, 0 tool calls: "
        f"{error}: "
    )
    assert "\n" not in family.result("t1")  # one line
    if beside:
        assert family.result("t2").startswith("beta.")  # its sibling still finished


# --- what children side by side share --------------------------------------------------------


@dataclass
class LockWatchingAsker:
    """Says yes, and notes whether the family's lock was held while it asked."""

    pipeline: list[ParallelCallPipeline]
    asked: list[tuple[str | None, bool]]

    def ask(self, request: ApprovalRequest) -> HumanAnswer:
        self.asked.append((request.agent, held_elsewhere(self.pipeline[0].lock)))
        return HumanAnswer(approved=True, how="yes")


def test_children_side_by_side_ask_under_the_familys_lock_and_each_call_is_audited(
    tmp_path: Path,
) -> None:
    write(tmp_path / "ws" / "secret.txt", "s3cret\n")
    read_secret = calls_stream(("call_1", "read_file", args(path="secret.txt")))  # same ids
    asker = LockWatchingAsker([], [])
    family = Family(
        tmp_path,
        {
            PARENT: [calls_stream(task("t1", A), task("t2", B)), text_stream("ok")],
            A: [read_secret, text_stream("alpha.")],
            B: [read_secret, text_stream("beta.")],
        },
        asker=asker,
        settings={"permissions": {"ask": ["read_file(secret.txt)"]}},
    )
    spec = family.build()
    assert isinstance(spec.calls, ParallelCallPipeline)
    asker.pipeline.append(spec.calls)
    family.run(PARENT)
    assert asker.asked == [("explore", True), ("explore", True)]  # two prompts, never at once
    path = family.audit_path
    decided = [(r["tool"], r["decision"]) for r in read_audit(path)]
    assert sorted(decided) == [
        *[("read_file", "allow")] * 2,  # what the human answered
        *[("read_file", "ask")] * 2,  # what the policy said
        *[("task", "allow")] * 2,
    ]
    outcomes = [
        (r["tool_call_id"], r["tool"], r["outcome"]) for r in read_outcomes(family.audit_path)
    ]
    assert sorted(outcomes) == [("call_1", "read_file", "ok")] * 2 + [
        ("t1", "task", "ok"),
        ("t2", "task", "ok"),
    ]


def test_children_side_by_side_count_against_the_familys_one_budget(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {PARENT: [calls_stream(task("t1", A), task("t2", B))], A: explore("a"), B: explore("b")},
        max_requests=3,  # the parent's first, and each child's first
    )
    with pytest.raises(AgentLimitError, match="max_requests=3"):
        family.run(PARENT)
    assert family.model is not None and len(family.model.requests) == 3


# --- Ctrl-C ----------------------------------------------------------------------------------


def test_ctrl_c_while_children_run_side_by_side_stops_them_at_their_next_chunk(
    tmp_path: Path,
) -> None:
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs POSIX signals")
    main = threading.get_ident()
    meet = threading.Barrier(2, timeout=WAIT)
    released = threading.Event()

    def first(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        if meet.wait() == 0:  # both children are working: one of them presses Ctrl-C
            signal.pthread_kill(main, signal.SIGINT)
        assert released.wait(WAIT)  # the loop has stopped waiting for them
        return grep()

    family = Family(
        tmp_path,
        {PARENT: [calls_stream(task("t1", A), task("t2", B))], A: [first], B: [first]},
    )
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            family.run(PARENT)
    finally:
        released.set()
        signal.signal(signal.SIGINT, previous)
    for worker in threading.enumerate():  # let the children reach their next chunk
        if worker.name.startswith("tool-call"):
            worker.join(WAIT)
            assert not worker.is_alive()
    assert len(family.requests_of(A)) == 1 and len(family.requests_of(B)) == 1
    assert [r["tool"] for r in read_audit(family.audit_path)] == ["task", "task"]  # no grep ran
    assert header(A) not in err_text(family.console)  # nothing of the group after Ctrl-C

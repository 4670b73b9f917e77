"""Chapter 7's command line: the demo, --no-stream, --max-parallel, Ctrl-C mid-stream, the
dispatcher's other commands, and the composed agent over the real `openai` SDK with
`stream=True` against the local server sending server-sent events."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest

import chapters.ch01.loop as loop
from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, StreamReply, sse_data
from chapters.ch01.tests.cli_support import in_order, model_env, sse, traced
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.tests.support import read_audit, tutorial
from chapters.ch06.demo import write_demo_files
from chapters.ch06.prompt import EXPLORE_PROMPT
from chapters.ch07.demo import NOTES, TASKS
from chapters.ch07.prompt import SYSTEM_PROMPT
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch07.stream_console import StreamingConsole
from chapters.ch07.tests.support import args, task
from shared.agent import AgentSpec
from shared.messages import Message
from shared.scripted import response, tool_call

pytestmark = pytest.mark.usefixtures("isolated")

demo_folder = demo_folder_fixture(write_demo_files)

ANSWER_START = "[scripted] apply_discount is defined in shop/pricing.py, line 18"


def header(description: str) -> str:
    return f"子智能体 sub-agent explore: {description}\n"


# --- the demo ------------------------------------------------------------------------------


def test_the_demo_streams_runs_children_and_reads_side_by_side_and_the_write_alone(
    demo_folder: Path,
) -> None:
    result = tutorial("run", "--chapter", "7", "--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(ANSWER_START)
    assert result.stdout.endswith(
        f"{NOTES} was not written: denied: the human refused this call, so it did not run.\n"
    )
    err = result.stderr
    assert "streaming: on · max_parallel: 8\n" in err
    assert "[scripted] Two searches that do not depend on each other: explore can do both at once."
    in_order(
        err,
        "并行 side by side: task · task (at most 8 at once)\n",
        header(TASKS[0]["description"]),  # each child's block, whole, before its result
        "  │ [grep → ok]\n",
        "[task → ok]\n[scripted] apply_discount: shop/pricing.py, line 18.",
        header(TASKS[1]["description"]),
        "[task → ok]\n[scripted] with_tax: shop/pricing.py, line 13.",
        "并行 side by side: read_file · read_file · read_file (at most 8 at once)\n",
        "[read_file → ok]\nok: shop/cart.py",
        "[read_file → ok]\nok: shop/checkout.py",
        "[read_file → ok]\nok: tests/test_pricing.py",
        "工具 tool: write_file\n",  # the barrier: asked about after the reads finished
        "[write_file → denied]\n",  # no terminal in the test: denied
        "[read_file → not_found]\n",  # the read after the write started after it
    )
    decided = [(a["tool"], a["decision"]) for a in read_audit(demo_folder / AUDIT_FILE)]
    assert decided[:2] == [("task", "allow"), ("task", "allow")]
    assert sorted(decided[2:4]) == [("grep", "allow"), ("grep", "allow")]  # side by side
    assert decided[4:] == [("read_file", "allow")] * 3 + [
        ("write_file", "ask"),
        ("write_file", "deny"),
        ("read_file", "allow"),
    ]
    assert not (demo_folder / NOTES).exists()


def test_the_demos_trace_shows_each_chunk_as_it_arrived_then_the_assembled_reply(
    demo_folder: Path,
) -> None:
    result = tutorial("run", "--chapter", "7", "--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    documents = traced(result.stderr)
    first = dict(documents)["request 1"]
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    err = result.stderr
    chunks = err[err.index("--- request 1 ---") : err.index("--- response 1 ---")]
    lines = [line for line in chunks.splitlines() if line.startswith("chunk ")]
    assert [line.split(":")[0] for line in lines] == [f"chunk {n}" for n in range(1, 14)]
    deltas = [json.loads(line.split(": ", 1)[1])["choices"] for line in lines]
    assert deltas[-1] == []  # the usage chunk
    reply = dict(documents)["response 1"]["choices"][0]["message"]
    assert [json.loads(c["function"]["arguments"]) for c in reply["tool_calls"]] == list(TASKS)
    titles = [title for title, _ in documents]
    assert titles.count("explore · request 1") == 2  # each child's trace, in its block
    assert "  │ chunk 1: {" in err


def test_the_demo_with_no_stream_sends_the_plain_request(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "7", "--demo", "--no-stream", "--trace")
    assert result.exit_code == 0, result.stderr
    assert "streaming: off (--no-stream)" in result.stderr
    said = "assistant: [scripted] Two searches that do not depend on each other: explore can"
    assert said in result.stderr  # arrived whole, so shown as chapter 6 shows it
    requests = [body for title, body in traced(result.stderr) if "request" in title]
    assert len(requests) == 7
    assert not any("stream" in body or "stream_options" in body for body in requests)
    assert "chunk 1:" not in result.stderr
    assert result.stdout.startswith(ANSWER_START)


def test_max_parallel_caps_a_group_and_1_runs_the_children_one_by_one(demo_folder: Path) -> None:
    two = tutorial("run", "--chapter", "7", "--demo", "--max-parallel", "2")
    assert two.exit_code == 0, two.stderr
    assert "并行 side by side: task · task (at most 2 at once)\n" in two.stderr
    one = tutorial("run", "--chapter", "7", "--demo", "--max-parallel", "1")
    assert one.exit_code == 0, one.stderr
    assert "side by side" not in one.stderr
    # one by one, live: the second child starts before the first result is shown
    in_order(one.stderr, header(TASKS[0]["description"]), header(TASKS[1]["description"]),
             "[task → ok]\n[scripted] apply_discount")  # fmt: skip


def test_max_parallel_0_is_a_usage_error_and_help_shows_the_new_options() -> None:
    result = tutorial("run", "--chapter", "7", "--prompt", "hi", "--max-parallel", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--max-parallel': 0 is not in the range x>=1." in result.stderr
    shown = " ".join(tutorial("run", "--chapter", "7", "--help").stdout.split())
    assert "--max-parallel INTEGER RANGE" in shown and "[default: 8; x>=1]" in shown
    assert "--no-stream Send the plain request of chapters 1-6" in shown


def test_permissions_check_and_agents_work_for_chapter_7(tmp_path: Path) -> None:
    check = tutorial("permissions", "check", "--chapter", "7", "task(explore)", "--mode", "plan")
    assert check.exit_code == 0, check.stderr
    assert check.stdout.startswith("allow: task(explore)\n")
    listed = tutorial("agents", "--chapter", "7", "--workspace", str(tmp_path))
    assert listed.exit_code == 0, listed.stderr
    assert "explore\n  source: built in\n  tools: read_file, glob, grep\n" in listed.stdout


# --- over the real SDK, streamed -----------------------------------------------------------


def test_a_parent_reads_side_by_side_over_the_wire_with_stream_true(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    for name in ("a", "b", "c"):
        (workspace / f"{name}.txt").parent.mkdir(parents=True, exist_ok=True)
        (workspace / f"{name}.txt").write_text(f"{name} says hi\n", encoding="utf-8")
    reads = [(f"call_{n}", "read_file", args(path=f"{n}.txt")) for n in "abc"]
    replies = [sse(*calls_stream(*reads)), sse(*text_stream("All three ", "say hi."))]
    with ChatServer(replies) as server:
        result = tutorial(
            "run", "--chapter", "7", "--prompt", "What do the files say?",
            "--workspace", str(workspace), env=model_env(server),
        )  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "All three say hi.\n"
    assert (
        "并行 side by side: read_file · read_file · read_file (at most 8 at once)" in result.stderr
    )
    assert [(b["stream"], b["stream_options"]) for b in bodies] == [
        (True, {"include_usage": True})
    ] * 2
    assert bodies[0]["messages"][0]["content"] == SYSTEM_PROMPT
    assistant, *results = bodies[1]["messages"][2:]
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [r[2] for r in reads]
    assert [(m["tool_call_id"], m["content"].splitlines()[-1]) for m in results] == [
        (f"call_{n}", f"     1\t{n} says hi") for n in "abc"
    ]


def test_a_parent_and_a_child_over_the_wire_both_streamed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "greet.py").write_text("def greet(name):\n    return name\n", encoding="utf-8")
    replies = [
        sse(*calls_stream(task("call_1", "Where is greet defined?"))),  # the parent
        sse(*calls_stream(("call_1", "grep", args(pattern="def greet")))),  # the child
        sse(*text_stream("greet.py, ", "line 1")),  # the child answers
        sse(*text_stream("In greet.py.")),  # the parent answers
    ]
    with ChatServer(replies) as server:
        result = tutorial(
            "run", "--chapter", "7", "--prompt", "Where is greet?",
            "--workspace", str(workspace), env=model_env(server),
        )  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "In greet.py.\n"
    assert [b["messages"][0]["content"] for b in bodies] == [
        SYSTEM_PROMPT, EXPLORE_PROMPT, EXPLORE_PROMPT, SYSTEM_PROMPT
    ]  # fmt: skip
    assert all(b["stream"] is True for b in bodies)
    assert "  │ greet.py, line 1\n" in result.stderr  # the child's text, streamed, indented
    assert bodies[3]["messages"][-1]["content"] == (
        "greet.py, line 1\n\n[sub-agent explore: 2 model requests, 1 tool call]"
    )


def test_no_stream_sends_the_plain_request_over_the_wire(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hi\n", encoding="utf-8")
    replies = [
        (200, response(None, [tool_call("call_1", "read_file", args(path="a.txt"))])),
        (200, response("It says hi.")),
    ]
    with ChatServer(replies) as server:
        result = tutorial(
            "run", "--chapter", "7", "--prompt", "What does a.txt say?", "--no-stream",
            "--workspace", str(workspace), env=model_env(server),
        )  # fmt: skip
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "It says hi.\n"
    assert len(bodies) == 2
    assert not any("stream" in body or "stream_options" in body for body in bodies)


def test_ctrl_c_mid_stream_exits_130_with_no_half_message_in_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT arrives while the server still holds the answer's stream open."""
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs POSIX signals")
    main = threading.get_ident()
    release, shown = threading.Event(), threading.Event()
    histories: list[list[Message]] = []
    text_arrived = StreamingConsole.text_arrived

    def showing(console: StreamingConsole, text: str) -> None:
        text_arrived(console, text)
        shown.set()

    def run_keeping_history(task: str, agent: AgentSpec) -> str:
        histories.append([])
        return run_agent(task, agent, history=histories[-1])

    def before_event(number: int) -> None:
        if number == 2:  # the role chunk and "The answer" are out, and on the screen
            assert shown.wait(10)
            signal.pthread_kill(main, signal.SIGINT)
            release.wait(10)

    monkeypatch.setattr(loop, "run_agent", run_keeping_history)  # as chapter 1's Loop part calls it
    monkeypatch.setattr(StreamingConsole, "text_arrived", showing)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hi\n", encoding="utf-8")
    answer = [sse_data(c) for c in text_stream("The answer", " is", " never finished")]
    replies = [
        sse(*calls_stream(("call_1", "read_file", args(path="a.txt")))),
        StreamReply(answer, before_event=before_event),
    ]
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ChatServer(replies) as server:
            try:
                result = tutorial(
                    "run", "--chapter", "7", "--prompt", "What does a.txt say?",
                    "--workspace", str(workspace), env=model_env(server),
                )  # fmt: skip
            finally:
                release.set()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.exit_code == 130
    assert result.stderr.splitlines()[-1] == "已中断 interrupted."
    assert "(turn 2)\nThe answer\n" in result.stderr  # it was shown while it came...
    assert result.stdout == ""  # ...and it is no answer
    (history,) = histories
    assert [m.role for m in history] == ["system", "user", "assistant", "tool"]  # no half reply

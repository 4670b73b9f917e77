"""Chapter 8's command line: the demo, each option reaching its mechanism, the dispatcher's other
commands, and the composed agent over the real `openai` SDK, streamed, against the local server.

The option tests run the command line against the local server (chapters/ch01/tests/
chat_server.py), whose replies say how many tokens each request was (`usage`): that is
what the compaction works from, so a test decides where the context stands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from chapters.ch01.tests import cli_support
from chapters.ch01.tests.chat_server import (
    ChatServer,
    StreamReply,
    openai_error,
)
from chapters.ch01.tests.cli_support import in_order, model_env, traced_by_title
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import calls_stream, chunk, text_stream
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from chapters.ch08.demo import DEMO_PROMPT, ERROR_LINE, LOG, write_demo_workspace
from chapters.ch08.old_results import STUB_MARK
from chapters.ch08.tests.composed import args, lines_of, write_files
from shared.contract import ContractChecker
from shared.messages import Message

pytestmark = pytest.mark.usefixtures("isolated")

demo_folder = demo_folder_fixture(write_demo_workspace)

ANSWER_START = f"[scripted] Order {10_000 + ERROR_LINE} failed ({LOG}, line {ERROR_LINE})"
SAVED = ".tutorial/tool-results"
WIRE = TypeAdapter(Message)


# --- the demo ------------------------------------------------------------------------------


def test_the_demo_saves_the_log_stubs_it_compacts_and_writes_the_transcript(
    demo_folder: Path,
) -> None:
    result = tutorial("run", "--chapter", "8", "--demo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(ANSWER_START)
    assert result.stdout.endswith("(from the summary and the last reads).\n")
    err = result.stderr
    in_order(
        err,
        "context: 4,500 tokens, compact at 80% · offload over 20,000 characters · "
        "stubs after 2 requests · transcript: .tutorial/transcripts/",
        f"harness: read_file's result (61,588 characters) saved to {SAVED}/call_1.txt; "
        "the model reads about 2,000 characters of it\n",
        "[… 59,684 characters not shown …]",  # the view: its two ends
        f"[grep → ok]\nok: 1 matching lines\n{SAVED}/call_1.txt:{ERROR_LINE + 1}:",
        "harness: old tool results replaced by stubs (1,874 characters less to send)\n",
        "(turn 4)\n",
        "(turn 5, compaction)\n",
        "harness: compacted the context before request 5: ",
        "(turn 5)\n",
    )
    assert "Task: find why checkout failed" not in err  # the summary is not shown

    saved = (demo_folder / SAVED / "call_1.txt").read_text(encoding="utf-8")
    assert len(saved) == 61_588 and saved.count("\n") == 600  # the whole result: 1 + 600 lines
    assert f"{ERROR_LINE:>6}\t" in saved and "order=10600" in saved

    (transcript,) = (demo_folder / ".tutorial" / "transcripts").iterdir()
    lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    assert transcript.name in err  # the header and the compaction line name it
    assert [line["turn"] for line in lines] == sorted(line["turn"] for line in lines)
    kinds = [(line["message"]["role"], line.get("note")) for line in lines]
    assert kinds.count(("tool", None)) == 8  # every result, as it entered the history
    assert ("user", "summary") in kinds
    assert kinds[-1] == ("assistant", None)


def test_the_demos_trace_shows_the_view_the_stub_and_the_compaction_request(
    demo_folder: Path,
) -> None:
    result = tutorial("run", "--chapter", "8", "--demo", "--trace")
    assert result.exit_code == 0, result.stderr
    documents = traced_by_title(result.stderr)
    view = documents["request 2"]["messages"][3]["content"]
    assert view.endswith(f"The whole text is saved in {SAVED}/call_1.txt: read any part with "
                         "read_file (path, offset, limit), or search it with grep.]")  # fmt: skip
    assert documents["request 3"]["messages"][3]["content"] == view  # sent whole twice...
    stub = documents["request 4"]["messages"][3]["content"]
    assert stub.startswith(STUB_MARK) and f"{SAVED}/call_1.txt" in stub  # ...then as a stub
    compaction = documents["compaction request 5"]
    assert compaction["tool_choice"] == "none" and compaction["stream"] is True
    assert compaction["messages"][3]["content"] == stub  # the same bytes, request after request
    assert compaction["messages"][-1]["content"].startswith(COMPACT_MARK)
    after = documents["request 5"]["messages"]
    assert [m["role"] for m in after[:3]] == ["system", "user", "user"]
    assert after[1]["content"] == DEMO_PROMPT
    assert after[2]["content"].startswith(SUMMARY_MARK)
    assert "Task: find why checkout failed" in after[2]["content"]
    chunks = result.stderr.split("--- compaction request 5 ---")[1].split("--- compaction resp")[0]
    assert "chunk 2: " in chunks and "Task: find why checkout failed" in chunks


@pytest.mark.parametrize(
    ("extra", "shown", "stubs", "compacts"),
    [
        ([], "context: 4,500 tokens", True, True),
        (["--keep-results", "6"], "stubs after 6 requests", False, True),
        (["--context-window", "32000"], "context: 32,000 tokens", True, False),
    ],
    ids=["demo's", "keep-results", "context-window"],
)
def test_the_demo_runs_in_a_small_window_unless_told_otherwise(
    demo_folder: Path, extra: list[str], shown: str, stubs: bool, compacts: bool
) -> None:
    result = tutorial("run", "--chapter", "8", "--demo", *extra)
    assert result.exit_code == 0, result.stderr
    assert shown in result.stderr
    assert ("replaced by stubs" in result.stderr) is stubs
    assert ("compacted the context" in result.stderr) is compacts
    assert result.stdout.startswith(ANSWER_START)


def test_the_demo_with_no_stream_compacts_too(demo_folder: Path) -> None:
    result = tutorial("run", "--chapter", "8", "--demo", "--no-stream")
    assert result.exit_code == 0, result.stderr
    assert "streaming: off (--no-stream)" in result.stderr
    assert "harness: compacted the context before request 5: " in result.stderr


# --- each option reaches its mechanism, over the wire -----------------------------------------


def sse(*chunks: dict[str, Any], tokens: int | None = None) -> StreamReply:
    """A streamed reply; with `tokens`, the usage chunk saying how big the request was."""
    usage = [] if tokens is None else [chunk(None, usage={"prompt_tokens": tokens})]
    return cli_support.sse(*chunks, *usage)


def read(call_id: str, path: str, tokens: int | None = None) -> StreamReply:
    return sse(*calls_stream((call_id, "read_file", args(path=path))), tokens=tokens)


def said(text: str) -> StreamReply:
    return sse(*text_stream(text))


def run_on(tmp_path: Path, server: ChatServer, *options: str) -> Any:
    return tutorial(
        "run", "--chapter", "8", "--prompt", "Read the files.",
        "--workspace", str(tmp_path / "ws"), *options, env=model_env(server),
    )  # fmt: skip


@pytest.mark.parametrize(("extra", "saved"), [([], False), (["--offload-over", "3000"], True)])
def test_offload_over_decides_which_results_are_saved(
    tmp_path: Path, extra: list[str], saved: bool
) -> None:
    write_files(tmp_path / "ws", {"log.txt": lines_of(5_000)})
    with ChatServer([read("call_1", "log.txt"), said("done")]) as server:
        result = run_on(tmp_path, server, *extra)
        sent = server.completion_requests()[1].body["messages"][3]["content"]
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "ws" / SAVED / "call_1.txt").exists() is saved
    assert ("saved to .tutorial/tool-results/call_1.txt" in result.stderr) is saved
    assert (len(sent) < 3_000) is saved
    over = "3,000" if saved else "20,000"
    assert f"offload over {over} characters" in result.stderr


@pytest.mark.parametrize(("extra", "stubbed"), [([], False), (["--keep-results", "1"], True)])
def test_keep_results_decides_when_an_old_result_becomes_a_stub(
    tmp_path: Path, extra: list[str], stubbed: bool
) -> None:
    write_files(tmp_path / "ws", {"a.txt": lines_of(3_000), "b.txt": "b\n"})
    replies = [read("call_1", "a.txt"), read("call_2", "b.txt"), said("done")]
    with ChatServer(replies) as server:
        result = run_on(tmp_path, server, *extra)
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert not bodies[1]["messages"][3]["content"].startswith(STUB_MARK)  # sent whole once
    assert bodies[2]["messages"][3]["content"].startswith(STUB_MARK) is stubbed


def compacting_replies(compacts: bool) -> list[StreamReply]:
    """Four reads; the provider's counts put request 5 at about 3,750 tokens, after a stub at
    request 4 (keep-results 2). With a summary to give when it compacts."""
    replies = [
        read("call_1", "big.txt", tokens=2_200),  # over 20,000 characters: saved, then stubbed
        read("call_2", "a.txt", tokens=2_300),
        read("call_3", "b.txt", tokens=2_400),
        read("call_4", "c.txt", tokens=3_300),
    ]
    return [*replies, *([said("SUMMARY: four files read.")] if compacts else []), said("done")]


def write_four_files(root: Path) -> None:
    write_files(root, {"big.txt": lines_of(30_000), **{f"{n}.txt": lines_of(1_500) for n in "abc"}})


@pytest.mark.parametrize(
    ("extra", "compacts"),
    [
        (["--context-window", "4000"], True),  # 80% of it is 3,200 tokens
        (["--context-window", "4000", "--compact-at", "0.99"], False),  # 3,960 tokens
        ([], False),  # 80% of 32,000
    ],
    ids=["window", "window-and-compact-at", "defaults"],
)
def test_context_window_and_compact_at_decide_when_to_compact(
    tmp_path: Path, extra: list[str], compacts: bool
) -> None:
    write_four_files(tmp_path / "ws")
    with ChatServer(compacting_replies(compacts)) as server:
        result = run_on(tmp_path, server, "--keep-results", "2", *extra)
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    compaction = [b["messages"][-1]["content"].startswith(COMPACT_MARK) for b in bodies]
    assert compaction == [False] * 4 + ([True] if compacts else []) + [False]
    if compacts:
        assert "harness: compacted the context before request 5: " in result.stderr
        assert " tokens of 4,000 (" in result.stderr


def test_the_composed_agent_over_the_wire_streamed(tmp_path: Path) -> None:
    """Offloaded, stubbed, compacted, every request streamed through the SDK and every request
    within the message contract; the stub's bytes are the same in each request that carries it."""
    write_four_files(tmp_path / "ws")
    with ChatServer(compacting_replies(True)) as server:
        result = run_on(tmp_path, server, "--keep-results", "2", "--context-window", "4000")
        bodies = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "done\n"
    assert all(b["stream"] is True and b["stream_options"] for b in bodies)
    view, stub = bodies[1]["messages"][3]["content"], bodies[3]["messages"][3]["content"]
    assert f"{SAVED}/call_1.txt" in view and len(view) < 3_000
    assert stub.startswith(STUB_MARK) and f"{SAVED}/call_1.txt" in stub
    before, compaction, after = bodies[3], bodies[4], bodies[5]
    assert compaction["messages"][: len(before["messages"])] == before["messages"]  # a prefix
    assert compaction["tools"] == before["tools"] and compaction["tool_choice"] == "none"
    assert "tool_choice" not in after
    assert after["messages"][2]["content"].startswith(SUMMARY_MARK)
    assert after["messages"][2]["content"].endswith("SUMMARY: four files read.")
    assert after["messages"][3]["role"] == "assistant"  # the kept part starts at a reply
    for body in bodies:
        ContractChecker().check([WIRE.validate_python(m) for m in body["messages"]])


def test_a_context_length_error_ends_the_run_with_one_clear_line(tmp_path: Path) -> None:
    write_files(tmp_path / "ws", {"a.txt": "a\n"})
    too_long = openai_error("This model's maximum context length is 4096 tokens.")
    with ChatServer([read("call_1", "a.txt", tokens=1_000), (400, too_long)]) as server:
        result = run_on(tmp_path, server)
    assert result.exit_code == 1
    assert (
        "harness: the provider says the request is longer than the model's context; this "
        "harness counted " in result.stderr
    )
    assert "window (not yet full): set the window to the model's real context size" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


# --- the dispatcher's other commands, and the options' help ----------------------------------


def test_permissions_check_and_agents_work_for_chapter_8(tmp_path: Path) -> None:
    check = tutorial("permissions", "check", "--chapter", "8", "task(explore)", "--mode", "plan")
    assert check.exit_code == 0, check.stderr
    assert check.stdout.startswith("allow: task(explore)\n")
    shell = tutorial("permissions", "check", "--chapter", "8", "shell(cat big.log)")
    assert shell.stdout.startswith("ask: shell(cat big.log)\n")
    listed = tutorial("agents", "--chapter", "8", "--workspace", str(tmp_path))
    assert listed.exit_code == 0, listed.stderr
    assert "explore\n  source: built in\n  tools: read_file, glob, grep\n" in listed.stdout


def test_help_shows_the_four_options_and_a_value_out_of_range_is_a_usage_error() -> None:
    shown = " ".join(tutorial("run", "--chapter", "8", "--help").stdout.split())
    assert "--offload-over INTEGER RANGE" in shown and "[default: 20000; x>=2000]" in shown
    assert "[default: (6; --demo: 2); x>=1]" in shown
    assert "[default: (32000; --demo: 4500); x>=1000]" in shown
    assert "--compact-at FLOAT RANGE" in shown and "[default: 0.8; 0<x<=1]" in shown
    for option, value in [
        ("--offload-over", "100"),
        ("--keep-results", "0"),
        ("--context-window", "10"),
        ("--compact-at", "0"),
        ("--compact-at", "1.5"),
    ]:
        result = tutorial("run", "--chapter", "8", "--prompt", "hi", option, value)
        assert result.exit_code == 2, (option, value)
        assert f"Invalid value for '{option}'" in result.stderr

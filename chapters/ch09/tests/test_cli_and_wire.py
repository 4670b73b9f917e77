"""Chapter 9's command line: the demo's three runs, `--resume` and its errors, and sessions
resumed over the real `openai` SDK, streamed, against the local server (chapters/ch01/tests/
chat_server.py): the old history and the new prompt in the first request, a cut last line,
the repair, and a history too long for the window compacted first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import shared.approval as approval_module
from chapters.ch01.tests.chat_server import ChatServer, StreamReply
from chapters.ch01.tests.cli_support import command_line, model_env, sse, traced_requests
from chapters.ch02.tests.cli_support import demo_folder_fixture
from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.tests.support import read_audit, tutorial
from chapters.ch06.demo import write_demo_files
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from chapters.ch08.tests.composed import args, lines_of, write_files
from chapters.ch09.agent import RECIPE
from chapters.ch09.demo import FOLLOW_UP, LISTED, MEMORY, PREFERENCE, QUESTION
from chapters.ch09.memory import MEMORY_FOLDER
from chapters.ch09.repair import INTERRUPTED_CALL
from chapters.ch09.session_log import SESSIONS_FOLDER
from chapters.ch09.sessions import list_sessions, read_session
from chapters.ch09.tests.support import memory_file, memory_text

pytestmark = pytest.mark.usefixtures("isolated")

# `python -m chapters.ch09 ...`, which `python -m tutorial run --chapter 9 ...` also runs.
chapter9 = command_line(RECIPE.command(), "python -m chapters.ch09")
demo_folder = demo_folder_fixture(write_demo_files)

PROMPT = "Read the files."
NEXT = "Now tell me what b.txt says."


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A human at a terminal, who answers what stdin holds."""
    monkeypatch.setattr(approval_module, "is_terminal", lambda stream: True)


# --- the demo -----------------------------------------------------------------------------------


def test_the_demo_saves_a_memory_uses_it_in_a_new_session_and_resumes_that_session(
    demo_folder: Path, terminal: None
) -> None:
    result = chapter9("--demo", stdin="y\n")
    assert result.exit_code == 0, result.stderr
    saved, where, who = result.stdout.splitlines()
    assert saved.startswith("[scripted] Saved as the memory path-line")
    assert where.endswith("at shop/pricing.py:5.")  # as the memory asks
    assert "with_tax (shop/pricing.py:13)" in who and "shop/checkout.py:8" in who

    memory = (demo_folder / MEMORY_FOLDER / "path-line.md").read_text(encoding="utf-8")
    assert memory.startswith("---\nname: path-line\n") and MEMORY["body"] in memory
    decisions = [(a["tool"], a["decision"]) for a in read_audit(demo_folder / AUDIT_FILE)]
    assert ("memory_write", "ask") in decisions and ("memory_write", "allow") in decisions

    sessions, _ = list_sessions(demo_folder)
    by_prompt = {s.prompt: s for s in sessions}
    assert set(by_prompt) == {PREFERENCE, QUESTION}
    first, second = by_prompt[PREFERENCE], by_prompt[QUESTION]
    assert (first.runs, second.runs) == (1, 2)  # the second session was resumed once
    assert f"--resume {second.id} --prompt" in result.stderr
    assert f"harness: resuming session {second.id} (6 messages, 2 turns" in result.stderr
    said = [m.content for m in second.history if m.role == "user"]
    assert said == [QUESTION, FOLLOW_UP]


def test_without_the_memory_the_demos_new_session_answers_without_line_numbers(
    demo_folder: Path,
) -> None:
    """No terminal: memory_write is denied, run 2's prompt lists no memory, the model reads
    none, and it answers as it would have without this chapter."""
    result = chapter9("--demo")
    assert result.exit_code == 0, result.stderr
    saved, where, _ = result.stdout.splitlines()
    assert saved.startswith("[scripted] The memory was not saved: denied:")
    assert where.endswith("at shop/pricing.py.")
    assert "memory_read" not in result.stderr
    assert not (demo_folder / MEMORY_FOLDER).exists()


def test_the_demos_trace_shows_the_index_in_the_new_session_and_the_history_in_the_resumed_one(
    demo_folder: Path, terminal: None
) -> None:
    result = chapter9("--demo", "--trace", stdin="y\n")
    assert result.exit_code == 0, result.stderr
    requests = traced_requests(result.stderr, one_run=False)
    assert len(requests) == 6  # two per run
    first_run, new_session, resumed = requests[0], requests[2], requests[4]
    assert LISTED not in first_run["messages"][0]["content"]
    assert LISTED in new_session["messages"][0]["content"]
    assert MEMORY["body"] not in new_session["messages"][0]["content"]
    before = requests[3]["messages"]
    assert resumed["messages"][: len(before)] == before
    assert resumed["messages"][len(before)]["role"] == "assistant"  # run 2's answer
    assert resumed["messages"][-1] == {"role": "user", "content": FOLLOW_UP}


# --- --resume: which session, and its errors --------------------------------------------------


def test_resume_needs_a_new_prompt_and_does_not_mix_with_the_demo() -> None:
    alone = chapter9("--resume")
    assert alone.exit_code == 2
    assert '--resume goes on with a new --prompt: add --prompt "what to do next"' in alone.stderr
    with_demo = chapter9("--demo", "--resume", "abc")
    assert with_demo.exit_code == 2
    assert "--demo runs sessions of its own in a new folder; drop --resume" in with_demo.stderr


def two_sessions(root: Path) -> list[str]:
    """Two answered sessions of the workspace `root`, by hand-written logs; their ids."""
    ids = ["20260501-090000-aaaaaa", "20260501-100000-bbbbbb"]
    for number, session_id in enumerate(ids):
        path = root / SESSIONS_FOLDER / f"{session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        started = f"2026-05-01T{9 + number:02d}:00:00+00:00"
        lines = [
            {"session": {"id": session_id, "started": started, "prompt": f"task {number}"}},
            {"turn": 0, "message": {"role": "system", "content": "s"}},
            {"turn": 0, "message": {"role": "user", "content": f"task {number}"}},
            {"turn": 1, "message": {"role": "assistant", "content": "done"}},
            {"turn": 1, "end": "answered"},
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return ids


@pytest.mark.parametrize(
    ("wanted", "said"),
    [
        ("2025", "no session id in {root} is or starts with '2025'; the most recent:"),
        ("20260501-", "'20260501-' is the start of 2 session ids; give more of the one you mean:"),
    ],
    ids=["unknown", "ambiguous"],
)
def test_an_unknown_or_ambiguous_id_is_exit_2_listing_the_sessions_before_anything_starts(
    tmp_path: Path, wanted: str, said: str
) -> None:
    ids = two_sessions(tmp_path)
    result = chapter9("--resume", wanted, "--prompt", "go on")  # no model configured either
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "会话 session: " + said.format(root=tmp_path.resolve())
    assert lines[1].split()[:5] == ["ID", "STARTED", "TURNS", "ENDED", "FIRST"]
    assert [line.split()[0] for line in lines[2:4]] == [ids[1], ids[0]]  # the most recent first
    assert "第 9 章" not in result.stderr and "OPENAI" not in result.stderr


def test_resume_with_no_session_here_says_how_one_starts(tmp_path: Path) -> None:
    result = chapter9("--resume", "--prompt", "go on")
    assert result.exit_code == 2
    assert "there is no session to resume in" in result.stderr


# --- over the wire --------------------------------------------------------------------------


def read(call_id: str, path: str) -> StreamReply:
    return sse(*calls_stream((call_id, "read_file", args(path=path))))


def said(text: str) -> StreamReply:
    return sse(*text_stream(text))


def run_on(tmp_path: Path, server: ChatServer, *extra: str, prompt: str = PROMPT) -> Result:
    workspace = str(tmp_path / "ws")
    return chapter9("--prompt", prompt, "--workspace", workspace, *extra, env=model_env(server))


def bodies(server: ChatServer) -> list[dict[str, Any]]:
    return [request.body for request in server.completion_requests()]


def the_log(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "ws" / SESSIONS_FOLDER).iterdir()
    return path


def test_a_session_resumed_over_the_wire_sends_its_history_and_the_new_prompt(
    tmp_path: Path,
) -> None:
    write_files(tmp_path / "ws", {"a.txt": "alpha\n", "b.txt": "beta\n"})
    memory_file(tmp_path / "ws", "tabs", memory_text("tabs", "Python here uses tabs"))
    with ChatServer([read("call_1", "a.txt"), said("It says alpha.")]) as server:
        first = run_on(tmp_path, server)
        before = bodies(server)
    assert first.exit_code == 0, first.stderr
    assert "- tabs [feedback]: Python here uses tabs" in before[0]["messages"][0]["content"]
    log = the_log(tmp_path)
    assert f"session: {log.stem} (new) · log: .tutorial/sessions/{log.name}" in first.stderr

    with ChatServer([read("call_2", "b.txt"), said("It says beta.")]) as server:
        resumed = run_on(tmp_path, server, "--resume", log.stem[:15], prompt=NEXT)
        after = bodies(server)
    assert resumed.exit_code == 0, resumed.stderr
    assert resumed.stdout == "It says beta.\n"
    assert f"session: {log.stem} (resumed)" in resumed.stderr
    old = [*before[-1]["messages"], {"role": "assistant", "content": "It says alpha."}]
    assert after[0]["messages"] == [*old, {"role": "user", "content": NEXT}]
    assert after[0]["stream"] is True
    assert the_log(tmp_path) == log
    stored = read_session(log)
    assert (stored.runs, stored.turns, stored.ended) == (2, 4, "answered")


def test_a_killed_sessions_cut_line_is_skipped_once_and_the_repair_goes_out_and_into_the_log(
    tmp_path: Path,
) -> None:
    """A log as SIGKILL leaves it in the middle of step 4: the call's result never written,
    the next line cut half-way. Resuming repairs the history before the first request."""
    write_files(tmp_path / "ws", {"a.txt": "alpha\n"})
    with ChatServer([read("call_1", "a.txt"), said("It says alpha.")]) as server:
        assert run_on(tmp_path, server).exit_code == 0
    log = the_log(tmp_path)
    lines = log.read_text(encoding="utf-8").splitlines()
    upto = next(n for n, line in enumerate(lines) if '"role": "tool"' in line)
    log.write_text("\n".join(lines[:upto]) + '\n{"turn": 1, "mess', encoding="utf-8")

    with ChatServer([said("I will check a.txt again.")]) as server:
        resumed = run_on(tmp_path, server, "--resume", prompt=NEXT)
        sent = bodies(server)
    assert resumed.exit_code == 0, resumed.stderr
    (body,) = sent
    assert resumed.stderr.count("was cut half-way") == 1
    assert "repair: 1 interrupted call answered (call_1)" in resumed.stderr
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": INTERRUPTED_CALL,
    }
    written = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    repaired = next(line for line in written if "history" in line)
    assert repaired["note"] == "repair: 1 interrupted call answered (call_1)"
    assert written.index(repaired) < next(  # written before the new prompt's line
        n for n, line in enumerate(written) if line.get("message", {}).get("content") == NEXT
    )


BIG = {f"{n}.txt": lines_of(6_000, f"file{n}") for n in range(1, 5)}


def test_a_resumed_history_longer_than_the_window_is_compacted_before_the_first_request(
    tmp_path: Path,
) -> None:
    write_files(tmp_path / "ws", BIG)
    replies = [read(f"call_{n}", name) for n, name in enumerate(BIG, 1)]
    with ChatServer([*replies, said("Read them all.")]) as server:
        assert run_on(tmp_path, server).exit_code == 0
    with ChatServer([said("SUMMARY: four files read."), said("done")]) as server:
        resumed = run_on(tmp_path, server, "--resume", "--context-window", "4000", prompt=NEXT)
        compaction, first = bodies(server)
    assert resumed.exit_code == 0, resumed.stderr
    assert "over the 4,000-token window: compacting it before the first request" in (resumed.stderr)
    assert compaction["tool_choice"] == "none"
    assert compaction["messages"][-1]["content"].startswith(COMPACT_MARK)
    assert first["messages"][2]["content"].startswith(SUMMARY_MARK)
    assert first["messages"][-1] == {"role": "user", "content": NEXT}
    assert len(json.dumps(first["messages"])) < sum(len(text) for text in BIG.values())


def test_a_resumed_history_that_cannot_fit_ends_the_run_with_one_line_and_sends_nothing_whole(
    tmp_path: Path,
) -> None:
    write_files(tmp_path / "ws", {"a.txt": "alpha\n"})
    huge = "Keep these notes in mind. " + lines_of(20_000, "note")
    with ChatServer([read("call_1", "a.txt"), said("ok")]) as server:
        assert run_on(tmp_path, server, prompt=huge).exit_code == 0
    with ChatServer([said("SUMMARY: a.txt read.")]) as server:
        resumed = run_on(tmp_path, server, "--resume", "--context-window", "4000", prompt=NEXT)
        sent = bodies(server)
    assert resumed.exit_code == 1
    assert "the resumed session is about " in resumed.stderr
    assert "Start a new session, or resume with a larger context window" in resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert all(body["messages"][-1]["content"] != NEXT for body in sent)  # only the summary's


# --- the other commands, and the help ---------------------------------------------------------


def test_help_shows_resume_and_the_check_knows_memory_write() -> None:
    shown = " ".join(chapter9("--help").stdout.split())
    assert "--resume [ID] Go on with the most recent session of this folder" in shown

    check_command = RECIPE.subcommands()["permissions check"]

    def check(*words: str) -> str:
        result = CliRunner().invoke(check_command, list(words))
        assert result.exit_code == 0, result.output
        return result.stdout

    assert check("memory_write(tabs)").startswith("ask: memory_write(tabs)\n")
    assert check("memory_write(tabs)", "--mode", "plan").startswith("deny: memory_write(tabs)\n")
    assert check("memory_read(tabs)", "--mode", "plan").startswith("allow: memory_read(tabs)\n")


def test_the_dispatcher_runs_chapter_9_with_its_options(tmp_path: Path) -> None:
    ids = two_sessions(tmp_path)
    result = tutorial("run", "--chapter", "9", "--resume", "2025", "--prompt", "go on")
    assert result.exit_code == 2
    assert ids[1] in result.stderr and "no session id" in result.stderr
    shown = " ".join(tutorial("run", "--chapter", "9", "--help").stdout.split())
    assert "--resume [ID]" in shown and "--context-window INTEGER RANGE" in shown

"""Chapter 13's command line: its options and their checks, OPENAI_EVENT_DELIVERY, the `jobs`
listing, and runs over the real `openai` SDK, streamed, to the local server
(chapters/ch01/tests/chat_server.py): a run that waits for its job and a resumed session that
does not hear of it again, the events appended for a provider that needs it, a provider error
and Ctrl-C that leave no process of a job behind.

A reply the server streams may hold back until a job got somewhere: `before_event` releases the
job or reads its process group from a named pipe (tests/support.py). Nothing sleeps to wait.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import shared.cli as shared_cli
from chapters.ch01.tests.chat_server import ChatServer, RecordedRequest, StreamReply, openai_error
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import AgentStreams, calls_stream, text_stream
from chapters.ch13.agent import RECIPE
from chapters.ch13.jobs import JobManager
from chapters.ch13.providers import DELIVERY_VARIABLE
from chapters.ch13.tests.support import (
    BOUND,
    fifo,
    no_process_left,
    notifications,
    posix_only,
    ready,
    release,
    restore_subreaper,  # noqa: F401 (a fixture)
)
from chapters.testing import recipe_of
from shared.process import detect_shell

pytestmark = pytest.mark.usefixtures("isolated", "restore_subreaper", "no_provider_settings")

chapter13 = command_line(RECIPE.command(), "python -m chapters.ch13")  # in this process
WIDE = {"COLUMNS": "200"}


@pytest.fixture
def no_provider_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fallback and no delivery setting from the machine running the tests."""
    for name in (
        "OPENAI_FALLBACK_MODEL",
        "OPENAI_FALLBACK_BASE_URL",
        "OPENAI_FALLBACK_API_KEY",
        DELIVERY_VARIABLE,
    ):
        monkeypatch.delenv(name, raising=False)


def calls(*made: tuple[str, str, dict[str, Any]]) -> StreamReply:
    return sse(*calls_stream(*((i, name, json.dumps(a)) for i, name, a in made)))


def background(command: str) -> StreamReply:
    return calls(("c1", "shell", {"command": command, "run_in_background": True}))


def first_releasing(reply: StreamReply, gate: Path) -> StreamReply:
    """`reply`, which lets the job waiting on `gate` go on before its first event is sent:
    the request it answers was sent while the job still ran."""

    def before(index: int) -> None:
        if index == 0:
            release(gate)

    return replace(reply, before_event=before)


def bodies(server: ChatServer) -> list[dict[str, Any]]:
    return [r.body for r in server.completion_requests()]


def run13(server: ChatServer | str, workspace: Path, *args: str, **env: str) -> Any:
    return chapter13("--workspace", str(workspace), "--mode", "bypass", "--max-retries", "0",
                     *args, env={**model_env(server), **env})  # fmt: skip


# --- the options ---------------------------------------------------------------------------------


def test_help_lists_the_output_limit_and_the_wait_with_their_defaults() -> None:
    shown = " ".join(chapter13("--help").stdout.split())
    assert re.search(r"--job-output-limit BYTES .*?\[default: 52428800; x>=1\]", shown), shown
    assert re.search(r"--background-wait SECONDS .*?\[default: 600.0; 0<=x<=3600.0\]", shown)


def test_a_wait_past_an_hour_is_exit_2_before_any_request(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = run13(server, tmp_path, "--prompt", "hi", "--background-wait", "4000")
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "Invalid value for '--background-wait'" in result.stderr


def test_an_unknown_delivery_is_exit_2_with_the_fix_before_any_request(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = run13(server, tmp_path, "--prompt", "hi", **{DELIVERY_VARIABLE: "tool"})
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert (
        "OPENAI_EVENT_DELIVERY='tool' is not a way to deliver events: set it to `user`"
        in result.stderr
    )
    assert "or `append` (added to the last tool result" in result.stderr
    assert not (tmp_path / ".tutorial").exists()


# --- the listing ---------------------------------------------------------------------------------


def jobs(*args: str) -> Any:
    return tutorial("jobs", "--chapter", "13", *args, env=WIDE)


def test_no_jobs_yet_says_how_they_start(tmp_path: Path) -> None:
    result = jobs("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"No background jobs in .tutorial/jobs/ of {tmp_path.resolve()} yet: a run from this "
        "folder starts them with shell(run_in_background=true).\n"
    )
    assert not (tmp_path / ".tutorial").exists()  # listing made nothing


@posix_only
def test_two_jobs_are_listed_with_their_status_exit_code_runtime_and_command(
    tmp_path: Path,
) -> None:
    with JobManager(tmp_path, detect_shell()) as manager:
        manager.wait(manager.start("true").id, BOUND)
        manager.stop(manager.start("sleep 1000 # a\nserver").id)
    result = jobs("--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    title, header, first, second = result.stdout.splitlines()
    assert title == f"2 background jobs in .tutorial/jobs/ of {tmp_path.resolve()}:"
    assert header == "id   status     exit code  runtime  command"
    assert re.fullmatch(r"bg1  completed  0          \d+\.\ds     true", first), first
    assert re.fullmatch(r"bg2  killed     -15        \d+\.\ds     sleep 1000 # a server", second)


def test_a_job_file_that_cannot_be_read_is_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / ".tutorial" / "jobs"
    folder.mkdir(parents=True)
    (folder / "bg1.json").write_text("not json", encoding="utf-8")
    result = jobs("--workspace", str(tmp_path))
    assert result.exit_code == 0
    assert result.stderr.startswith("warning: .tutorial/jobs/bg1.json cannot be read")
    assert result.stdout.startswith("No background jobs")


def test_an_earlier_chapter_runs_no_jobs() -> None:
    earlier = tutorial("jobs", "--chapter", "12")
    assert earlier.exit_code == 2
    assert "Chapter 12 runs no background jobs; they run from chapter 13 on" in earlier.stderr


# --- over the wire -------------------------------------------------------------------------------


@posix_only
def test_over_the_wire_the_run_waits_for_its_job_and_a_resumed_session_hears_it_once(
    tmp_path: Path,
) -> None:
    gate, workspace = fifo(tmp_path, "gate"), tmp_path / "ws"
    workspace.mkdir()
    replies = [
        background(f"read x < {gate}; echo built"),
        first_releasing(sse(*text_stream("I will wait for the build.")), gate),
        sse(*text_stream("It built.")),
    ]
    with ChatServer(replies) as server:
        first = run13(server, workspace, "--prompt", "Build it in the background.")
        sent = bodies(server)
    assert first.exit_code == 0, first.stderr
    assert first.stdout == "It built.\n"
    assert [len(notifications(body)) for body in sent] == [0, 0, 1]
    assert [m["role"] for m in sent[2]["messages"][-2:]] == ["assistant", "user"]
    assert sent[2]["messages"][-1]["content"].startswith(
        "<task-notification><task-id>bg1</task-id><status>completed</status><exit-code>0"
    )
    shell = next(t for t in sent[0]["tools"] if t["function"]["name"] == "shell")
    assert shell["function"]["parameters"]["properties"]["run_in_background"] == {
        "default": False,
        "description": "Start the command and return at once with a job id; you are told when "
        "it ends. For long commands (a test suite, a build) and servers.",
        "type": "boolean",
    }
    assert (
        "background: output limit 52,428,800 bytes · waits up to 600s for a job · events: "
        "a user message (the host 127.0.0.1)" in first.stderr
    )
    assert "inbox: job bg1 came after the answer; asking again" in first.stderr

    with ChatServer([sse(*text_stream("Going on."))]) as server:
        second = run13(server, workspace, "--prompt", "Go on.", "--resume")
        [resumed] = bodies(server)
    assert second.exit_code == 0, second.stderr
    [(_, told)] = notifications(resumed)  # the history's, once: not delivered again
    assert told == sent[2]["messages"][-1]
    assert resumed["messages"][-1] == {"role": "user", "content": "Go on."}
    assert "inbox:" not in second.stderr


@posix_only
def test_over_the_wire_append_puts_the_events_at_the_end_of_the_last_tool_result(
    tmp_path: Path,
) -> None:
    gate = fifo(tmp_path, "gate")
    wait = calls(("c2", "job_output", {"job_id": "bg1", "wait_seconds": BOUND}))
    replies = [background(f"read x < {gate}; echo built"), first_releasing(wait, gate),
               sse(*text_stream("Built."))]  # fmt: skip
    with ChatServer(replies) as server:
        result = run13(server, tmp_path, "--prompt", "Build it.", **{DELIVERY_VARIABLE: "append"})
        sent = bodies(server)
    assert result.exit_code == 0, result.stderr
    assert "events: appended to the last tool result (OPENAI_EVENT_DELIVERY)" in result.stderr
    messages = sent[2]["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert messages[-1]["content"].startswith(
        "new output of bg1 since the last read:\nbuilt\nstatus: completed, exit code 0\n\n"
        "<task-notification><task-id>bg1</task-id><status>completed</status>"
    )
    assert [len(notifications(body)) for body in sent] == [0, 0, 1]


@posix_only
def test_over_the_wire_a_provider_error_leaves_no_process_of_a_job(tmp_path: Path) -> None:
    started = fifo(tmp_path, "started")
    groups: list[int] = []

    def refuse(request: RecordedRequest) -> Any:
        groups.append(int(ready(started)))
        return (400, openai_error("This request is not valid."))

    with ChatServer([background(f"echo $$ > {started}; sleep 1000")], respond=refuse) as server:
        result = run13(server, tmp_path, "--prompt", "Serve it.")
    assert result.exit_code == 1
    assert "harness: stopped 1 background job as the run ended" in result.stderr
    no_process_left(groups[0])


@posix_only
def test_ctrl_c_leaves_no_process_of_a_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started = fifo(tmp_path, "started")
    groups: list[int] = []

    def interrupt(request: Mapping[str, Any]) -> list[Any]:
        groups.append(int(ready(started)))
        return [KeyboardInterrupt()]

    command = {"command": f"echo $$ > {started}; sleep 1000", "run_in_background": True}
    model = AgentStreams(
        {"Serve it.": [calls_stream(("c1", "shell", json.dumps(command))), interrupt]}
    )
    monkeypatch.setattr(shared_cli, "select_model", lambda **_: model)
    with pytest.raises(SystemExit) as exited:
        recipe_of(13).main(["--prompt", "Serve it.", "--workspace", str(tmp_path), "--mode",
                            "bypass"])  # fmt: skip
    assert exited.value.code == 130
    err = capsys.readouterr().err
    assert "harness: stopped 1 background job as the run ended" in err
    assert "interrupted" in err
    no_process_left(groups[0])


def test_the_dispatcher_runs_chapter_13() -> None:
    result = tutorial("run", "--chapter", "13", "--demo")
    assert result.exit_code == 0, result.stderr
    assert "background: output limit 52,428,800 bytes" in result.stderr

"""The shell tool against a real shell: exit codes, stdin, cwd, decoding, caps, timeouts."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from chapters.ch01.shell_tool import ShellArgs, make_shell_tool
from chapters.ch01.tests.harness import FakeRunner
from shared import process
from shared.process import detect_shell, run_command
from shared.tools import PydanticTool, SideEffect, ToolResult, function_definition

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="uses bash syntax")


def run(tool: PydanticTool, command: str) -> ToolResult:
    return tool.run(ShellArgs(command=command))


def test_schema_is_exactly_the_contract() -> None:
    schema = function_definition(make_shell_tool(Path.cwd()))
    assert schema["function"]["name"] == "shell"
    assert schema["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The command line to run."}
        },
        "required": ["command"],
        "additionalProperties": False,
    }


def test_declares_an_execute_side_effect() -> None:
    assert make_shell_tool(Path.cwd()).side_effect is SideEffect.EXECUTE


def test_description_names_the_shell() -> None:
    description = function_definition(make_shell_tool(Path.cwd()))["function"]["description"]
    assert detect_shell().name in description


def test_no_blacklist_the_command_reaches_the_runner_as_written() -> None:
    runner = FakeRunner()
    run(make_shell_tool(Path.cwd(), runner=runner), "rm -rf ./build && echo done")
    assert runner.commands == ["rm -rf ./build && echo done"]


@posix_only
def test_success_reports_exit_code_and_output(tmp_path: Path) -> None:
    result = run(make_shell_tool(tmp_path), "echo 42")
    assert result.keyword == "ok"
    assert "exit code 0" in result.content
    assert "stdout:\n42\n" in result.content


@posix_only
def test_non_zero_exit_is_shell_failed_with_both_streams(tmp_path: Path) -> None:
    result = run(make_shell_tool(tmp_path), "echo out; echo err >&2; exit 3")
    assert result.keyword == "shell_failed"
    assert result.content.startswith("shell_failed")
    assert "exit code 3" in result.content
    assert "stdout:\nout" in result.content and "stderr:\nerr" in result.content


@posix_only
def test_runs_in_the_working_directory_it_was_given(tmp_path: Path) -> None:
    outcome = run_command("pwd", cwd=tmp_path)
    assert Path(outcome.stdout.strip()).resolve() == tmp_path.resolve()


@posix_only
def test_stdin_is_closed_so_nothing_waits_for_input(tmp_path: Path) -> None:
    # Give this process a stdin that never ends: a child that inherited it would hang.
    read_end, write_end = os.pipe()
    saved_stdin = os.dup(0)
    os.dup2(read_end, 0)
    try:
        outcome = run_command("cat; read line; echo after", cwd=tmp_path, timeout=10)
    finally:
        os.dup2(saved_stdin, 0)
        for fd in (saved_stdin, read_end, write_end):
            os.close(fd)
    assert not outcome.timed_out
    assert outcome.stdout == "after\n"


@posix_only
def test_output_is_decoded_as_utf8_with_replacement(tmp_path: Path) -> None:
    outcome = run_command(r"printf 'bad \377 good \344\275\240'", cwd=tmp_path)
    assert outcome.stdout == "bad \ufffd good 你"


@posix_only
def test_long_output_keeps_head_and_tail_with_a_visible_note(tmp_path: Path) -> None:
    outcome = run_command("seq 1 100000", cwd=tmp_path, output_limit=1000)
    assert outcome.stdout.startswith("1\n2\n3\n")
    assert outcome.stdout.rstrip().endswith("99999\n100000")
    assert "[... output truncated:" in outcome.stdout
    assert "bytes omitted of 588895" in outcome.stdout  # the exact size of `seq 1 100000`
    assert len(outcome.stdout) < 1200


@posix_only
def test_the_tools_output_cap_is_20000_bytes_per_stream_unless_raised(tmp_path: Path) -> None:
    big = "python3 -c \"print('x' * 50000)\""
    assert "[... output truncated:" in run(make_shell_tool(tmp_path), big).content
    raised = run(make_shell_tool(tmp_path, output_limit=100_000), big).content
    assert "[... output truncated:" not in raised
    assert "x" * 50_000 in raised


@posix_only
def test_timeout_is_an_explicit_result(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, timeout=0.5)
    result = run(tool, "echo started; sleep 30")
    assert result.keyword == "timeout"
    assert result.content.startswith("timeout")
    assert "0.5 s" in result.content
    assert "started" in result.content  # what it printed before the kill is kept


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits on a Linux pidfd")
def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    outcome = run_command("sleep 60 & echo $!; wait", cwd=tmp_path, timeout=1)
    assert outcome.timed_out
    grandchild = int(outcome.stdout.split()[0])
    # SIGKILL to the group is delivered asynchronously: wait for the grandchild's exit
    # as an event (a pidfd becomes readable when the process ends), at most 10 s.
    try:
        pidfd = os.pidfd_open(grandchild)
    except ProcessLookupError:
        return  # already gone
    try:
        readable, _, _ = select.select([pidfd], [], [], 10)
    finally:
        os.close(pidfd)
    assert readable, "the grandchild `sleep 60` was still running 10 s after the timeout"


@posix_only
def test_ctrl_c_while_waiting_kills_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[subprocess.Popen[bytes]] = []

    class InterruptedPopen(subprocess.Popen[bytes]):
        def wait(self, timeout: float | None = None) -> int:
            if not started:
                started.append(self)
                raise KeyboardInterrupt
            return super().wait(timeout)

    monkeypatch.setattr("shared.process.subprocess.Popen", InterruptedPopen)
    with pytest.raises(KeyboardInterrupt):
        run_command("sleep 60", cwd=tmp_path, timeout=60)
    (process,) = started
    assert process.wait(timeout=10) != 0  # killed, not left running for a minute


def test_windows_prefers_pwsh_and_forces_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "IS_WINDOWS", True)
    monkeypatch.setattr(
        "shared.process.shutil.which", lambda name: "C:/pwsh.exe" if name == "pwsh" else None
    )
    shell = detect_shell()
    assert shell.argv_prefix[0] == "pwsh" and "pwsh" in shell.name
    assert "UTF8" in shell.command_prefix


def test_windows_falls_back_to_windows_powershell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "IS_WINDOWS", True)
    monkeypatch.setattr("shared.process.shutil.which", lambda name: None)
    shell = detect_shell()
    assert shell.argv_prefix[0] == "powershell.exe"
    assert "-NonInteractive" in shell.argv_prefix


def test_elsewhere_the_shell_is_bash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "IS_WINDOWS", False)
    monkeypatch.setattr("shared.process.shutil.which", lambda name: "/usr/bin/bash")
    assert detect_shell().name == "bash"

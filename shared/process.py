"""Running a shell command: the one place that knows which shell and how to stop it.

PowerShell on Windows (pwsh where installed, else Windows PowerShell), bash
elsewhere. The command runs with stdin closed (nothing can wait for input that
will never come), in its own process group so a timeout kills the whole tree,
and with both output streams read concurrently into bounded buffers, so a
command that prints gigabytes cannot exhaust memory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

IS_WINDOWS = sys.platform == "win32"
NEW_PROCESS_GROUP: int = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)  # Windows only
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_OUTPUT_LIMIT = 20_000  # bytes kept per stream (head and tail); the rest is cut with a note


@dataclass(frozen=True)
class Shell:
    name: str  # what the tool description tells the model, e.g. "bash" or "PowerShell (pwsh)"
    argv_prefix: tuple[str, ...]
    command_prefix: str = ""  # prepended to every command, e.g. to force UTF-8 output


def detect_shell() -> Shell:
    """The shell commands run in on this machine."""
    if IS_WINDOWS:
        # PowerShell writes redirected output in the console code page; force UTF-8.
        utf8 = "[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; "
        if shutil.which("pwsh"):
            return Shell(
                "PowerShell (pwsh)", ("pwsh", "-NoProfile", "-NonInteractive", "-Command"), utf8
            )
        return Shell(
            "Windows PowerShell (powershell.exe)",
            ("powershell.exe", "-NoProfile", "-NonInteractive", "-Command"),
            utf8,
        )
    bash = shutil.which("bash")
    if bash:
        return Shell("bash", (bash, "-c"))
    return Shell("sh", ("/bin/sh", "-c"))


@dataclass(frozen=True)
class CommandOutcome:
    exit_code: int | None  # None when the command was stopped by the timeout
    stdout: str
    stderr: str
    timed_out: bool = False


class CommandRunner(Protocol):
    """Runs one command; tests pass a fake, the shell tool uses `run_command`."""

    def __call__(self, command: str, *, cwd: Path, timeout: float) -> CommandOutcome: ...


def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    shell: Shell | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    stdin_data: bytes | None = None,
) -> CommandOutcome:
    """Run `command` in `shell`, killing its whole process tree after `timeout` seconds.

    stdin is closed unless `stdin_data` is given (a hook reads its event there);
    then those bytes are written and stdin is closed after them.
    """
    shell = shell or detect_shell()
    process = subprocess.Popen(
        [*shell.argv_prefix, shell.command_prefix + command],
        cwd=cwd,
        stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=not IS_WINDOWS,  # its own process group: a timeout kills the tree
        creationflags=NEW_PROCESS_GROUP,
    )
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = _CappedBuffer(output_limit), _CappedBuffer(output_limit)
    readers = [
        threading.Thread(target=stdout.drain, args=(process.stdout,), daemon=True),
        threading.Thread(target=stderr.drain, args=(process.stderr,), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if stdin_data is not None:
        threading.Thread(target=_feed, args=(process.stdin, stdin_data), daemon=True).start()
    try:
        exit_code: int | None = process.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_tree(process)
        process.wait()
        exit_code, timed_out = None, True
    except BaseException:  # Ctrl-C while waiting: the command must not outlive the agent
        _kill_tree(process)
        raise
    for reader in readers:
        reader.join(timeout=5)  # a grandchild that escaped the group may hold the pipe open
    return CommandOutcome(exit_code, stdout.text(), stderr.text(), timed_out)


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    """Write stdin from a thread: a command that never reads must not block us."""
    assert stream is not None
    with contextlib.suppress(OSError):  # the command may exit without reading it all
        stream.write(data)
    with contextlib.suppress(OSError):
        stream.close()


def _kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and every process it started."""
    if IS_WINDOWS:
        subprocess.run(
            ["taskkill", "/F", "/T", "/PID", str(process.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    else:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()


class _CappedBuffer:
    """Keeps the first and the last `limit // 2` bytes of a stream, and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read(65536), b""):
            self.total += len(chunk)
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                del self.tail[: max(len(self.tail) - self.half, 0)]
        stream.close()

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        kept = len(self.head) + len(self.tail)
        if self.total <= kept:
            return head + self.tail.decode("utf-8", errors="replace")
        cut = self.total - kept
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n[... output truncated: {cut} bytes omitted of {self.total} ...]\n{tail}"

"""Running a shell command: the one place that knows which shell and how to stop it.

PowerShell on Windows (pwsh where installed, else Windows PowerShell), bash
elsewhere. The command runs with stdin closed (nothing can wait for input that
will never come), in its own process group so a timeout kills the whole tree,
and with both output streams read concurrently into bounded buffers, so a
command that prints gigabytes cannot exhaust memory.

With `kill_leftovers` (hooks use it) nothing the command started outlives it,
whether it ends or times out: its process group is killed, and on Linux so is
every other process still holding its output pipes, found in /proc (a `setsid`
grandchild leaves the group but keeps the pipes it inherited), each killed
through a pidfd so a recycled pid is never hit. Not covered: a process that left
the group *and* let go of the pipes (a daemon) on any system, and on Windows
anything left after the command itself exited (no job object here). None of
those delays the call: reading the output waits at most `READ_GRACE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

IS_WINDOWS = sys.platform == "win32"
NEW_PROCESS_GROUP: int = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)  # Windows only
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_OUTPUT_LIMIT = 20_000  # bytes kept per stream (head and tail); the rest is cut with a note
# After the command ended: how long both readers together may wait for the pipes to close.
# Only something that escaped every kill can make them wait that long.
READ_GRACE_SECONDS = 5.0
_LEFTOVER_ROUNDS = 5  # scan /proc again for holders that forked while being killed


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
    kill_leftovers: bool = False,
) -> CommandOutcome:
    """Run `command` in `shell`, killing its whole process tree after `timeout` seconds.

    stdin is closed unless `stdin_data` is given (a hook reads its event there);
    then those bytes are written and stdin is closed after them. `kill_leftovers`:
    also kill what the command left running when it ends (see the module docstring);
    the shell tool does not, so `server &` keeps serving after its call.
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
    # Our own copies of the read ends, to ask "does anyone still write?" (POLLHUP) and to
    # name the pipes in /proc, while the readers are free to close theirs at end of file.
    streams = (process.stdout, process.stderr) if kill_leftovers and not IS_WINDOWS else ()
    watched = [os.dup(stream.fileno()) for stream in streams]
    try:
        return _run_and_read(process, watched, timeout, output_limit, stdin_data, kill_leftovers)
    finally:
        for descriptor in watched:
            os.close(descriptor)


def _run_and_read(
    process: subprocess.Popen[bytes],
    watched: list[int],
    timeout: float,
    output_limit: int,
    stdin_data: bytes | None,
    kill_leftovers: bool,
) -> CommandOutcome:
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
    if watched:  # kill_leftovers, on a system with process groups
        _kill_group(process.pid)
        _kill_pipe_holders(watched)
    deadline = time.monotonic() + READ_GRACE_SECONDS
    for reader in readers:  # a grandchild that escaped every kill may hold a pipe open
        reader.join(timeout=max(deadline - time.monotonic(), 0.0))
    return CommandOutcome(exit_code, stdout.text(), stderr.text(), timed_out)


def _kill_group(group: int) -> None:
    """SIGKILL a process group; nothing to do if it is empty already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _kill_pipe_holders(watched: list[int]) -> None:
    """Linux: kill every other process that still holds these pipes open, via pidfds."""
    if not (hasattr(os, "pidfd_open") and os.path.isdir("/proc")):
        return  # elsewhere the bounded read is all there is
    pipes = {os.fstat(descriptor).st_ino for descriptor in watched}
    for _ in range(_LEFTOVER_ROUNDS):
        if not _written_to(watched):
            return  # every write end is closed: nobody left to find
        holders = [pid for pid in _processes() if _holds(pid, pipes)]
        if not holders:
            return
        for pid in holders:
            _kill_if_holding(pid, pipes)


def _written_to(watched: list[int]) -> bool:
    """Whether any of these pipes still has a writer (no POLLHUP on its read end)."""
    poller = select.poll()
    for descriptor in watched:
        poller.register(descriptor, select.POLLIN)
    hung_up = {fd for fd, events in poller.poll(0) if events & select.POLLHUP}
    return any(descriptor not in hung_up for descriptor in watched)


def _processes() -> list[int]:
    me = os.getpid()  # the agent holds the read ends itself
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me]


def _holds(pid: int, pipes: set[int]) -> bool:
    wanted = {f"pipe:[{inode}]" for inode in pipes}
    try:
        with os.scandir(f"/proc/{pid}/fd") as descriptors:
            for descriptor in descriptors:
                with contextlib.suppress(OSError):
                    if os.readlink(descriptor.path) in wanted:
                        return True
    except OSError:  # gone, or not ours to look at
        return False
    return False


def _kill_if_holding(pid: int, pipes: set[int]) -> None:
    """Kill `pid` through a pidfd, after checking that this very process holds a pipe."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return  # gone already
    try:
        if _holds(pid, pipes):  # the pidfd pins the process: a recycled pid holds no pipe of ours
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pidfd)


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

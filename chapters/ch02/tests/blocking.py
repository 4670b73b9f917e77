"""Calling code that might block on a named pipe or read a device without end, with a bound.

A FIFO opened the usual way waits for the other end, forever; `/dev/zero` never
ends, so reading it whole takes all the memory there is. A test of code that
must refuse them cannot simply call it: if the code is wrong, the test run hangs
or the machine runs out of memory. So:

    bounded(fifo, call)       runs `call` in a thread and waits at most
                              HANG_BOUND_SECONDS; if it is still running, it opens
                              the pipe from the other end (so the call can end) and
                              reports that it hung
    run_bounded(code)         runs Python code in a child process with a time limit
                              and a memory limit (POSIX), for reads that cannot be
                              interrupted from outside
    printed_in_bounds(*lines) what those lines print, run that way; the child must end well
    link_to_dev_zero(path)    puts a link to /dev/zero where the code will read `path`

The bounds are upper bounds for broken code, never waits for working code:
a correct call returns at once.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

HANG_BOUND_SECONDS = 10  # an upper bound for a broken call, never a wait for a working one
CHILD_SECONDS = 60  # a child process's upper bound
CHILD_MEMORY = 1 << 30  # bytes of address space a child may use: far above a correct read
REPO = Path(__file__).resolve().parents[3]

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
needs_dev_zero = pytest.mark.skipif(
    not Path("/dev/zero").exists() or sys.platform == "win32", reason="no /dev/zero here"
)


def unblock(fifo: Path) -> None:
    """Let a call stuck on `fifo` go: open it from both ends, then close (end of file)."""
    for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, flags))


def bounded(fifo: Path, call: Callable[[], object]) -> tuple[object, bool]:
    """(what `call` returned, whether it had to be unblocked)."""
    returned: list[object] = []
    worker = threading.Thread(target=lambda: returned.append(call()), daemon=True)
    worker.start()
    worker.join(HANG_BOUND_SECONDS)
    hung = worker.is_alive()
    while worker.is_alive():
        unblock(fifo)
        worker.join(0.1)
    return (returned[0] if returned else None), hung


def _limit_memory() -> None:  # pragma: no cover - runs in the child, before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def run_bounded(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` with this repository first on the path, under a time and a memory limit.

    What it prints is the test's to read; a read without end fails with MemoryError
    (a non-zero exit) instead of taking the machine's memory.
    """
    preamble = f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", preamble + code],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=CHILD_SECONDS,
        preexec_fn=_limit_memory if os.name == "posix" else None,
        check=False,
    )


def printed_in_bounds(*lines: str) -> str:
    """What the Python `lines` print when run with `run_bounded` (`Path` is imported for them).

    The child must end well: a read without end fails it (MemoryError, or the time
    limit), and its last words are the failure's message.
    """
    done = run_bounded("from pathlib import Path\n" + "".join(f"{line}\n" for line in lines))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def link_to_dev_zero(path: Path) -> None:
    """Put a link to /dev/zero at `path`, in place of any file there, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")

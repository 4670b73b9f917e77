"""What chapter 13's recipe tests share: real processes, and ways to wait for them without
sleeping.

A command tells the test it got somewhere by writing a line into a named pipe
(`ready` reads it: a job's `echo $$ > ready.fifo` hands over its process group), and
waits for the test by reading one (`release` writes it). The inbox tells the test
when a job's end was posted (`WatchedInbox`), and the console when the run starts
waiting for one (`WatchingConsole`). Every wait has a bound (`BOUND`).
"""

from __future__ import annotations

import io
import os
import select
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chapters.ch09.session_log import SessionLog
from chapters.ch11.recovery_console import RecoveryConsole
from chapters.ch11.tests.composed import STARTED, Agent11
from chapters.ch13.inbox import Event, Inbox
from chapters.ch13.jobs import is_child_subreaper, set_child_subreaper
from shared.process import CommandRunner

BOUND = 30.0  # seconds: the most any one wait in these tests may take
POSIX = sys.platform != "win32"
LINUX = sys.platform.startswith("linux")
posix_only = pytest.mark.skipif(not POSIX, reason="POSIX shell and process groups")
linux_only = pytest.mark.skipif(not LINUX, reason="reads /proc")
NOTIFICATION = "<task-notification>"


@pytest.fixture(scope="module")
def restore_subreaper() -> Iterator[None]:
    """A run's jobs make this process a child subreaper; the tests after these get it back."""
    before = is_child_subreaper()
    yield
    if before is not None:
        set_child_subreaper(before)


def group_members(group: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in `group`, zombies included, read from /proc."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        if int(fields[2]) == group:
            members.append((int(name), fields[0]))
    return members


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def ready(path: Path, timeout: float = BOUND) -> str:
    """Wait until a command writes a line into the named pipe `path`; the line."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # does not wait for a writer
    try:
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"nothing was written to {path.name} in {timeout:g} s")
            readable, _, _ = select.select([descriptor], [], [], left)
            if readable:
                data += os.read(descriptor, 4096)
    finally:
        os.close(descriptor)
    return data.decode().strip()


def release(path: Path, timeout: float = BOUND) -> None:
    """Write a line into the named pipe `path` once a command opens it to read."""
    opened: list[int] = []
    opener = threading.Thread(target=lambda: opened.append(os.open(path, os.O_WRONLY)))
    opener.start()
    opener.join(timeout)
    if not opened:
        unblock = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # lets the opener return
        opener.join(BOUND)
        os.close(unblock)
        for descriptor in opened:
            os.close(descriptor)
        raise TimeoutError(f"nothing opened {path.name} to read in {timeout:g} s")
    try:
        os.write(opened[0], b"go\n")
    finally:
        os.close(opened[0])


class WatchedInbox(Inbox):
    """An inbox that says when an event was posted (by its key)."""

    def __init__(self) -> None:
        super().__init__()
        self.posted: dict[str, threading.Event] = {}
        self._guard = threading.Lock()

    def _event(self, key: str) -> threading.Event:
        with self._guard:
            return self.posted.setdefault(key, threading.Event())

    def post(self, event: Event) -> bool:
        added = super().post(event)
        self._event(event.key).set()
        return added

    def wait_posted(self, key: str, timeout: float = BOUND) -> None:
        if not self._event(key).wait(timeout):
            raise TimeoutError(f"no event {key} was posted in {timeout:g} s")


class WatchingConsole(RecoveryConsole):
    """A plain console (recorded) that says when the run starts waiting for an event."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.waits = threading.Event()

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        with super().waiting(what):
            if what.startswith("waiting for a background event"):
                self.waits.set()
            yield


@dataclass
class Agent13(Agent11):
    """One run of chapter 13's agent in tmp_path/ws on scripted streams, real commands."""

    chapter = 13
    runner: CommandRunner | None = None  # the jobs' own runner: real processes
    inbox: WatchedInbox = field(default_factory=WatchedInbox)
    mode: str | None = "bypass"  # every command runs without asking, unless a rule denies it
    allow: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        self.console = WatchingConsole(
            out=io.StringIO(), err=io.StringIO(), fancy=False, clock=self.clock
        )

    @property
    def watching(self) -> WatchingConsole:
        assert isinstance(self.console, WatchingConsole)
        return self.console

    def given(self) -> dict[str, Any]:
        given = {**super().given(), "log": SessionLog.new(self.root, 13, STARTED)}
        given["inbox"] = self.inbox
        given["allow"], given["mode"] = self.allow, self.mode
        given["max_retries"] = 0  # a provider error ends the run at once
        return given


def notifications(request: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, message) of each message of `request` that holds a task notification."""
    return [
        (at, message)
        for at, message in enumerate(request["messages"])
        if NOTIFICATION in (message.get("content") or "")
    ]


def no_process_left(group: int) -> None:
    """No process is in the job's group, zombies included (read from /proc on Linux)."""
    if LINUX:
        assert group_members(group) == [], group_members(group)

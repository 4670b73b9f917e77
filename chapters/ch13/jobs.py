"""Background jobs: a command that runs while the agent thinks, and a foreground runner that
cannot be held up by what a command leaves behind.

    .tutorial/jobs/               below the workspace (made with chapter 3's `harness_folder`)
        bg1.log                   everything the job printed, stdout and stderr together
        bg1.json                  its state, replaced whole (chapter 2's `atomic_write`):
                                      {"id": "bg1", "command": "pytest -q",
                                       "started": "2025-05-01T09:00:00.000+00:00",
                                       "ended": null, "status": "running", "exit_code": null}
        .highwatermark            the last number handed out: ids are never given again
        .lock                     taken while an id is handed out (`filelock`)

Why files and not pipes. A pipe is done when *every* process holding its write end has
closed it, not when the shell exits. `python -m http.server & echo started` has a shell
that exits at once and a server that holds the pipe for ever, so a caller that reads the
pipe to its end waits for the server (shared/process.py waits `READ_GRACE_SECONDS`, then
gives up). A file has no end to wait for: the call is over when the shell exits, and the
file holds what was printed by then. Standard input is the null device, so a command that
asks (`read -p "(y/n)" x`) reads end-of-file and fails at once instead of waiting for a
human who is not there.

Why a process group. Killing the shell is not killing the command: `sh -c 'sleep 100 &
sleep 100'` has three processes, and the two sleeps outlive a killed `sh`. Every job is
started in a process group of its own (a new session on POSIX, CREATE_NEW_PROCESS_GROUP on
Windows), and every stop signals the whole group.

The life of a job (POSIX):

    start        the log is made (O_EXCL: one job per file), the state written, the shell
                 started in its own group; a watcher thread waits for the shell (a blocking
                 wait: the end is seen the moment it happens, nothing polls for it)
    the end      the shell exited, or was stopped. Whatever it left in its group is stopped
                 with it (TERM, then KILL after `stop_grace` seconds) and reaped, so an
                 ended job runs nothing and its log is final. Then its status (completed:
                 exit code 0; failed: any other; killed: by `stop`; output_limit), the state
                 file, `on_end(job)` exactly once, and the job's event, in that order: who
                 waits on the event finds `on_end` already called
    stop         TERM to the group; KILL to the group after `stop_grace` (2 s); returns once
                 the watcher has recorded the end (at most `KILL_BOUND_SECONDS` more)
    output limit one monitor thread for all jobs looks at each running job's log every
                 `check_interval` (0.2 s). A log past `output_limit` bytes has its group
                 killed at once (no grace: the disk is what is at risk); the log can pass the
                 limit by what the job writes in one interval

Zombies. A process whose parent exited is adopted by init, which reaps it; but in a
container init is often a program that reaps nothing, and a killed grandchild stays a
zombie of the job's group for ever. So on Linux the manager makes this process a child
subreaper (`adopt_orphans`): a job's orphans become our children, and the manager reaps
them, in the job's group only, once the job's shell has been reaped (never earlier: reaping
the shell behind `subprocess`'s back would make its exit code 0). The price: an orphan of
some other command (not in a job's group) stays a zombie of this process until it exits.
It also keeps a group's number from being handed out again while we may still signal it
(a zombie of ours holds it); where this process cannot adopt (not Linux), a group whose
last process was reaped by init could in principle be a new group by the time a late
stop signals it.

Windows has no process groups to ask about: a stop sends CTRL_BREAK to the group, then
`taskkill /F /T` to the tree; what a command left running after its shell exited is not
tracked there.

The foreground runner (`run_foreground`) keeps the same rules for the shell tool: its own
group, stdin from the null device, stdout and stderr into two temporary files. It returns
when the shell exits. A `&` child stays running in the command's process group (so
`python -m http.server &` keeps serving); `on_leftovers` is told the group, and the
manager's `run_foreground` keeps it so `stop_all` stops it with the jobs when the run ends.

Failures are data: an unknown id is `UnknownJob` (it names the jobs there are), a job that
cannot start is `JobStartError` (its reason), and a state file that cannot be written or an
`on_end` that raises is kept in `warnings`; none of them stops a watcher.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from chapters.ch02.text_files import READ_FLAGS, atomic_write, read_open_file
from chapters.ch03.harness_files import (
    CREATE_NEW,
    NO_FOLLOW,
    harness_folder,
    open_harness_file,
)
from shared.process import (
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TIMEOUT_SECONDS,
    IS_WINDOWS,
    NEW_PROCESS_GROUP,
    CommandOutcome,
    Shell,
    detect_shell,
)

JOBS_FOLDER = Path(".tutorial") / "jobs"  # below the workspace
HIGH_WATER_MARK = ".highwatermark"
LOCK_FILE = ".lock"
DEFAULT_JOB_OUTPUT_LIMIT = 50 * 2**20  # bytes of a job's log: `--job-output-limit`
STOP_GRACE_SECONDS = 2.0  # between TERM and KILL
CHECK_INTERVAL_SECONDS = 0.2  # how often the monitor looks at the logs' sizes
KILL_BOUND_SECONDS = 5.0  # after KILL: how long a stop waits for the group to be gone
LEFTOVER_POLL_SECONDS = 0.01  # while a group's last processes die (they have no event)
DEFAULT_READ_LIMIT = DEFAULT_OUTPUT_LIMIT  # bytes of new output one read returns (its tail)
LOCK_TIMEOUT = 10.0  # seconds `start` waits for another process handing out an id
MAX_RUNNING_JOBS = 16  # a start past this is refused: stop one first
MAX_MARK_BYTES = 64  # .highwatermark: a number
MAX_STATE_BYTES = 2**20  # of a state file read back (the command is in it)
MAX_WARNINGS = 100  # kept in `JobManager.warnings`; older ones are dropped
_NUMBER = re.compile(r"[0-9]{1,18}")
_JOB_FILE = re.compile(r"bg([1-9][0-9]{0,17})\.(?:json|log)")
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_PR_GET_CHILD_SUBREAPER = 37


class JobStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"  # exit code 0
    FAILED = "failed"  # any other exit code, or a signal from elsewhere
    KILLED = "killed"  # by `stop` or `stop_all`
    OUTPUT_LIMIT = "output_limit"  # its log passed the limit


@dataclass(frozen=True)
class Job:
    """One job as it was at one moment (the manager hands out copies, never its own).

    `exit_code` is the shell's; negative when a signal ended it (-15: TERM, -9: KILL), as
    `subprocess` says it. `pid` is the shell's, the leader of the job's process group; None
    for a job read back from its file."""

    id: str
    command: str
    started: str  # ISO 8601, UTC, to the millisecond
    ended: str | None = None
    status: JobStatus = JobStatus.RUNNING
    exit_code: int | None = None
    pid: int | None = None

    @property
    def log(self) -> Path:
        """Its output, relative to the workspace: what the model is told to read."""
        return JOBS_FOLDER / f"{self.id}.log"

    @property
    def running(self) -> bool:
        return self.status is JobStatus.RUNNING

    def state_bytes(self) -> bytes:
        """The state file, exactly as written: indent 2, UTF-8 as it is, one newline."""
        data = {
            "id": self.id,
            "command": self.command,
            "started": self.started,
            "ended": self.ended,
            "status": self.status.value,
            "exit_code": self.exit_code,
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass(frozen=True)
class JobOutput:
    """What one read returns: the new text, then the job's status as it was *before* the
    read (so a status that has ended means the text is the last of it)."""

    text: str
    status: JobStatus
    exit_code: int | None
    offset: int  # where the next read starts (bytes into the log)
    left_out: int = 0  # bytes of new output not returned (the read keeps the tail)


class UnknownJob(LookupError):
    """A job id that this manager never started; `known` lists the ones it did."""

    def __init__(self, job_id: str, known: Sequence[str]) -> None:
        self.job_id, self.known = job_id, tuple(known)
        there = (
            f"the jobs are: {', '.join(self.known)}"
            if self.known
            else "no background job has been started"
        )
        super().__init__(f"there is no background job {job_id!r}; {there}")


class JobStartError(Exception):
    """A job that could not be started; the message says why. No process runs for it."""


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class _Entry:
    """The manager's own record of one job; `lock` guards `job`, `reason`, `kill_at` and
    `group_gone`, and every signal sent to the group (so none is sent after it is gone)."""

    job: Job
    process: subprocess.Popen[bytes]
    read_fd: int
    ended: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    read_lock: threading.Lock = field(default_factory=threading.Lock)
    reason: JobStatus | None = None  # KILLED or OUTPUT_LIMIT once someone stops it
    kill_at: float | None = None  # monotonic: when the group gets KILL; None: no TERM sent
    group_gone: bool = False
    read_offset: int = 0  # where `read_new` goes on

    def snapshot(self) -> Job:
        with self.lock:
            return self.job


class JobManager:
    """The background jobs of one run in one workspace (see the module docstring).

    `on_end(job)` is called once per job `start` returned, from the job's watcher thread,
    after its state file is written; it must not block for long. Use the manager as a
    context manager, or call `close()`: a job still running when the run ends is stopped
    there, with its group."""

    def __init__(
        self,
        root: Path,
        shell: Shell,
        *,
        output_limit: int = DEFAULT_JOB_OUTPUT_LIMIT,
        on_end: Callable[[Job], None] | None = None,
        stop_grace: float = STOP_GRACE_SECONDS,
        check_interval: float = CHECK_INTERVAL_SECONDS,
        max_running: int = MAX_RUNNING_JOBS,
        adopt_orphans: bool = True,
    ) -> None:
        self.root = root
        self.shell = shell
        self.output_limit = output_limit
        self.on_end = on_end
        self.stop_grace = stop_grace
        self.check_interval = check_interval
        self.max_running = max_running
        self.warnings: list[str] = []
        # Linux only; a process that cannot (another system) relies on init to reap.
        self.adopts_orphans = adopt_orphans and set_child_subreaper(True)
        self._entries: dict[str, _Entry] = {}
        self._leftover_groups: list[int] = []  # of foreground commands: stopped by stop_all
        self._lock = threading.Lock()  # the entries, the monitor, the warnings
        self._start_lock = threading.Lock()  # one id handed out at a time in this process
        self._monitor: threading.Thread | None = None
        self._closing = threading.Event()
        self._closed = False

    # ---------------------------------------------------------------- starting

    def start(self, command: str) -> Job:
        """Start `command` in the background; its job, running. `JobStartError` if it cannot."""
        if not command.strip():
            raise JobStartError("the command is blank")
        with self._lock:
            if self._closed:
                raise JobStartError("the run is ending: no new background job starts")
            running = sum(1 for entry in self._entries.values() if not entry.ended.is_set())
        if running >= self.max_running:
            raise JobStartError(
                f"{running} background jobs are running, the most a run keeps; "
                "stop one (job_stop) or wait for one to end first"
            )
        try:
            folder = harness_folder(self.root, JOBS_FOLDER, create=True)
            with self._start_lock:
                job_id, write_fd = self._new_log(folder)
        except OSError as error:  # an unsafe folder, a full disk, a lock held too long
            raise JobStartError(f"{JOBS_FOLDER.as_posix()}: {error}") from None
        try:
            return self._launch(folder, job_id, command, write_fd)
        finally:
            os.close(write_fd)

    def _new_log(self, folder: Path) -> tuple[str, int]:
        """The next id, its log made (open for writing) and the high-water mark moved past it."""
        from filelock import FileLock, Timeout  # only a run that starts a job needs it

        try:
            with FileLock(folder / LOCK_FILE, timeout=LOCK_TIMEOUT):
                number = _last_number(folder)
                while True:
                    number += 1
                    job_id = f"bg{number}"
                    try:
                        write_fd = open_harness_file(
                            self.root, JOBS_FOLDER / f"{job_id}.log", CREATE_NEW | os.O_APPEND
                        )
                    except FileExistsError:  # a file the mark did not count: skip its number
                        continue
                    break
                try:
                    atomic_write(folder / HIGH_WATER_MARK, str(number).encode("ascii"))
                except BaseException:
                    os.close(write_fd)
                    raise
                return job_id, write_fd
        except Timeout:
            raise OSError(
                f"another process held {LOCK_FILE} for {LOCK_TIMEOUT:g} s; try again"
            ) from None

    def _launch(self, folder: Path, job_id: str, command: str, write_fd: int) -> Job:
        read_fd = os.open(folder / f"{job_id}.log", READ_FLAGS | NO_FOLLOW)
        try:
            if not os.path.samestat(os.fstat(read_fd), os.fstat(write_fd)):
                raise JobStartError(f"{job_id}.log was replaced while it was being made")
            job = Job(job_id, command, now_text())
            try:
                atomic_write(folder / f"{job_id}.json", job.state_bytes())
            except OSError as error:
                raise JobStartError(f"{job_id}.json cannot be written ({error})") from None
            if sys.platform != "win32":  # the harness opens without blocking; the job should not
                os.set_blocking(write_fd, True)
            try:
                process = subprocess.Popen(
                    [*self.shell.argv_prefix, self.shell.command_prefix + command],
                    cwd=self.root,
                    stdin=subprocess.DEVNULL,
                    stdout=write_fd,
                    stderr=subprocess.STDOUT,  # one file, in the order they were written
                    start_new_session=not IS_WINDOWS,
                    creationflags=NEW_PROCESS_GROUP,
                )
            except OSError as error:
                reason = f"could not start {self.shell.argv_prefix[0]}: {error}"
                with contextlib.suppress(OSError):
                    os.write(write_fd, (reason + "\n").encode("utf-8"))
                ended = replace(job, ended=now_text(), status=JobStatus.FAILED)
                self._save(folder, ended)
                raise JobStartError(reason) from None
        except BaseException:
            os.close(read_fd)
            raise
        job = replace(job, pid=process.pid)
        entry = _Entry(job, process, read_fd)
        with self._lock:
            self._entries[job_id] = entry
            if self._monitor is None:
                self._monitor = threading.Thread(
                    target=self._watch_sizes, name="jobs-monitor", daemon=True
                )
                self._monitor.start()
        threading.Thread(
            target=self._watch, args=(entry, folder), name=f"job-{job_id}", daemon=True
        ).start()
        return job

    # ---------------------------------------------------------------- the end of a job

    def _watch(self, entry: _Entry, folder: Path) -> None:
        """The job's watcher: wait for the shell, end its group, record, tell `on_end`."""
        returncode = entry.process.wait()  # blocking: no polling for the end
        if not IS_WINDOWS:
            self._end_group(entry)
        with entry.lock:
            status = entry.reason or (JobStatus.COMPLETED if returncode == 0 else JobStatus.FAILED)
            entry.job = replace(entry.job, ended=now_text(), status=status, exit_code=returncode)
            job = entry.job
        self._save(folder, job)
        if self.on_end is not None:
            try:
                self.on_end(job)
            except Exception as error:  # a broken callback must not lose the job's end
                self._warn(f"{job.id}: on_end raised {type(error).__name__}: {error}")
        entry.ended.set()

    def _end_group(self, entry: _Entry) -> None:
        """After the shell was reaped: stop and reap whatever it left in its group."""
        group = entry.process.pid
        with entry.lock:
            if not _group_alive(group):
                entry.group_gone = True
                return
            if entry.kill_at is None:  # ended on its own, leaving processes behind
                entry.kill_at = time.monotonic() + self.stop_grace
                _signal_group(group, signal.SIGTERM)
        killed_at: float | None = None
        while True:
            with entry.lock:
                if not _group_alive(group):
                    entry.group_gone = True
                    return
                assert entry.kill_at is not None
                now = time.monotonic()
                if killed_at is None and now >= entry.kill_at:
                    _signal_group(group, signal.SIGKILL)
                    killed_at = now
                elif killed_at is not None and now >= killed_at + KILL_BOUND_SECONDS:
                    entry.group_gone = True  # what is left does not die: stop trying
                    break
            time.sleep(LEFTOVER_POLL_SECONDS)  # leftovers have no event to wait on
        self._warn(
            f"{entry.job.id}: processes of its group {group} were still there "
            f"{KILL_BOUND_SECONDS:g} s after KILL"
        )

    def _save(self, folder: Path, job: Job) -> None:
        try:
            atomic_write(folder / f"{job.id}.json", job.state_bytes())
        except OSError as error:
            self._warn(f"{job.id}.json cannot be written ({error}); the job goes on")

    def _warn(self, text: str) -> None:
        with self._lock:
            self.warnings.append(text)
            del self.warnings[:-MAX_WARNINGS]

    # ---------------------------------------------------------------- the output limit

    def _watch_sizes(self) -> None:
        """The monitor: every `check_interval`, kill each running job whose log is too big.
        It ends when no job runs (the next `start` starts another)."""
        while True:
            with self._lock:
                live = [entry for entry in self._entries.values() if not entry.ended.is_set()]
                if not live:
                    self._monitor = None
                    return
            for entry in live:
                try:
                    size = os.fstat(entry.read_fd).st_size  # the job's very file, renamed or not
                except OSError:
                    continue
                if size > self.output_limit:
                    self._kill_now(entry, JobStatus.OUTPUT_LIMIT)
            self._closing.wait(self.check_interval)

    def _kill_now(self, entry: _Entry, reason: JobStatus) -> None:
        with entry.lock:
            if not entry.job.running or entry.group_gone:
                return
            entry.reason = entry.reason or reason
            entry.kill_at = time.monotonic()
            self._hard_kill(entry)

    # ---------------------------------------------------------------- stopping

    def stop(self, job_id: str) -> Job:
        """Stop the job's whole group: TERM, KILL after the grace; the job, ended (killed)
        unless it had ended already. Returns once the watcher recorded the end (bounded)."""
        entry = self._entry(job_id)
        self._stop([entry])
        return entry.snapshot()

    def stop_all(self) -> int:
        """Stop every running job (and what foreground commands left running), all at once;
        how many jobs were running. On return no process of theirs is left (see the module
        docstring for what that cannot cover)."""
        with self._lock:
            entries = list(self._entries.values())
            groups, self._leftover_groups = self._leftover_groups, []
        stopped = self._stop(entries)
        stop_groups(groups, grace=self.stop_grace)
        return stopped

    def _stop(self, entries: Iterable[_Entry]) -> int:
        stopping: list[_Entry] = []
        for entry in entries:
            with entry.lock:
                if not entry.job.running:
                    continue
                entry.reason = entry.reason or JobStatus.KILLED
                if entry.kill_at is None and not entry.group_gone:
                    entry.kill_at = time.monotonic() + self.stop_grace
                    self._soft_kill(entry)
                stopping.append(entry)
        for entry in stopping:  # the grace runs for all of them at once
            if entry.kill_at is not None:  # None: its group was gone already, nothing to kill
                entry.ended.wait(max(entry.kill_at - time.monotonic(), 0.0))
        for entry in stopping:
            with entry.lock:
                if not entry.ended.is_set() and not entry.group_gone:
                    self._hard_kill(entry)
        for entry in stopping:
            entry.ended.wait(KILL_BOUND_SECONDS + self.stop_grace)
        return len(stopping)

    def _soft_kill(self, entry: _Entry) -> None:
        """TERM to the group (Windows: CTRL_BREAK to the group). Called under `entry.lock`."""
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                os.kill(entry.process.pid, signal.CTRL_BREAK_EVENT)
        else:
            _signal_group(entry.process.pid, signal.SIGTERM)

    def _hard_kill(self, entry: _Entry) -> None:
        """KILL to the group (Windows: the tree). Called under `entry.lock`."""
        if IS_WINDOWS:
            _taskkill(entry.process.pid)
        else:
            _signal_group(entry.process.pid, signal.SIGKILL)

    def close(self) -> int:
        """The end of the run: stop everything, close the logs; how many jobs were running."""
        with self._lock:
            self._closed = True
        stopped = self.stop_all()
        self._closing.set()
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            with entry.read_lock, contextlib.suppress(OSError):
                os.close(entry.read_fd)
                entry.read_fd = -1
        return stopped

    def __enter__(self) -> JobManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- looking at jobs

    def known_ids(self) -> list[str]:
        """The ids of the jobs this manager started, oldest first."""
        with self._lock:
            return list(self._entries)

    def get(self, job_id: str) -> Job:
        return self._entry(job_id).snapshot()

    def jobs(self) -> list[Job]:
        with self._lock:
            entries = list(self._entries.values())
        return [entry.snapshot() for entry in entries]

    def wait(self, job_id: str, seconds: float) -> Job:
        """Wait for the job's end, at most `seconds`; the job as it is then."""
        entry = self._entry(job_id)
        entry.ended.wait(max(seconds, 0.0))
        return entry.snapshot()

    def output(self, job_id: str, since: int = 0, *, limit: int = DEFAULT_READ_LIMIT) -> JobOutput:
        """What the job printed from byte `since` on (at most its last `limit` bytes)."""
        entry = self._entry(job_id)
        with entry.read_lock:
            return self._read(entry, since, limit)

    def read_new(self, job_id: str, *, limit: int = DEFAULT_READ_LIMIT) -> JobOutput:
        """What the job printed since the last `read_new` (at most its last `limit` bytes)."""
        entry = self._entry(job_id)
        with entry.read_lock:
            result = self._read(entry, entry.read_offset, limit)
            entry.read_offset = result.offset
            return result

    def newest_line(self, job_id: str, *, limit: int = 4096) -> str:
        """The last line the job printed (from its last `limit` bytes), for a status line."""
        entry = self._entry(job_id)
        with entry.read_lock:
            size = os.fstat(entry.read_fd).st_size
            data = _read_at(entry.read_fd, max(size - limit, 0), min(size, limit))
        lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def _read(self, entry: _Entry, since: int, limit: int) -> JobOutput:
        job = entry.snapshot()  # first: an ended status means the log below is final
        size = os.fstat(entry.read_fd).st_size
        start = min(max(since, 0), size)
        first = max(start, size - max(limit, 1))
        data = _read_at(entry.read_fd, first, size - first)
        end = first + len(data)
        left_out = first - start
        if left_out:  # the tail may start inside a character: drop its remainder
            skip = _continuation_bytes(data)
            data, left_out = data[skip:], left_out + skip
        if job.running:  # a character half written now is read whole next time
            held = _incomplete_end(data)
            if held:
                data, end = data[:-held], end - held
        text = data.decode("utf-8", errors="replace")
        if left_out:
            text = (
                f"[... {left_out:,} bytes left out; the whole output is in "
                f"{job.log.as_posix()} ...]\n{text}"
            )
        return JobOutput(text, job.status, job.exit_code, end, left_out)

    def _entry(self, job_id: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(job_id.strip())
            if entry is None:
                raise UnknownJob(job_id, list(self._entries))
            return entry

    # ---------------------------------------------------------------- the foreground

    def run_foreground(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandOutcome:
        """`run_foreground` in the workspace, its leftovers kept for `stop_all`."""
        return run_foreground(
            command,
            cwd=self.root,
            timeout=timeout,
            shell=self.shell,
            output_limit=output_limit,
            file_limit=self.output_limit,
            on_leftovers=self._keep_leftovers,
        )

    def leftover_groups(self) -> list[int]:
        """The process groups foreground commands left running, for `stop_all` to stop."""
        with self._lock:
            return list(self._leftover_groups)

    def _keep_leftovers(self, group: int) -> None:
        with self._lock:
            self._leftover_groups.append(group)


def run_foreground(
    command: str,
    *,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    shell: Shell | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    file_limit: int = DEFAULT_JOB_OUTPUT_LIMIT,
    on_leftovers: Callable[[int], None] | None = None,
) -> CommandOutcome:
    """Run `command` in its own process group, stdin from the null device, output to files.

    Returns when the shell exits (or after `timeout` seconds, its whole group killed). Each
    stream keeps its first and last `output_limit // 2` bytes, as shared/process.py does.
    Output past `file_limit` bytes (both files together, looked at every
    `CHECK_INTERVAL_SECONDS`) kills the group too: the files are on disk. POSIX: if the
    shell left processes in its group (`server &`), they keep running and `on_leftovers`
    gets the group's id; `stop_groups` stops them. OSError if the shell cannot be started.
    """
    shell = shell or detect_shell()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [*shell.argv_prefix, shell.command_prefix + command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=not IS_WINDOWS,
            creationflags=NEW_PROCESS_GROUP,
        )
        ended = threading.Event()

        def wait_for_shell() -> None:
            process.wait()  # blocking; the caller waits on the event, with its bounds
            ended.set()

        threading.Thread(target=wait_for_shell, name="foreground-wait", daemon=True).start()
        deadline = time.monotonic() + timeout
        stopped_by = ""
        try:
            while not ended.wait(min(CHECK_INTERVAL_SECONDS, max(deadline - time.monotonic(), 0))):
                if time.monotonic() >= deadline:
                    stopped_by = "timeout"
                elif _size(out) + _size(err) > file_limit:
                    stopped_by = "output"
                if stopped_by:
                    break
        except BaseException:  # Ctrl-C while waiting: the command must not outlive the agent
            _kill_at_once(process)
            raise
        if stopped_by:
            _kill_at_once(process)
        elif not IS_WINDOWS and on_leftovers is not None and _group_alive(process.pid):
            on_leftovers(process.pid)
        stdout, stderr = _head_and_tail(out, output_limit), _head_and_tail(err, output_limit)
    if stopped_by == "output":
        note = (
            f"[stopped: the command printed more than {file_limit:,} bytes; "
            "its whole process group was killed]"
        )
        return CommandOutcome(None, stdout, f"{stderr}\n{note}" if stderr else note)
    if stopped_by == "timeout":
        return CommandOutcome(None, stdout, stderr, timed_out=True)
    return CommandOutcome(process.returncode, stdout, stderr)


def _kill_at_once(process: subprocess.Popen[bytes]) -> None:
    """KILL the command's group now, reap the shell, then reap the rest (bounded)."""
    if IS_WINDOWS:
        _taskkill(process.pid)
        process.kill()
        process.wait()
        return
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()
    _await_gone([process.pid], time.monotonic() + KILL_BOUND_SECONDS)


def stop_groups(groups: Sequence[int], *, grace: float = STOP_GRACE_SECONDS) -> bool:
    """POSIX: stop these process groups (TERM, KILL after `grace`) and reap what is ours;
    whether all are gone. Only for groups whose leader was already reaped (a command's
    leftovers): reaping a leader here would take its exit code from `subprocess`."""
    if IS_WINDOWS or not groups:
        return True
    for group in groups:
        _signal_group(group, signal.SIGTERM)
    if _await_gone(groups, time.monotonic() + grace):
        return True
    for group in groups:
        _signal_group(group, signal.SIGKILL)
    return _await_gone(groups, time.monotonic() + KILL_BOUND_SECONDS)


def _await_gone(groups: Sequence[int], deadline: float) -> bool:
    while any(_group_alive(group) for group in groups):
        if time.monotonic() >= deadline:
            return False
        time.sleep(LEFTOVER_POLL_SECONDS)  # leftovers have no event to wait on
    return True


def _group_alive(group: int) -> bool:
    """Whether any process, a zombie included, is still in `group`, after reaping the ones
    that are ours (the job's orphans, adopted). The group's leader must be reaped already."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-group, os.WNOHANG)[0] != 0:
            pass
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member that is not ours to signal: still there
        return True
    return True


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _taskkill(pid: int) -> None:
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            ["taskkill", "/F", "/T", "/PID", str(pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=KILL_BOUND_SECONDS,
        )


def set_child_subreaper(on: bool) -> bool:
    """Linux: make this process (or stop it being) the reaper of its descendants' orphans;
    whether it worked. False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def is_child_subreaper() -> bool | None:
    """Linux: whether this process is a child subreaper; None where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        value = ctypes.c_int(0)
        if int(libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)) != 0:
            return None
        return bool(value.value)
    except (OSError, AttributeError):
        return None


# -------------------------------------------------------------------- files


def _last_number(folder: Path) -> int:
    """The high-water mark, or the highest bgN a file in the folder has, whichever is more."""
    last = 0
    try:
        data = read_open_file(os.open(folder / HIGH_WATER_MARK, READ_FLAGS | NO_FOLLOW), 65)
        text = data.decode("ascii", errors="replace").strip()
        if len(data) <= MAX_MARK_BYTES and _NUMBER.fullmatch(text):
            last = int(text)
    except (OSError, ValueError):  # missing, or not a plain file: the names still count
        pass
    with os.scandir(folder) as entries:
        for entry in entries:
            found = _JOB_FILE.fullmatch(entry.name)
            if found:
                last = max(last, int(found.group(1)))
    return last


def read_saved_jobs(root: Path) -> tuple[list[Job], list[str]]:
    """The jobs whose state files are in the workspace, by number, and a warning per file
    that cannot be read. A job of a run that was killed may still say `running`."""
    try:
        folder = harness_folder(root, JOBS_FOLDER)
        names = sorted(
            (int(found.group(1)), name)
            for name in os.listdir(folder)
            if (found := _JOB_FILE.fullmatch(name)) and name.endswith(".json")
        )
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"{JOBS_FOLDER.as_posix()} cannot be read ({error})"]
    jobs: list[Job] = []
    warnings: list[str] = []
    for _, name in names:
        try:
            data = read_open_file(os.open(folder / name, READ_FLAGS | NO_FOLLOW), MAX_STATE_BYTES)
            jobs.append(_job_from(json.loads(data)))
        except (OSError, ValueError, KeyError, TypeError) as error:
            warnings.append(f"{(JOBS_FOLDER / name).as_posix()} cannot be read ({error})")
    return jobs, warnings


def _job_from(data: Any) -> Job:
    exit_code = data["exit_code"]
    ended = data["ended"]
    if not (exit_code is None or isinstance(exit_code, int)) or not (
        ended is None or isinstance(ended, str)
    ):
        raise ValueError("not a job's state")
    return Job(
        id=str(data["id"]),
        command=str(data["command"]),
        started=str(data["started"]),
        ended=ended,
        status=JobStatus(data["status"]),
        exit_code=exit_code,
    )


def _read_at(descriptor: int, offset: int, count: int) -> bytes:
    """`count` bytes from `offset` (fewer at the end of the file). Callers hold a read lock."""
    os.lseek(descriptor, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    while count > 0:
        chunk = os.read(descriptor, min(count, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _continuation_bytes(data: bytes) -> int:
    """How many bytes at the start continue a character begun before them (at most 3)."""
    count = 0
    while count < min(3, len(data)) and data[count] & 0xC0 == 0x80:
        count += 1
    return count


def _incomplete_end(data: bytes) -> int:
    """How many bytes at the end are a character not yet written whole (0 to 3)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead
        need = (
            2
            if byte >> 5 == 0b110
            else 3
            if byte >> 4 == 0b1110
            else 4
            if byte >> 3 == 0b11110
            else 1
        )
        return back if need > back else 0
    return 0


def _size(file: IO[bytes]) -> int:
    return os.fstat(file.fileno()).st_size


def _head_and_tail(file: IO[bytes], limit: int) -> str:
    """The file's first and last `limit // 2` bytes, with shared/process.py's note between."""
    half = max(limit // 2, 1)
    size = _size(file)
    file.seek(0)
    if size <= 2 * half:
        return file.read(size).decode("utf-8", errors="replace")
    head = file.read(half)
    file.seek(size - half)
    tail = file.read(half)
    cut = size - 2 * half
    return (
        f"{head.decode('utf-8', errors='replace')}\n"
        f"[... output truncated: {cut} bytes omitted of {size} ...]\n"
        f"{tail.decode('utf-8', errors='replace')}"
    )

"""Background jobs and the foreground runner, with real processes.

Nothing here sleeps to wait. A test waits on the job's own event (`wait`, `stop`), or on a
named pipe the command writes to when it has got where the test needs it (`ready`), or
opens a pipe the command reads from, to let it go on (`release`); every wait has a bound.
Whether a process is left is read from /proc (Linux): a process whose process group is the
job's, in any state, zombies included, is a leftover.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chapters.ch13.jobs import (
    DEFAULT_JOB_OUTPUT_LIMIT,
    JOBS_FOLDER,
    STOP_GRACE_SECONDS,
    Job,
    JobManager,
    JobStartError,
    JobStatus,
    UnknownJob,
    is_child_subreaper,
    read_saved_jobs,
    run_foreground,
    set_child_subreaper,
    stop_groups,
)
from chapters.ch13.tests.support import BOUND, fifo, group_members, ready, release
from shared.process import Shell, detect_shell

POSIX = sys.platform != "win32"
LINUX = sys.platform.startswith("linux")
posix_only = pytest.mark.skipif(not POSIX, reason="POSIX shell and process groups")
linux_only = pytest.mark.skipif(not LINUX, reason="reads /proc")
PYTHON = shlex.quote(sys.executable)

pytestmark = posix_only  # the commands below are bash; Windows runs PowerShell


@pytest.fixture(autouse=True, scope="module")
def _restore_subreaper() -> Iterator[None]:
    """The manager makes this process a child subreaper; the tests after these get it back
    as it was."""
    before = is_child_subreaper()
    yield
    if before is not None:
        set_child_subreaper(before)


class Ends:
    """`on_end`: every job it was called with, in order."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self._lock = threading.Lock()

    def __call__(self, job: Job) -> None:
        with self._lock:
            self.jobs.append(job)

    def ids(self) -> list[str]:
        with self._lock:
            return [job.id for job in self.jobs]


@pytest.fixture
def ends() -> Ends:
    return Ends()


@pytest.fixture
def manager(tmp_path: Path, ends: Ends) -> Iterator[JobManager]:
    with JobManager(tmp_path, detect_shell(), on_end=ends) as jobs:
        yield jobs


def opened_to_write(path: Path, timeout: float = BOUND) -> int:
    """A descriptor writing into the named pipe `path`, once a command opens it to read:
    the command is then at that point of its script."""
    opened: list[int] = []
    opener = threading.Thread(target=lambda: opened.append(os.open(path, os.O_WRONLY)))
    opener.start()
    opener.join(timeout)
    if not opened:
        unblock = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        opener.join(BOUND)
        os.close(unblock)
        raise TimeoutError(f"nothing opened {path.name} to read in {timeout:g} s")
    return opened[0]


def ended(jobs: JobManager, job: Job) -> Job:
    result = jobs.wait(job.id, BOUND)
    assert not result.running, f"{job.id} still running after {BOUND:g} s"
    return result


# ---------------------------------------------------------------------------- a job's life


def test_a_job_runs_in_the_background_and_its_end_is_recorded(
    manager: JobManager, ends: Ends, tmp_path: Path
) -> None:
    job = manager.start("echo out; echo err >&2")
    assert (job.id, job.status, job.exit_code, job.ended) == ("bg1", JobStatus.RUNNING, None, None)
    assert job.log == Path(".tutorial/jobs/bg1.log")
    done = ended(manager, job)
    assert (done.status, done.exit_code) == (JobStatus.COMPLETED, 0)
    assert (tmp_path / done.log).read_text() == "out\nerr\n"  # both streams, one file
    state = json.loads((tmp_path / JOBS_FOLDER / "bg1.json").read_text())
    assert state == {
        "id": "bg1",
        "command": "echo out; echo err >&2",
        "started": done.started,
        "ended": done.ended,
        "status": "completed",
        "exit_code": 0,
    }
    assert ends.jobs == [done]  # called once, before the event `wait` returned on


def test_a_command_that_fails_is_failed_with_its_exit_code(manager: JobManager, ends: Ends) -> None:
    done = ended(manager, manager.start("echo no; exit 3"))
    assert (done.status, done.exit_code) == (JobStatus.FAILED, 3)
    assert manager.read_new(done.id).text == "no\n"
    assert ends.ids() == ["bg1"]


def test_the_state_file_says_running_until_the_end(manager: JobManager, tmp_path: Path) -> None:
    job = manager.start("sleep 100")
    state = json.loads((tmp_path / JOBS_FOLDER / f"{job.id}.json").read_text())
    assert (state["status"], state["ended"], state["exit_code"]) == ("running", None, None)
    manager.stop(job.id)
    state = json.loads((tmp_path / JOBS_FOLDER / f"{job.id}.json").read_text())
    assert state["status"] == "killed" and state["ended"] is not None
    leftovers = [p.name for p in (tmp_path / JOBS_FOLDER).iterdir() if p.name.startswith(".bg")]
    assert leftovers == []  # no temporary file of an atomic write was left behind


def test_ids_count_up_per_workspace_and_are_never_reused(tmp_path: Path) -> None:
    with JobManager(tmp_path, detect_shell()) as first:
        ids = [first.start("true").id, first.start("true").id]
        for job_id in ids:
            first.wait(job_id, BOUND)
    assert ids == ["bg1", "bg2"]
    folder = tmp_path / JOBS_FOLDER
    assert (folder / ".highwatermark").read_text() == "2"
    for name in ("bg2.log", "bg2.json"):  # the newest job's files are deleted
        (folder / name).unlink()
    with JobManager(tmp_path, detect_shell()) as second:
        assert second.start("true").id == "bg3"  # the mark remembers bg2
    (folder / ".highwatermark").write_text("not a number")
    (folder / "bg7.log").write_text("")  # a file the mark does not count: its number is taken
    with JobManager(tmp_path, detect_shell()) as third:
        assert third.start("true").id == "bg8"
    assert (folder / ".highwatermark").read_text() == "8"


def test_stdin_is_the_null_device_so_a_question_fails_at_once(
    manager: JobManager, tmp_path: Path
) -> None:
    done = ended(manager, manager.start('read -p "(y/n)" answer; echo "read: $?"'))
    assert done.status is JobStatus.COMPLETED
    assert manager.read_new(done.id).text.endswith("read: 1\n")  # end of file, not a wait
    started = time.monotonic()
    outcome = run_foreground('read -p "(y/n)" answer', cwd=tmp_path, timeout=BOUND)
    assert outcome.exit_code == 1 and not outcome.timed_out
    assert time.monotonic() - started < 5


@linux_only
def test_a_job_writes_to_its_log_file_in_a_process_group_of_its_own(
    manager: JobManager, tmp_path: Path
) -> None:
    command = "readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2; cut -d' ' -f5 /proc/$$/stat"
    done = ended(manager, manager.start(command))
    stdin, stdout, stderr, group = manager.read_new(done.id).text.splitlines()
    log = str((tmp_path / done.log).resolve())
    assert (stdin, stdout, stderr) == ("/dev/null", log, log)  # a file, not a pipe
    assert int(group) == done.pid  # the shell leads its own group
    assert done.pid != os.getpgrp()


# ---------------------------------------------------------------------------- stopping


@linux_only
def test_stop_leaves_no_process_of_the_job_zombies_included(
    manager: JobManager, ends: Ends
) -> None:
    job = manager.start("sh -c 'sleep 100 & sleep 100'")
    stopped = manager.stop(job.id)
    assert (stopped.status, stopped.exit_code) == (JobStatus.KILLED, -15)
    assert group_members(job.pid or 0) == []
    assert ends.jobs == [stopped]


@linux_only
def test_stop_reaches_children_the_shell_started(
    manager: JobManager, ends: Ends, tmp_path: Path
) -> None:
    signal_ready = fifo(tmp_path, "ready")
    job = manager.start("sh -c 'sleep 100 & sleep 100 & echo > ready; wait'")
    ready(signal_ready)
    assert len(group_members(job.pid or 0)) >= 3  # sh (bash may exec it) and two sleeps
    assert manager.stop(job.id).status is JobStatus.KILLED
    assert group_members(job.pid or 0) == []
    assert ends.ids() == [job.id]


@linux_only
def test_a_group_that_ignores_term_gets_kill_after_the_grace(tmp_path: Path, ends: Ends) -> None:
    assert STOP_GRACE_SECONDS == 2.0
    signal_ready = fifo(tmp_path, "ready")
    with JobManager(tmp_path, detect_shell(), on_end=ends, stop_grace=0.5) as jobs:
        job = jobs.start("trap '' TERM; sleep 100 & echo > ready; wait")
        ready(signal_ready)  # the trap is set: TERM is ignored by the shell and by sleep
        started = time.monotonic()
        stopped = jobs.stop(job.id)
        took = time.monotonic() - started
    assert (stopped.status, stopped.exit_code) == (JobStatus.KILLED, -9)
    assert 0.5 <= took < 0.5 + 5
    assert group_members(job.pid or 0) == []
    assert ends.ids() == [job.id]


@linux_only
def test_stop_all_stops_every_running_job_and_counts_them(manager: JobManager, ends: Ends) -> None:
    finished = ended(manager, manager.start("true"))
    running = [manager.start("sleep 100 & sleep 100") for _ in range(3)]
    assert manager.stop_all() == 3
    assert manager.stop_all() == 0
    for job in running:
        assert manager.get(job.id).status is JobStatus.KILLED
        assert group_members(job.pid or 0) == []
    assert manager.get(finished.id).status is JobStatus.COMPLETED  # an ended job stays so
    assert sorted(ends.ids()) == ["bg1", "bg2", "bg3", "bg4"]  # once each


def test_stopping_an_ended_job_changes_nothing(manager: JobManager, ends: Ends) -> None:
    done = ended(manager, manager.start("exit 2"))
    assert manager.stop(done.id) == done
    assert ends.ids() == [done.id]


@linux_only
def test_what_a_job_leaves_behind_ends_with_it(manager: JobManager, ends: Ends) -> None:
    done = ended(manager, manager.start("sleep 100 & echo started"))
    assert (done.status, done.exit_code) == (JobStatus.COMPLETED, 0)
    assert group_members(done.pid or 0) == []  # already gone when the end was recorded
    assert manager.read_new(done.id).text == "started\n"
    assert ends.ids() == [done.id]


@linux_only
def test_a_leftover_that_ignores_term_is_killed_after_the_grace(tmp_path: Path) -> None:
    with JobManager(tmp_path, detect_shell(), stop_grace=0.3) as jobs:
        done = ended(jobs, jobs.start("(trap '' TERM; exec sleep 100) & echo started"))
        assert done.status is JobStatus.COMPLETED
        assert group_members(done.pid or 0) == []


# ---------------------------------------------------------------------------- the output limit


@linux_only
def test_a_job_that_prints_too_much_is_killed_at_the_limit(tmp_path: Path, ends: Ends) -> None:
    assert DEFAULT_JOB_OUTPUT_LIMIT == 50 * 2**20
    limit = 200_000
    with JobManager(tmp_path, detect_shell(), on_end=ends, output_limit=limit) as jobs:
        job = jobs.start("while true; do echo flood; done")
        done = ended(jobs, job)
        assert (tmp_path / done.log).stat().st_size > limit
        assert jobs.stop_all() == 0
    assert (done.status, done.exit_code) == (JobStatus.OUTPUT_LIMIT, -9)
    assert group_members(job.pid or 0) == []
    assert ends.jobs == [done]


def test_a_job_under_the_limit_is_left_alone(tmp_path: Path) -> None:
    with JobManager(tmp_path, detect_shell(), output_limit=10_000) as jobs:
        done = ended(jobs, jobs.start(f"{PYTHON} -c \"print('x' * 9_000)\""))
    assert done.status is JobStatus.COMPLETED


# ---------------------------------------------------------------------------- reading output


def test_read_new_returns_what_is_new_then_the_status(manager: JobManager, tmp_path: Path) -> None:
    go = fifo(tmp_path, "go")
    job = manager.start("echo first; read x < go; echo second")
    writer = opened_to_write(go)  # the job reads `go`: "first" is in the log
    try:
        assert manager.read_new(job.id) == manager.output(job.id, 0)
        first = manager.output(job.id, 0)
        assert (first.text, first.status, first.exit_code) == ("first\n", "running", None)
        assert manager.read_new(job.id).text == ""  # nothing new yet
        os.write(writer, b"go\n")
    finally:
        os.close(writer)
    ended(manager, job)
    rest = manager.read_new(job.id)
    assert (rest.text, rest.status, rest.exit_code) == ("second\n", "completed", 0)
    assert manager.read_new(job.id).text == ""
    assert manager.output(job.id, since=0).text == "first\nsecond\n"
    assert manager.output(job.id, since=first.offset).text == "second\n"


def test_a_character_half_written_is_read_whole_later(manager: JobManager, tmp_path: Path) -> None:
    go = fifo(tmp_path, "go")
    job = manager.start(r"printf 'a\303'; read x < go; printf '\251'")
    writer = opened_to_write(go)
    try:
        early = manager.read_new(job.id)
        assert (early.text, early.offset) == ("a", 1)  # not "a\ufffd"
        os.write(writer, b"go\n")
    finally:
        os.close(writer)
    ended(manager, job)
    assert manager.read_new(job.id).text == "é"


def test_a_big_output_is_cut_to_its_tail_with_a_note(manager: JobManager) -> None:
    done = ended(manager, manager.start(f"{PYTHON} -c \"print('é' * 50_000, end='')\""))
    total = 100_000  # bytes: two per character
    result = manager.read_new(done.id, limit=1_001)  # the cut falls inside a character
    note, body = result.text.split("\n", 1)
    where = ".tutorial/jobs/bg1.log"
    assert note == f"[... {result.left_out:,} bytes left out; the whole output is in {where} ...]"
    assert body == "é" * 500
    assert result.left_out + len(body.encode()) == total
    assert result.offset == total


def test_wait_returns_at_the_end_or_after_the_time(manager: JobManager, tmp_path: Path) -> None:
    go = fifo(tmp_path, "go")
    job = manager.start("read x < go")
    started = time.monotonic()
    assert manager.wait(job.id, 0.2).running
    assert time.monotonic() - started >= 0.2
    release(go)
    started = time.monotonic()
    assert manager.wait(job.id, BOUND).status is JobStatus.COMPLETED
    assert time.monotonic() - started < 5  # the end, not the time


def test_newest_line_is_the_last_line_printed(manager: JobManager) -> None:
    done = ended(manager, manager.start("printf 'one\\ntwo\\n\\n'"))
    assert manager.newest_line(done.id) == "two"


# ---------------------------------------------------------------------------- failures as data


def test_an_unknown_job_names_the_jobs_there_are(manager: JobManager) -> None:
    with pytest.raises(UnknownJob, match="no background job has been started"):
        manager.get("bg1")
    done = ended(manager, manager.start("true"))
    for look in (
        manager.get,
        manager.stop,
        manager.read_new,
        manager.output,
        manager.newest_line,
        lambda job_id: manager.wait(job_id, 0),
    ):
        with pytest.raises(UnknownJob) as raised:
            look("bg9")
        assert raised.value.known == ("bg1",)
        assert str(raised.value) == "there is no background job 'bg9'; the jobs are: bg1"
    assert manager.known_ids() == [done.id]


def test_on_end_that_raises_does_not_lose_the_end(tmp_path: Path) -> None:
    calls: list[str] = []

    def broken(job: Job) -> None:
        calls.append(job.id)
        raise RuntimeError("inbox full")

    with JobManager(tmp_path, detect_shell(), on_end=broken) as jobs:
        done = ended(jobs, jobs.start("true"))
        assert done.status is JobStatus.COMPLETED
        assert jobs.warnings == ["bg1: on_end raised RuntimeError: inbox full"]
    assert calls == ["bg1"]


def test_a_job_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    missing = Shell("missing", (str(tmp_path / "no-such-shell"), "-c"))
    with JobManager(tmp_path, missing) as jobs:
        with pytest.raises(JobStartError, match="could not start"):
            jobs.start("true")
        with pytest.raises(JobStartError, match="blank"):
            jobs.start("  ")
        assert jobs.known_ids() == []
    state = json.loads((tmp_path / JOBS_FOLDER / "bg1.json").read_text())
    assert state["status"] == "failed"  # its id is spent, and its file says why
    assert "could not start" in (tmp_path / JOBS_FOLDER / "bg1.log").read_text()


def test_a_jobs_folder_that_leads_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".tutorial").symlink_to(outside, target_is_directory=True)
    with (
        JobManager(workspace, detect_shell()) as jobs,
        pytest.raises(JobStartError, match="leads outside"),
    ):
        jobs.start("true")
    assert list(outside.iterdir()) == []


def test_running_jobs_are_bounded_and_a_closed_manager_starts_none(tmp_path: Path) -> None:
    with JobManager(tmp_path, detect_shell(), max_running=1) as jobs:
        jobs.start("sleep 100")
        with pytest.raises(JobStartError, match="1 background jobs are running"):
            jobs.start("true")
    with pytest.raises(JobStartError, match="the run is ending"):
        jobs.start("true")


def test_the_saved_jobs_are_read_back(manager: JobManager, tmp_path: Path) -> None:
    done = ended(manager, manager.start("exit 1"))
    (tmp_path / JOBS_FOLDER / "bg2.json").write_text("{not json")
    saved, warnings = read_saved_jobs(tmp_path)
    assert saved == [Job(done.id, done.command, done.started, done.ended, JobStatus.FAILED, 1)]
    assert len(warnings) == 1 and warnings[0].startswith(".tutorial/jobs/bg2.json")
    assert read_saved_jobs(tmp_path / "nowhere") == ([], [])


# ---------------------------------------------------------------------------- the foreground


@linux_only
def test_the_foreground_returns_when_the_shell_exits_not_when_its_child_does(
    manager: JobManager,
) -> None:
    started = time.monotonic()
    outcome = manager.run_foreground(
        f"{PYTHON} -m http.server 0 --bind 127.0.0.1 & echo started", timeout=BOUND
    )
    took = time.monotonic() - started
    assert (outcome.exit_code, outcome.stdout, outcome.timed_out) == (0, "started\n", False)
    assert took < 3  # with pipes this call waits for the server (shared/process.py: 5 s)
    [group] = manager.leftover_groups()  # the server, still serving in the command's group
    assert group_members(group) != []
    assert manager.stop_all() == 0  # no job; the leftover is stopped all the same
    assert group_members(group) == []
    assert manager.leftover_groups() == []


@linux_only
def test_foreground_leftovers_are_stopped_by_stop_groups(tmp_path: Path) -> None:
    groups: list[int] = []
    outcome = run_foreground(
        "sleep 100 & echo started", cwd=tmp_path, timeout=BOUND, on_leftovers=groups.append
    )
    assert outcome.stdout == "started\n"
    assert len(groups) == 1 and group_members(groups[0]) != []
    assert stop_groups(groups, grace=STOP_GRACE_SECONDS)
    assert group_members(groups[0]) == []


@linux_only
def test_a_foreground_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    groups: list[int] = []
    started = time.monotonic()
    outcome = run_foreground(
        "echo $$; sleep 100 & sleep 100", cwd=tmp_path, timeout=0.5, on_leftovers=groups.append
    )
    assert outcome.timed_out and outcome.exit_code is None
    assert time.monotonic() - started < 5
    assert groups == []  # nothing left to keep
    assert group_members(int(outcome.stdout)) == []


def test_the_foreground_keeps_both_streams_and_the_exit_code(tmp_path: Path) -> None:
    outcome = run_foreground("echo out; echo err >&2; exit 4", cwd=tmp_path, timeout=BOUND)
    assert (outcome.exit_code, outcome.stdout, outcome.stderr) == (4, "out\n", "err\n")


def test_the_foreground_keeps_the_head_and_the_tail_of_a_long_output(tmp_path: Path) -> None:
    command = f"{PYTHON} -c \"print('a' * 5000 + 'b' * 5000, end='')\""
    outcome = run_foreground(command, cwd=tmp_path, timeout=BOUND, output_limit=100)
    assert outcome.stdout == (
        "a" * 50 + "\n[... output truncated: 9900 bytes omitted of 10000 ...]\n" + "b" * 50
    )


def test_foreground_output_past_the_file_limit_is_stopped(tmp_path: Path) -> None:
    outcome = run_foreground(
        "while true; do echo flood; done", cwd=tmp_path, timeout=BOUND, file_limit=100_000
    )
    assert outcome.exit_code is None and not outcome.timed_out
    assert outcome.stderr.endswith(
        "[stopped: the command printed more than 100,000 bytes; its whole process group was killed]"
    )

"""One run's background jobs: a job's end becomes an event in the inbox, and the run's end
stops every job.

    RunJobs            per run, shared by the agent and its children: one `JobManager`
                       (chapters/ch13/jobs.py), made when the first command runs, so a run
                       that runs none starts no thread and adopts no orphan. A job that
                       starts is expected by the inbox (`expect("job:bg1")`); its end posts
                       its task notification and says done, in that order
    StopJobsAtEnd      the main agent's last word: however the run ends (an answer, an
                       error, Ctrl-C), every job still running is stopped with its group,
                       and so is whatever a foreground `cmd &` left running; stderr says
                       `stopped N background jobs`
    JobsOfThisSession  a resumed session (chapter 9) finds its jobs in its history (the
                       shell's `started background job bg1` results) and their ends in
                       their state files: an end the history already holds is delivered,
                       never again; one that came after the last request (a job stopped
                       when the run ended) goes with the first request of this run

A notification's text is made from the job's state alone (its id, status, exit code,
log and command), so the same end read back from its file is the same text, and
`delivered_in` finds it in the history.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chapters.ch13.inbox import JOB_SOURCE, Event, Inbox, delivered_in, task_notification
from chapters.ch13.jobs import (
    DEFAULT_JOB_OUTPUT_LIMIT,
    STOP_GRACE_SECONDS,
    Job,
    JobManager,
    JobStatus,
    UnknownJob,
    read_saved_jobs,
)
from shared.agent import Feature, Run
from shared.messages import Message, ToolMessage
from shared.process import DEFAULT_OUTPUT_LIMIT, CommandOutcome, Shell

COMMAND_CHARS = 200  # of a command, in a notification's summary
STARTED = "started background job"  # how the shell's result begins; a resumed run reads it
_STARTED_ID = re.compile(rf"^{STARTED} (bg[1-9][0-9]*)\b", re.M)


def expected(job_id: str) -> str:
    """The inbox's name for a job that may still post: `job:bg1`."""
    return f"{JOB_SOURCE}:{job_id}"


def notification_of(job: Job) -> Event:
    """The task notification of an ended job, in Claude Code's envelope."""
    command = " ".join(job.command.split())
    if len(command) > COMMAND_CHARS:
        command = command[: COMMAND_CHARS - 1] + "…"
    said = {
        JobStatus.COMPLETED: f"completed (exit code {job.exit_code})",
        JobStatus.FAILED: f"failed (exit code {job.exit_code})",
        JobStatus.KILLED: "was stopped",
        JobStatus.OUTPUT_LIMIT: "was killed: its output passed the limit (--job-output-limit)",
        JobStatus.RUNNING: "is running",
    }[job.status]
    return task_notification(
        job.id,
        job.status.value,
        f'Background command "{command}" {said}',
        exit_code=job.exit_code,
        output_file=job.log,
    )


class RunJobs:
    """The jobs of one run and its children, and the inbox their ends go to."""

    def __init__(
        self,
        root: Path,
        shell: Shell,
        inbox: Inbox,
        *,
        output_limit: int = DEFAULT_JOB_OUTPUT_LIMIT,
        stream_limit: int = DEFAULT_OUTPUT_LIMIT,
        stop_grace: float = STOP_GRACE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.shell = shell
        self.inbox = inbox
        self.output_limit = output_limit  # bytes of a log: the job is killed past it
        self.stream_limit = stream_limit  # bytes a foreground call keeps of each stream
        self.stop_grace = stop_grace
        self.clock = clock
        self.wait_until: float | None = None  # while the run waits for an event (the view)
        self._manager: JobManager | None = None
        self._lock = threading.Lock()

    def manager(self) -> JobManager:
        """The run's manager, made at the first command (after `close`, a new one)."""
        with self._lock:
            if self._manager is None:
                self._manager = JobManager(
                    self.root,
                    self.shell,
                    output_limit=self.output_limit,
                    on_end=self._ended,
                    stop_grace=self.stop_grace,
                )
            return self._manager

    def started(self, job_id: str) -> JobManager:
        """The manager that started `job_id`; `UnknownJob` (naming the jobs there are) if
        none did. Asking about a job starts no manager."""
        with self._lock:
            manager = self._manager
        if manager is None:
            raise UnknownJob(job_id, [])
        manager.get(job_id)  # raises UnknownJob
        return manager

    def start(self, command: str) -> Job:
        """Start `command` in the background; `JobStartError` if it cannot start."""
        manager = self.manager()
        job = manager.start(command)
        self.inbox.expect(expected(job.id))
        if not manager.get(job.id).running:  # it ended before `expect`: its done came first
            self.inbox.done(expected(job.id))
        return job

    def run_foreground(self, command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
        """A `CommandRunner` (shared/process.py): the command in its own group, stdin from
        the null device, output to files; what it leaves running is stopped with the jobs.
        `cwd` is `root`: the shell tool is made for the folder the jobs run in."""
        return self.manager().run_foreground(
            command, timeout=timeout, output_limit=self.stream_limit
        )

    def running(self) -> list[Job]:
        with self._lock:
            manager = self._manager
        return [] if manager is None else [job for job in manager.jobs() if job.running]

    def _ended(self, job: Job) -> None:
        """The manager's `on_end`, on the job's watcher thread: its event first, then done."""
        self.inbox.post(notification_of(job))
        self.inbox.done(expected(job.id))

    def close(self) -> tuple[int, int, list[str]]:
        """Stop every job and what foreground commands left running: how many jobs, how many
        process groups left behind, and the manager's warnings."""
        with self._lock:
            manager, self._manager = self._manager, None
        if manager is None:
            return 0, 0, []
        leftovers = len(manager.leftover_groups())
        stopped = manager.close()
        return stopped, leftovers, list(manager.warnings)


@dataclass
class StopJobsAtEnd(Feature):
    """However the run ends, nothing it started in the background outlives it."""

    jobs: RunJobs

    def on_end(self, run: Run, error: BaseException | None) -> None:
        stopped, leftovers, warnings = self.jobs.close()
        console = run.agent.console
        if stopped:
            console.notice(f"harness: stopped {_jobs(stopped)} as the run ended")
        if leftovers:
            console.notice(
                f"harness: stopped what {leftovers} foreground command"
                f"{'s' if leftovers != 1 else ''} left running (`cmd &`) as the run ended"
            )
        for warning in warnings:
            console.notice(f"harness: background jobs: {warning}")


def _jobs(count: int) -> str:
    return f"{count} background job{'s' if count != 1 else ''}"


@dataclass
class JobsOfThisSession(Feature):
    """A resumed session: the ends of its jobs reach the model once, across the pause."""

    inbox: Inbox
    root: Path

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        ids = started_in(run.history)
        if not ids:
            return ()
        saved, _ = read_saved_jobs(self.root)  # a file that cannot be read: nothing to say
        events = [notification_of(job) for job in saved if job.id in ids and not job.running]
        held = delivered_in(run.history, events)
        self.inbox.delivered(event for event in events if event.ident in held)
        for event in events:
            if event.ident not in held:
                self.inbox.post(event)  # the first request of this run carries it
        return ()


def started_in(history: Sequence[Message]) -> set[str]:
    """The ids of the jobs the history's shell results say were started."""
    return {
        found
        for message in history
        if isinstance(message, ToolMessage)
        for found in _STARTED_ID.findall(message.content)
    }

"""Chapter 13's tools: chapter 1's shell, which may run a command in the background, and two
tools for what runs there.

    shell       {command, timeout?, run_in_background?}. The same tool as chapter 1's to
                everything that judges a call: its name, its key argument (`command`, a
                command line) and its side effect (`execute`), so the policy, the hooks and
                the human decide exactly as before; running in the background never
                changes a decision. In the foreground it runs through chapters/ch13/jobs.py's
                runner (own process group, stdin from the null device, output to files), so
                `server & echo started` returns at once; `timeout` (1 to 600 s, default 60)
                bounds it. In the background it answers at once:
                `started background job bg1 (output: .tutorial/jobs/bg1.log)`
    job_output  {job_id, wait_seconds?}: what the job printed since the last read (its
                tail, capped; chapter 8 saves a big one as any result, and shows its first
                and last lines), then its status (running, completed, failed, killed,
                output_limit) and, once ended, its exit code. `wait_seconds` (0 to 600)
                waits for the end first
    job_stop    {job_id}: TERM to the job's whole process group, KILL after 2 s

An id this run did not start is `invalid_arguments`, naming the jobs there are. Both job
tools go to children too: a job is the run's, whoever started it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch01.shell_tool import ShellArgs, describe_outcome
from chapters.ch13.jobs import (
    DEFAULT_READ_LIMIT,
    STOP_GRACE_SECONDS,
    JobStartError,
    JobStatus,
    UnknownJob,
)
from chapters.ch13.run_jobs import STARTED, RunJobs
from shared.process import (
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TIMEOUT_SECONDS,
    CommandOutcome,
    CommandRunner,
    Shell,
    detect_shell,
)
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, Status, ToolResult

MAX_TIMEOUT_SECONDS = 600.0  # of a foreground call
MAX_WAIT_SECONDS = 600.0  # job_output's wait for the end


class BackgroundShellArgs(ShellArgs):
    """Chapter 1's `{"command": ...}`, a timeout, and whether to run in the background."""

    timeout: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="Seconds a foreground command may take before it is stopped (1 to 600).",
    )
    run_in_background: bool = Field(
        default=False,
        description=(
            "Start the command and return at once with a job id; you are told when it ends. "
            "For long commands (a test suite, a build) and servers."
        ),
    )


def make_background_shell(
    cwd: Path,
    jobs: RunJobs,
    *,
    runner: CommandRunner | None = None,
    shell: Shell | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> PydanticTool:
    """The shell tool, in the folder `jobs` runs in. `runner` (a test's) runs the foreground
    calls in place of the jobs' runner; `output_limit` is what they keep of each stream."""
    shell = shell or detect_shell()
    run_foreground: CommandRunner = runner or jobs.run_foreground

    def run(args: BackgroundShellArgs) -> ToolResult:
        if args.run_in_background:
            return start(jobs, args.command)
        outcome = run_foreground(args.command, cwd=cwd, timeout=args.timeout)
        return foreground_result(args.command, outcome, args.timeout)

    return PydanticTool(
        name="shell",
        description=(
            f"Run one command in {shell.name} in the agent's working directory and get "
            "its exit code, stdout and stderr. Each call starts a fresh shell; standard "
            "input is empty, so a command that asks a question fails. With "
            "run_in_background the call returns at once with a job id, you are told when "
            "the job ends, job_output reads what it printed and job_stop stops it. Whether "
            "a command may run is decided the same way in the foreground and the background."
        ),
        args_model=BackgroundShellArgs,
        side_effect=SideEffect.EXECUTE,
        run=run,
        key=KeyArgument("command", KeyKind.COMMAND),  # what a rule such as shell(git:*) matches
    )


def start(jobs: RunJobs, command: str) -> ToolResult:
    try:
        job = jobs.start(command)
    except JobStartError as error:
        return ToolResult.failed("job_not_started", f"{error}; nothing runs for it.")
    return ToolResult.success(
        f"{STARTED} {job.id} (output: {job.log.as_posix()})\n"
        f"It runs while you go on; a message will tell you when it ends. Meanwhile "
        f'job_output {{"job_id": "{job.id}"}} shows what it printed, job_stop stops it.'
    )


def foreground_result(command: str, outcome: CommandOutcome, timeout: float) -> ToolResult:
    """Chapter 1's words, and one more case: output past the job output limit."""
    if outcome.exit_code is None and not outcome.timed_out:
        return ToolResult.failed(
            "output_limit",
            f"the command `{command}` printed more than the limit and was stopped (its whole "
            f"process group was killed).\nstdout:\n{outcome.stdout}\nstderr:\n{outcome.stderr}",
        )
    return describe_outcome(command, outcome, timeout)


# --- job_output and job_stop ------------------------------------------------------------------


class JobOutputArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, description="The job's id, as shell gave it: bg1.")
    wait_seconds: float = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="Wait up to this many seconds for the job to end first (0 to 600).",
    )


class JobStopArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, description="The job's id, as shell gave it: bg1.")


def make_job_tools(jobs: RunJobs, *, read_limit: int = DEFAULT_READ_LIMIT) -> list[PydanticTool]:
    """job_output and job_stop on the run's jobs; a read returns at most `read_limit` bytes
    (the newest)."""

    def job_output(args: JobOutputArgs) -> ToolResult:
        try:
            manager = jobs.started(args.job_id)
            if args.wait_seconds > 0:
                manager.wait(args.job_id, args.wait_seconds)
            read = manager.read_new(args.job_id, limit=read_limit)
        except UnknownJob as error:
            return unknown(error)
        text = read.text.rstrip("\n") if read.text.strip() else "(none)"
        if read.status is JobStatus.RUNNING:
            status = "status: running"
            if args.wait_seconds > 0:
                status += f" (still, after waiting {args.wait_seconds:g} s)"
        else:
            status = f"status: {read.status.value}, exit code {read.exit_code}"
        return ToolResult.success(
            f"new output of {args.job_id.strip()} since the last read:\n{text}\n{status}"
        )

    def job_stop(args: JobStopArgs) -> ToolResult:
        try:
            manager = jobs.started(args.job_id)
            before = manager.get(args.job_id)
            after = manager.stop(args.job_id)
        except UnknownJob as error:
            return unknown(error)
        if not before.running or after.status is not JobStatus.KILLED:
            return ToolResult.success(
                f"job {after.id} had already ended ({after.status.value}, exit code "
                f"{after.exit_code}); nothing was stopped"
            )
        return ToolResult.success(
            f"stopped job {after.id}: its process group got TERM, then KILL if still there "
            f"after {STOP_GRACE_SECONDS:g} s; status: {after.status.value}, exit code "
            f"{after.exit_code}"
        )

    return [
        PydanticTool(
            name="job_output",
            description=(
                "What a background job printed since the last read (the newest part of it), "
                "then its status: running, completed, failed, killed or output_limit, and "
                "once ended its exit code. wait_seconds waits for the job to end first."
            ),
            args_model=JobOutputArgs,
            side_effect=SideEffect.READ,
            run=job_output,
            key=KeyArgument("job_id"),
            concurrency_safe=True,
        ),
        PydanticTool(
            name="job_stop",
            description=(
                "Stop a background job this run started, with every process it started; "
                "its status becomes killed."
            ),
            args_model=JobStopArgs,
            side_effect=SideEffect.STATE,
            run=job_stop,
            key=KeyArgument("job_id"),
        ),
    ]


def unknown(error: UnknownJob) -> ToolResult:
    return ToolResult.failed("invalid_arguments", f"{error}; the call did not run.", Status.INVALID)

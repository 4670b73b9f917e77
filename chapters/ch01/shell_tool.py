"""The one tool of chapter 1: `shell`.

There is no blacklist of "dangerous" commands here on purpose: a blacklist is
bypassed by rewriting the command (`rm -rf` → `find -delete` → a Python
one-liner) and gives a false sense of safety. The only guard in this chapter is
the human who approves each call, which is why the tool declares an `execute`
side effect. The shell is not a sandbox; chapters 2 and 3 add boundaries.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.process import (
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TIMEOUT_SECONDS,
    CommandOutcome,
    CommandRunner,
    Shell,
    detect_shell,
    run_command,
)
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult


class ShellArgs(BaseModel):
    """`{"command": "..."}` and nothing else."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The command line to run.")

    @field_validator("command")
    @classmethod
    def _not_blank(cls, command: str) -> str:
        if not command.strip():
            raise ValueError("command must not be blank")
        return command


def make_shell_tool(
    cwd: Path,
    *,
    runner: CommandRunner | None = None,
    shell: Shell | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> PydanticTool:
    """The shell tool, bound to the working directory the agent started in.

    `output_limit`: the bytes kept of each stream (its head and tail), so one
    command cannot flood the history; a harness that keeps long output
    elsewhere can raise it. A `runner` that is passed in applies its own.
    """
    shell = shell or detect_shell()
    if runner is None:

        def runner(command: str, *, cwd: Path, timeout: float) -> CommandOutcome:
            return run_command(
                command, cwd=cwd, timeout=timeout, shell=shell, output_limit=output_limit
            )

    def run(args: ShellArgs) -> ToolResult:
        outcome = runner(args.command, cwd=cwd, timeout=timeout)
        return describe_outcome(args.command, outcome, timeout)

    return PydanticTool(
        name="shell",
        description=(
            f"Run one command in {shell.name} in the agent's working directory and get "
            "its exit code, stdout and stderr. Each call starts a fresh shell. "
            "A human must approve every call."
        ),
        args_model=ShellArgs,
        side_effect=SideEffect.EXECUTE,
        run=run,
        key=KeyArgument("command", KeyKind.COMMAND),  # what a rule such as shell(git:*) matches
    )


def describe_outcome(command: str, outcome: CommandOutcome, timeout: float) -> ToolResult:
    """Word the result so even a small model sees that the call happened and what came of it."""
    streams = f"stdout:\n{_or_empty(outcome.stdout)}\nstderr:\n{_or_empty(outcome.stderr)}"
    if outcome.timed_out:
        return ToolResult.failed(
            "timeout",
            f"the command `{command}` did not finish within {timeout:g} s and was "
            f"stopped (its whole process tree was killed).\n{streams}",
        )
    if outcome.exit_code != 0:
        return ToolResult.failed(
            "shell_failed",
            f"the command `{command}` ran; exit code {outcome.exit_code} "
            f"(non-zero: the command reports a failure).\n{streams}",
        )
    return ToolResult.success(f"ok: the command `{command}` ran; exit code 0.\n{streams}")


def _or_empty(text: str) -> str:
    return text.rstrip("\n") if text.strip() else "(empty)"

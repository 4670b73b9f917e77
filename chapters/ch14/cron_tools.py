"""cron_create, cron_delete, cron_list: the schedule as the model uses it.

    cron_create {cron, prompt, recurring?, durable?}   a job; answers its id and next fire
    cron_delete {id}                                   remove a job
    cron_list   {}                                     every job, two lines each

The argument names are Claude Code's (CronCreate, CronDelete, CronList), so a
model trained on its tools calls these without being taught. The model never
keeps time: it says when, in a cron expression, and the harness fires the
prompt as a new turn (chapters/ch14/schedule.py).

They change only the schedule, the agent's own state (`SideEffect.STATE`):
nobody is asked, and the audit log records each call. A fire is a turn like
any other, and every call in it is judged by the same rules. cron_list only
reads, so it may run beside other calls.

Results start with their keyword when they fail:

    invalid_arguments   the cron expression, naming the field (a step of 0, a value out of
                        range, a sixth field, L, W, ?, #, @reboot), or an empty or long prompt
    schedule_full       `MAX_JOBS` jobs are scheduled already
    unknown_job         no job has that id; the text lists the ids there are
    error               the schedule's file is busy, unreadable or malformed
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch14.cron import parse_cron
from chapters.ch14.schedule import (
    MAX_JOBS,
    MAX_PROMPT,
    SCHEDULE_FILE,
    Schedule,
    ScheduledJob,
    ScheduleError,
    ScheduleFull,
    UnknownScheduledJob,
    job_brief,
    job_line,
    local_time,
    read_durable,
)
from shared.console import waited
from shared.tools import PydanticTool, SideEffect, Status, Tool, ToolResult

CRON_CREATE = "cron_create"
CRON_DELETE = "cron_delete"
CRON_LIST = "cron_list"
CRON_TOOLS = (CRON_CREATE, CRON_DELETE, CRON_LIST)

STAY_NOTE = (
    "note: this run ends after its answer (--stay-for 0), so a job kept for this run only "
    "never fires; use durable: true, or run with --stay-for SECONDS"
)

# A model may send an id of digits only as a number: `"id": 12345678` names job "12345678".
_ARGS = ConfigDict(extra="forbid", str_strip_whitespace=True, coerce_numbers_to_str=True)


class CronCreateArgs(BaseModel):
    model_config = _ARGS

    cron: str = Field(
        description="Standard 5-field cron expression in the machine's local time zone: "
        'minute hour day-of-month month day-of-week. "*/5 * * * *" is every 5 minutes, '
        '"0 9 * * 1-5" is 9:00 on weekdays, "30 14 4 12 *" with recurring false is once, '
        "at 14:30 on December 4."
    )
    prompt: str = Field(
        description=f"The prompt to run when the job fires (at most {MAX_PROMPT:,} characters)."
    )
    recurring: bool = Field(
        default=True,
        description="true: fire at every match until deleted, or expired 7 days after it was "
        "created. false: fire once, at the next match, then delete the job.",
    )
    durable: bool = Field(
        default=False,
        description="true: keep the job in the project's schedule file, so it survives this "
        "run. false: this run only.",
    )


class CronDeleteArgs(BaseModel):
    model_config = _ARGS

    id: str = Field(description="A job id, as cron_create answered it or cron_list shows it.")


class CronListArgs(BaseModel):
    model_config = _ARGS


def created_text(schedule: Schedule, job: ScheduledJob, *, stays: bool) -> str:
    """cron_create's answer: the id, the schedule in words, the next fire, how long it lives."""
    words = parse_cron(job.cron).words()
    if job.expires_at is not None:
        kind = f"recurring (expires {local_time(job.expires_at)})"
    else:
        kind = "recurring (permanent)" if job.recurring else "one-shot"
    where = f"durable: in {SCHEDULE_FILE.as_posix()}" if job.durable else "this run only"
    now, fire = schedule.clock.now(), schedule.next_fire(job)
    wait = how_long(math.ceil((fire - now).total_seconds()))
    text = (
        f"created {job.id}: {words}; next fire {local_time(fire)} (local time, in {wait}; "
        f"it is {local_time(now)} now); {kind}; {where}"
    )
    if not stays and not job.durable:
        text += f"\n{STAY_NOTE}"
    return text


def how_long(seconds: int) -> str:
    """`2s`, `1m05s`, `23h19m`, `6d23h`: a wait as long as a week, said in two units at most."""
    if seconds < 3_600:
        return waited(seconds)
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours}h{minutes:02d}m" if hours < 24 else f"{hours // 24}d{hours % 24}h"


def list_text(schedule: Schedule) -> str:
    """cron_list's answer: `job_line` for each job, soonest first, or "no scheduled jobs"."""
    jobs = schedule.jobs()
    _, warnings = read_durable(schedule.root)
    # The time first: a model knows today's date (chapter 10) but not the hour, and "in ten
    # minutes" is a cron expression only once the hour is known. To the minute, as cron is:
    # a list asked again in the same minute is the same result (chapter 11's repeat guard).
    lines = [f"it is {schedule.clock.now().astimezone():%Y-%m-%d %H:%M} now (local time)"]
    lines += [job_line(job, schedule.next_fire(job)) for job in jobs] or ["no scheduled jobs"]
    lines += [f"warning: {warning}" for warning in warnings]
    return "\n".join(lines)


def make_cron_tools(schedule: Schedule, *, stays: bool) -> list[Tool]:
    """The three cron tools over one schedule. `stays`: the run stays after its answer
    (--stay-for > 0), so a job of this run only can fire; when not, cron_create says so."""

    def create(args: CronCreateArgs) -> ToolResult:
        def made() -> ToolResult:
            job = schedule.create(
                args.cron, args.prompt, recurring=args.recurring, durable=args.durable
            )
            return ToolResult.success(created_text(schedule, job, stays=stays))

        return _guarded(made)

    def delete(args: CronDeleteArgs) -> ToolResult:
        def deleted() -> ToolResult:
            job = schedule.delete(args.id)
            return ToolResult.success(f"deleted {job.id} ({job_brief(job)})")

        return _guarded(deleted)

    def listed(args: CronListArgs) -> ToolResult:
        return _guarded(lambda: ToolResult.success(list_text(schedule)))

    return [
        PydanticTool(
            name=CRON_CREATE,
            description=(
                "Schedule a prompt to run later, as a new turn, once or on a recurring "
                "schedule: a 5-field cron expression in local time. The harness keeps the "
                "time; you do not need to wait or poll. cron_list says the local time now. "
                "Recurring jobs expire after 7 days; "
                f"at most {MAX_JOBS} jobs. Answers with the job's id and its next fire time."
            ),
            args_model=CronCreateArgs,
            side_effect=SideEffect.STATE,
            run=create,
        ),
        PydanticTool(
            name=CRON_DELETE,
            description="Delete a scheduled job by its id.",
            args_model=CronDeleteArgs,
            side_effect=SideEffect.STATE,
            run=delete,
        ),
        PydanticTool(
            name=CRON_LIST,
            description=(
                "List the scheduled jobs: id, cron expression, what it means, next fire, "
                "recurring or one-shot, durable or this run only, and the prompt."
            ),
            args_model=CronListArgs,
            side_effect=SideEffect.STATE,
            run=listed,
            concurrency_safe=True,
        ),
    ]


def _guarded(action: Callable[[], ToolResult]) -> ToolResult:
    """`action`'s result, or the failure the model reads, starting with its keyword."""
    try:
        return action()
    except ValueError as error:  # a CronError is one: its message names the field
        return ToolResult.failed("invalid_arguments", str(error), Status.INVALID)
    except ScheduleFull as error:
        return ToolResult.failed("schedule_full", str(error))
    except UnknownScheduledJob as error:
        return ToolResult.failed("unknown_job", str(error))
    except ScheduleError as error:
        return ToolResult.failed("error", str(error))

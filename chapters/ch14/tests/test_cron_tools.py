"""The cron tools as the model reads them: what a call answers, and the keyword a failure
starts with. Each call goes through the tool's own validation, as the loop sends it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chapters.ch14.cron_tools import (
    CRON_CREATE,
    CRON_DELETE,
    CRON_LIST,
    CRON_TOOLS,
    STAY_NOTE,
    make_cron_tools,
)
from chapters.ch14.schedule import MAX_JOBS, SCHEDULE_FILE, Schedule, job_line
from chapters.ch14.tests.support import utc as utc  # a fixture
from chapters.ch14.tests.test_schedule import run_at, write_file
from shared.tools import SideEffect, Status, Tool, ToolResult

pytestmark = pytest.mark.usefixtures("utc")


def call(tools: list[Tool], name: str, arguments: dict[str, Any]) -> ToolResult:
    (tool,) = [tool for tool in tools if tool.name == name]
    validated = tool.validate(arguments)
    assert not isinstance(validated, str), validated
    return tool.invoke(validated)


def tools_at(root: Path, *, stays: bool = True) -> tuple[list[Tool], Schedule]:
    schedule, _ = run_at(root)
    return make_cron_tools(schedule, stays=stays), schedule


def test_the_tools_have_claude_codes_arguments_and_change_only_state(tmp_path: Path) -> None:
    tools, _ = tools_at(tmp_path)
    assert tuple(tool.name for tool in tools) == CRON_TOOLS
    properties = {tool.name: list(tool.parameters["properties"]) for tool in tools}
    assert properties == {
        CRON_CREATE: ["cron", "prompt", "recurring", "durable"],
        CRON_DELETE: ["id"],
        CRON_LIST: [],
    }
    assert {tool.side_effect for tool in tools} == {SideEffect.STATE}
    assert [tool.concurrency_safe for tool in tools] == [False, False, True]
    (create,) = [tool for tool in tools if tool.name == CRON_CREATE]
    assert isinstance(create.validate({"cron": "* * * * *", "prompt": "x", "when": 1}), str)


def test_cron_create_answers_the_id_the_words_the_next_fire_and_its_life(tmp_path: Path) -> None:
    tools, schedule = tools_at(tmp_path)
    result = call(tools, CRON_CREATE, {"cron": "*/5 * * * *", "prompt": "check the build"})
    (job,) = schedule.jobs()
    assert result.status is Status.OK
    assert result.content == (
        f"created {job.id}: Every fifth minute of every hour; next fire 2026-12-04 10:00:00 "
        "(local time, in 2s; it is 2026-12-04 09:59:58 now); recurring (expires 2026-12-11 "
        "09:59:58); this run only"
    )
    result = call(
        tools,
        CRON_CREATE,
        {"cron": "0 10 * * *", "prompt": "once", "recurring": False, "durable": True},
    )
    job = next(each for each in schedule.jobs() if each.durable)
    assert result.content == (
        f"created {job.id}: At 10:00 every day; next fire 2026-12-04 10:00:00 (local time, in "
        "2s; it is 2026-12-04 09:59:58 now); one-shot; durable: in .tutorial/scheduled_tasks.json"
    )
    assert (tmp_path / SCHEDULE_FILE).exists()


def test_cron_create_says_a_job_of_this_run_never_fires_when_the_run_does_not_stay(
    tmp_path: Path,
) -> None:
    tools, _ = tools_at(tmp_path, stays=False)
    result = call(tools, CRON_CREATE, {"cron": "0 9 * * *", "prompt": "this run only"})
    assert result.ok and result.content.endswith(f"; this run only\n{STAY_NOTE}")
    assert "--stay-for 0" in STAY_NOTE and "durable: true" in STAY_NOTE
    result = call(tools, CRON_CREATE, {"cron": "0 9 * * *", "prompt": "kept", "durable": True})
    assert result.ok and "note:" not in result.content


@pytest.mark.parametrize(
    ("cron", "says"),
    [
        ("*/0 * * * *", "minute: a step of 0 never advances"),
        ("0 24 * * *", "hour: 24 is out of range (0-23)"),
        ("0 9 * * * *", "a cron expression has 5 fields"),
        ("0 0 L * *", "day of month: 'L' is an extension"),
        ("@reboot", "'@reboot' is a macro"),
    ],
)
def test_an_invalid_cron_is_invalid_arguments_naming_the_field(
    tmp_path: Path, cron: str, says: str
) -> None:
    tools, schedule = tools_at(tmp_path)
    result = call(tools, CRON_CREATE, {"cron": cron, "prompt": "check"})
    assert (result.status, result.keyword) == (Status.INVALID, "invalid_arguments")
    assert result.content.startswith(f"invalid_arguments: {says}")
    assert schedule.jobs() == []


def test_an_empty_prompt_is_invalid_arguments(tmp_path: Path) -> None:
    tools, _ = tools_at(tmp_path)
    result = call(tools, CRON_CREATE, {"cron": "0 9 * * *", "prompt": "  "})
    assert result.keyword == "invalid_arguments"
    assert result.content.startswith("invalid_arguments: the prompt is empty")


def test_the_51st_job_is_schedule_full(tmp_path: Path) -> None:
    tools, _ = tools_at(tmp_path)
    for _ in range(MAX_JOBS):
        assert call(tools, CRON_CREATE, {"cron": "0 9 * * *", "prompt": "p"}).ok
    result = call(tools, CRON_CREATE, {"cron": "0 9 * * *", "prompt": "p"})
    assert (result.status, result.keyword) == (Status.FAILED, "schedule_full")
    assert result.content.startswith("schedule_full: at most 50 jobs")


def test_cron_delete_deletes_or_names_the_ids_there_are(tmp_path: Path) -> None:
    tools, schedule = tools_at(tmp_path)
    job = schedule.create("*/5 * * * *", "check the build")
    result = call(tools, CRON_DELETE, {"id": "0badc0de"})
    assert (result.status, result.keyword) == (Status.FAILED, "unknown_job")
    assert result.content == f"unknown_job: no scheduled job 0badc0de; there are: {job.id}"
    assert not (tmp_path / ".tutorial").exists()  # a look-up makes no folder
    result = call(tools, CRON_DELETE, {"id": job.id})
    assert result.ok
    assert result.content == f"deleted {job.id} (*/5 * * * *: check the build)"
    assert call(tools, CRON_DELETE, {"id": 12345678}).keyword == "unknown_job"


def test_cron_list_shows_job_lines_soonest_first_and_warnings(tmp_path: Path) -> None:
    tools, schedule = tools_at(tmp_path)
    now = "it is 2026-12-04 09:59 now (local time)"  # a model knows the date, not the hour
    assert call(tools, CRON_LIST, {}).content == f"{now}\nno scheduled jobs"
    later = schedule.create("0 12 * * *", "noon")
    sooner = schedule.create("0 10 * * *", "ten", durable=True)
    expected = [job_line(job, schedule.next_fire(job)) for job in (sooner, later)]
    assert call(tools, CRON_LIST, {}).content == "\n".join([now, *expected])
    data = json.loads((tmp_path / SCHEDULE_FILE).read_text(encoding="utf-8"))
    write_file(tmp_path, {"tasks": [*data["tasks"], "not an object"]})
    assert call(tools, CRON_LIST, {}).content.splitlines()[-1] == (
        "warning: .tutorial/scheduled_tasks.json: task 2 skipped: it is not an object"
    )


def test_a_file_that_cannot_be_used_is_an_error_result(tmp_path: Path) -> None:
    tools, _ = tools_at(tmp_path)
    (tmp_path / SCHEDULE_FILE).parent.mkdir(parents=True)
    (tmp_path / SCHEDULE_FILE).write_text("{not json", encoding="utf-8")
    for name, arguments in (
        (CRON_LIST, {}),
        (CRON_CREATE, {"cron": "0 9 * * *", "prompt": "p", "durable": True}),
        (CRON_DELETE, {"id": "a1b2c3d4"}),
    ):
        result = call(tools, name, arguments)
        assert (result.status, result.keyword) == (Status.FAILED, "error")
        assert result.content.startswith("error: .tutorial/scheduled_tasks.json cannot be used")


def test_a_wait_is_said_in_two_units_at_most() -> None:
    from chapters.ch14.cron_tools import how_long

    assert [how_long(s) for s in (2, 65, 3_599, 3_600, 83_972, 604_799)] == [
        "2s",
        "1m05s",
        "59m59s",
        "1h00m",
        "23h19m",
        "6d23h",
    ]

"""Chapter 16's command line: `team` lists the open requests (chapter 15's listing does not);
--protocol-timeout is checked before anything runs; a plan-gated teammate over the real
`openai` SDK, streamed, to the local server (chapters/ch01/tests/chat_server.py), with an
allow rule in the settings and a deny rule on the command line; and the demo.

The local server answers every member from its own script, chosen by the prompt its history
starts with (chapter 15's `Routed`). The members ask side by side in no fixed order, so each
reply is made from what the request holds (a plan to review, an approval to act on).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import command_line, model_env
from chapters.ch02.tests.cli_support import keep_demo_folder
from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch03.tests.support import tutorial
from chapters.ch07.scripted_stream import call_result, calls_stream, text_stream, tool_call
from chapters.ch13.providers import DELIVERY_VARIABLE
from chapters.ch14.clock import NOW_VARIABLE
from chapters.ch15.team_config import MemberStatus, TeamConfig
from chapters.ch15.tests.support import BOUND, mail_from, teammate_threads
from chapters.ch15.tests.test_cli_and_wire import Routed, Step, bodies
from chapters.ch16.agent import RECIPE
from chapters.ch16.demo import CHANGELOG, CHANGELOG_TEXT, NEW_LINE, demo_ids, write_demo_files
from chapters.ch16.protocol import RequestKind, RequestLog
from chapters.ch16.tests.support import calls_made, changes, next_call, plan_ids

pytestmark = pytest.mark.usefixtures("isolated", "no_provider_settings")

chapter16 = command_line(RECIPE.command(), "python -m chapters.ch16")  # in this process
PROMPT = "Have alice write x.md, once her plan is approved."
ALICE = "Alice: write x.md with one line, and try secret.md too. You are in plan mode."
PLAN = "1. Write x.md with the line 'x'.\n2. Try secret.md."
START = datetime(2026, 5, 1, 9, 30, 0, tzinfo=UTC)


@pytest.fixture
def no_provider_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fallback, no delivery setting and no clock from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
                 DELIVERY_VARIABLE, NOW_VARIABLE):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


# --- the listing ---------------------------------------------------------------------------------


def team(chapter: int, *args: str) -> Any:
    return tutorial("team", "--chapter", str(chapter), *args, env={"COLUMNS": "200"})


def test_an_empty_team_lists_no_open_requests_and_the_listing_makes_nothing(
    tmp_path: Path,
) -> None:
    result = team(16, "--workspace", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"Team default in .tutorial/teams/default/ of {tmp_path.resolve()} has no members yet: "
        "a run of chapter 16 there starts them with spawn_teammate.\n"
        "open requests: none (0 in .tutorial/teams/default/requests.jsonl)\n"
    )
    assert not (tmp_path / ".tutorial").exists()


def test_the_open_requests_are_listed_after_the_members_and_chapter_15_lists_none(
    tmp_path: Path,
) -> None:
    TeamConfig(tmp_path, "crew").join("alice", "general", tmp_path)
    numbers = iter(range(1, 100))
    log = RequestLog(tmp_path, "crew", clock=lambda: START, new_id=lambda: f"{next(numbers):08x}")
    log.open(RequestKind.PLAN_APPROVAL, "alice", "lead", "1. Read.\n2. Write.")
    log.open(RequestKind.SHUTDOWN, "lead", "alice", "Done.")
    answered = log.open(RequestKind.PLAN_APPROVAL, "alice", "lead", "Another plan.")
    log.answer(answered.id, "lead", "plan_approval_response", True)
    before = (tmp_path / ".tutorial/teams/crew/requests.jsonl").read_bytes()
    since = START.astimezone().strftime("%Y-%m-%d %H:%M:%S")

    listed = team(16, "--workspace", str(tmp_path), "--team", "crew")
    members = team(15, "--workspace", str(tmp_path), "--team", "crew")

    assert listed.exit_code == 0 and members.exit_code == 0, listed.stderr + members.stderr
    assert listed.stdout == members.stdout + (
        "open requests (2 of 3 in .tutorial/teams/crew/requests.jsonl):\n"
        f"  00000001  plan_approval_request  alice -> lead  since {since}\n"
        f"  00000002  shutdown_request  lead -> alice  since {since}\n"
    )
    assert "open requests" not in members.stdout and "requests.jsonl" not in members.stdout
    assert len(members.stdout.splitlines()) == 4  # the title, the heading, lead, alice
    assert members.stdout.startswith("team crew in .tutorial/teams/crew/ ")
    assert (tmp_path / ".tutorial/teams/crew/requests.jsonl").read_bytes() == before
    log.answer("00000001", "lead", "plan_approval_response", False, "No.")
    log.answer("00000002", "alice", "shutdown_response", True)
    none_open = team(16, "--workspace", str(tmp_path), "--team", "crew")
    assert none_open.stdout.endswith(
        "open requests: none (3 in .tutorial/teams/crew/requests.jsonl)\n"
    )


# --- the options ---------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["0", "-1", "86401", "soon"])
def test_a_protocol_timeout_out_of_range_is_exit_2_before_any_request(
    tmp_path: Path, given: str
) -> None:
    with ChatServer([]) as server:
        result = chapter16("--workspace", str(tmp_path), "--prompt", "hi",
                           "--protocol-timeout", given, env=model_env(server))  # fmt: skip
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "Invalid value for '--protocol-timeout'" in result.stderr
    assert "Traceback" not in result.stderr


# --- over the wire -------------------------------------------------------------------------------


def _lead(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lead: spawn alice in plan mode; approve each plan of hers it has not reviewed; else
    say what alice last said."""
    if not calls_made(body, "spawn_teammate"):
        arguments = {"name": "alice", "prompt": ALICE, "plan_mode_required": True}
        return calls_stream(tool_call(1, "spawn_teammate", arguments))
    reviewed = [c["request_id"] for c in calls_made(body, "review_plan")]
    new = [p for p in plan_ids(body) if p not in reviewed]
    if new:
        return calls_stream(next_call(body, "review_plan", request_id=new[0], approve=True))
    said = [text for text in mail_from(body, "alice") if not text.startswith("plan_")]
    return text_stream(f"alice: {said[-1]}" if said else "Waiting for alice.")


def _alice(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Alice: try to write and submit her plan; once approved, write x.md and secret.md."""
    if not calls_made(body, "submit_plan"):
        return calls_stream(
            tool_call(1, "write_file", {"path": "x.md", "content": "x\n"}),
            tool_call(2, "submit_plan", {"plan": PLAN}),
        )
    approved = any("approved; go ahead" in text for text in mail_from(body, "lead"))
    if approved and len(calls_made(body, "write_file")) == 1:
        return calls_stream(
            tool_call(3, "write_file", {"path": "x.md", "content": "x\n"}),
            tool_call(4, "write_file", {"path": "secret.md", "content": "s\n"}),
        )
    return text_stream("Done." if approved else "My plan waits for the lead.")


def test_over_the_wire_the_plan_gate_holds_before_approval_and_the_policy_after(
    tmp_path: Path,
) -> None:
    """The settings allow write_file(x.md) and --deny names secret.md: before approval the
    gate refuses x.md all the same; after it, x.md is written by the allow rule (no terminal:
    a question would be a no) and secret.md is still refused by the deny rule."""
    settings = tmp_path / PROJECT_SETTINGS
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"allow": ["write_file(x.md)"]}}))
    scripts: dict[str, list[Step]] = {PROMPT: [_lead] * 8, ALICE: [_alice] * 6}
    with ChatServer(respond=Routed(scripts)) as server:
        result = chapter16("--workspace", str(tmp_path), "--max-retries", "0",
                           "--team-wait", str(BOUND), "--protocol-timeout", "60",
                           "--deny", "write_file(secret.md)", "--prompt", PROMPT,
                           env=model_env(server))  # fmt: skip
        lead, alice = bodies(server, PROMPT), bodies(server, ALICE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "alice: Done.\n"
    tried = alice[1]
    assert call_result(tried, "call_1").startswith("denied: plan not approved: you were started")
    plan = re.match(r"request_id ([0-9a-f]{8}):", call_result(tried, "call_2"))
    assert plan is not None
    wrote = next(body for body in alice if call_result(body, "call_3"))
    assert call_result(wrote, "call_3").startswith("ok:")
    refused = call_result(wrote, "call_4")
    assert refused.startswith("denied:") and "plan not approved" not in refused, refused
    assert (tmp_path / "x.md").read_text() == "x\n" and not (tmp_path / "secret.md").exists()
    asked = [t for body in lead for t in mail_from(body, "alice") if t.startswith("plan_")]
    assert asked[0] == (
        f"plan_approval_request {plan[1]} from alice:\n{PLAN}\nAnswer with review_plan "
        f'{{"request_id": "{plan[1]}", "approve": true|false, "feedback": "..."}}.'
    )
    tools = {t["function"]["name"] for t in lead[0]["tools"]}
    assert {"request_shutdown", "review_plan"} <= tools
    assert not {"submit_plan", "shutdown_response"} & tools
    spawn_schema = next(t for t in lead[0]["tools"] if t["function"]["name"] == "spawn_teammate")
    assert "plan_mode_required" in spawn_schema["function"]["parameters"]["properties"]
    alice_tools = {t["function"]["name"] for t in alice[0]["tools"]}
    assert {"submit_plan", "shutdown_response"} <= alice_tools
    assert not {"request_shutdown", "review_plan", "spawn_teammate"} & alice_tools
    assert changes(tmp_path) == [(plan[1], "pending"), (plan[1], "approved")]
    assert "human: no terminal" not in (tmp_path / ".tutorial/audit.jsonl").read_text()
    assert teammate_threads() == []


# --- the demo ------------------------------------------------------------------------------------


def test_the_demo_refuses_the_write_approves_the_plan_writes_and_stops_alice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    write_demo_files(folder)
    keep_demo_folder(monkeypatch, folder)  # the demo runs there, and it is kept to look inside
    with pytest.raises(SystemExit) as exited:
        RECIPE.main(["--demo"])
    out, err = capsys.readouterr()
    assert exited.value.code == 0, err
    lines = err.splitlines()
    denied = lines.index("[alice] [write_file → denied]")
    assert lines[denied + 1].startswith("[alice] denied: plan not approved")
    written = lines.index("[alice] [write_file → ok]")
    stops = lines.index("team: alice stops, as its shutdown was approved")
    assert denied < written < stops
    assert (folder / CHANGELOG).read_text(encoding="utf-8") == CHANGELOG_TEXT + NEW_LINE + "\n"
    assert out.endswith("and stopped when asked.\n"), out
    ids = demo_ids()
    plan, shutdown = ids(), ids()
    assert changes(folder) == [
        (plan, "pending"),
        (plan, "approved"),
        (shutdown, "pending"),
        (shutdown, "approved"),
    ]
    assert [(m.name, m.status) for m in TeamConfig(folder, "default").members()] == [
        ("alice", MemberStatus.STOPPED)
    ]
    assert "as the run ended" not in err  # she had stopped on her own
    assert teammate_threads() == []

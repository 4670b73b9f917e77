"""Chapter 15's team at run time (chapters/ch15/team.py, parts.py): a teammate's history is its
own and starts with its identity line; mail reaches its reader once, before its next request,
and is counted in the mailbox only once it is in the history; a message wakes an idle
teammate and `*` reaches everyone but the sender; the lead's answer ends the run only when
nobody works (at most --team-wait); idling is not news; the family budget counts every
member and stops the whole team; a failing teammate is reported and its name is free; no
teammate's thread outlives the run; and mail not delivered when a run ended (or was killed)
is delivered by the next run of the team, once.

Every member runs on scripted streams, its script chosen by its prompt (tests/support.py).
Members run side by side; where a test needs an order, a scripted reply waits for an event
(the lead started to wait, a line reached the lead's mailbox, the team is stopping), each
wait bounded by `BOUND`. Nothing sleeps.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer, RecordedRequest, StreamReply
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch07.scripted_stream import call_result, text_stream, tool_call
from chapters.ch13.providers import DELIVERY_VARIABLE
from chapters.ch14.clock import NOW_VARIABLE
from chapters.ch15.agent import RECIPE
from chapters.ch15.mailbox import Mailboxes, MailMessage
from chapters.ch15.team_config import TeamConfig
from chapters.ch15.tests.support import (
    TEAM,
    Agent15,
    calls,
    config_file,
    doing,
    gated,
    mail_from,
    mail_in,
    run_team,
    send,
    spawn,
    statuses,
    system_prompt,
    teammate_threads,
    wait_for,
)
from shared.errors import ProviderError, ProviderErrorKind

LEAD = "Lead: find out how this project is tested, with your team."
ALICE = "Alice: list the test files and say how many there are."
ALICE_AGAIN = "Alice (again): count the test functions."
BOB = "Bob: read the code in src/ and say what it does."
SECRET = "lead-only-result-7f3a2c"  # a file only the lead reads
FAILED = "teammate_failed: "


def boom() -> ProviderError:
    return ProviderError("HTTP 500: the provider broke", 500, kind=ProviderErrorKind.SERVER)


def answer(text: str) -> list[dict[str, Any]]:
    return text_stream(text)


def glob_call(number: int = 1) -> list[dict[str, Any]]:
    return calls(tool_call(number, "glob", {"pattern": "*"}))


def stopping(rig: Agent15) -> Callable[[], threading.Event]:
    """What is set once the run ends and its team stops."""
    return lambda: rig.team_of_run.stopping


def asks(asking: threading.Event, reply: Any) -> Any:
    """`reply`, after saying (`asking`) that the member is inside its request."""
    return doing(lambda request: asking.set(), reply)


def no_teammate_left(before: set[threading.Thread]) -> None:
    """No teammate's thread that this test started is alive."""
    left = [t for t in teammate_threads() if t not in before]
    assert left == [], left


# --- 1. a teammate's history is its own ---------------------------------------------------------


def test_a_teammates_history_starts_with_its_identity_and_holds_nothing_of_the_leads(
    tmp_path: Path,
) -> None:
    rig = Agent15(tmp_path, {}, team="red")
    (rig.root / "notes.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    rig.scripts = {
        LEAD: [
            calls(tool_call(1, "read_file", {"path": "notes.txt"})),
            calls(spawn(2, "alice", ALICE)),
            answer("Alice is at work."),
            answer("Alice reported."),
        ],
        ALICE: [gated(rig.team_console.team_waits, answer("Two test files."), "the lead waits")],
    }
    assert rig.run(LEAD) == "Alice reported."
    lead = rig.requests_of(LEAD)
    (first,) = rig.requests_of(ALICE)
    assert SECRET in json.dumps(lead[1])  # the lead did read it
    assert system_prompt(first).splitlines()[0] == 'You are teammate "alice" in team "red".'
    assert [(m["role"], m["content"]) for m in first["messages"][1:]] == [("user", ALICE)]
    seen = json.dumps(first)
    for leads in (LEAD, SECRET, system_prompt(lead[0]), call_result(lead[2], "call_2")):
        assert leads not in seen
    assert mail_from(lead[-1], "alice") == ["Two test files."]


# --- 2. a message reaches the lead once, and is counted only once delivered ----------------------


def test_a_teammates_answer_reaches_the_lead_once_and_is_counted_only_after_delivery(
    tmp_path: Path,
) -> None:
    rig = Agent15(tmp_path, {})
    go = threading.Event()
    counts: dict[str, tuple[int, int]] = {}

    def while_the_lead_works(request: Mapping[str, Any]) -> None:
        go.set()  # alice answers while the lead is inside this request
        rig.inbox.wait_lines(1)  # line 0 of the lead's mailbox was sent
        counts["sent, in no history yet"] = rig.mailbox("lead")

    def after_delivery(request: Mapping[str, Any]) -> None:
        counts["in the history"] = rig.mailbox("lead")

    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE)),
            doing(while_the_lead_works, answer("Waiting for alice.")),
            doing(after_delivery, glob_call(2)),
            answer("Alice found two test files."),
            *[answer("(not asked)")] * 4,
        ],
        ALICE: [gated(go, answer("Two test files."), "the lead's second request")],
    }
    answered = rig.run(LEAD)
    envelope = '<teammate-message teammate_id="alice" summary="Two test files.">Two test files.'
    lead = rig.requests_of(LEAD)
    carried = [sum(str(m["content"]).count(envelope) for m in r["messages"]) for r in lead]
    assert carried == [0, 0, 1, 1]  # from the request after it came, once: never again
    assert [m["content"] for m in lead[-1]["messages"] if envelope in str(m["content"])] == [
        f"{envelope}</teammate-message>"
    ]
    assert counts == {"sent, in no history yet": (1, 0), "in the history": (1, 1)}
    assert rig.mailbox("lead") == (1, 1)  # after the run: every line delivered, counted once
    assert answered == "Alice found two test files."


# --- 3. a message wakes an idle teammate; `*` reaches everyone but the sender --------------------


def _lead_brain(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lead: ping alice once both teammates said they are ready; else say it waits."""
    heard = mail_in(request)
    told = any(m.get("tool_call_id") == "call_3" for m in request["messages"])
    ready = {m.sender for m in heard if m.text.endswith("ready.")}
    if ready == {"alice", "bob"} and not told:
        return calls(send(3, "alice", "Ping: tell everyone the plan.", "ping"))
    return answer(f"Heard {len(heard)} messages.")


def test_a_message_wakes_an_idle_teammate_once_and_star_reaches_all_but_the_sender(
    tmp_path: Path,
) -> None:
    rig = Agent15(tmp_path, {})
    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE), spawn(2, "bob", BOB))] + [_lead_brain] * 8,
        ALICE: [
            answer("Alice ready."),
            calls(send(1, "*", "The plan: alice tests, bob reads.", "plan")),
            answer("Alice told everyone."),
        ],
        BOB: [answer("Bob ready."), answer("Bob got the plan.")],
    }
    rig.run(LEAD)
    alice, bob, lead = rig.requests_of(ALICE), rig.requests_of(BOB), rig.requests_of(LEAD)
    assert len(alice) == 3 and len(bob) == 2  # each woken once more, by one message
    assert mail_in(alice[0]) == [] and mail_in(bob[0]) == []
    ping = "Ping: tell everyone the plan."
    assert [mail_from(r, "lead") for r in alice[1:]] == [[ping], [ping]]  # in once, then kept
    plan = "The plan: alice tests, bob reads."
    assert mail_from(bob[1], "alice") == [plan]
    assert mail_from(lead[-1], "alice") == ["Alice ready.", plan, "Alice told everyone."]
    assert all(mail_from(r, "alice") == [] for r in alice)  # not to the sender
    assert all(mail_from(r, "lead") == [] for r in lead)
    assert rig.mailbox("alice") == (1, 1) and rig.mailbox("bob") == (1, 1)
    assert rig.mailbox("lead") == (5, 5)  # two "ready", the plan, two answers to it
    assert rig.statuses() == {"alice": "stopped", "bob": "stopped"}


# --- 4. the end rule ---------------------------------------------------------------------------


def test_the_leads_answer_while_a_teammate_works_does_not_end_the_run(tmp_path: Path) -> None:
    rig = Agent15(tmp_path, {})
    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE)),
            answer("Alice still works."),
            answer("Alice found two test files."),
        ],
        ALICE: [gated(rig.team_console.team_waits, answer("Two test files."), "the lead waits")],
    }
    assert rig.run(LEAD) == "Alice found two test files."
    lead = rig.requests_of(LEAD)
    assert len(lead) == 3
    assert mail_from(lead[1], "alice") == [] and mail_from(lead[2], "alice") == ["Two test files."]
    printed = rig.printed()
    assert "team: the lead waits for alice\n" in printed
    assert printed.index("[alice] Two test files.") < printed.index("team: stopped 1 teammate")


def _ends_at_once(tmp_path: Path) -> Agent15:
    """A run with --team-wait 0: the lead answers while alice works, and the run ends; alice,
    stopped in her request, answers when it returns (into the lead's mailbox, too late)."""
    rig = Agent15(tmp_path, {}, team_wait=0)
    asking = threading.Event()
    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE)),
            gated(asking, answer("Not waiting for alice."), "alice's request"),
        ],
        ALICE: [asks(asking, gated(stopping(rig), answer("Too late: two test files.")))],
    }
    assert rig.run(LEAD) == "Not waiting for alice."
    return rig


def test_with_team_wait_0_the_run_ends_at_once_and_the_teammate_is_stopped(
    tmp_path: Path,
) -> None:
    before = set(teammate_threads())
    rig = _ends_at_once(tmp_path)
    assert len(rig.requests_of(LEAD)) == 2
    assert len(rig.requests_of(ALICE)) == 1
    printed = rig.printed()
    said = next(line for line in printed.splitlines() if "the run ends with" in line)
    assert "--team-wait" in said and said.endswith("the run ends with alice still working")
    assert "team: the lead waits" not in printed
    assert rig.statuses() == {"alice": "stopped"}
    no_teammate_left(before)


# --- 5. idling is not news ---------------------------------------------------------------------


def test_two_teammates_idling_three_times_each_cost_the_lead_at_most_three_requests(
    tmp_path: Path,
) -> None:
    """Alice and bob wake each other by turns, six answers in all, while the lead is inside
    one request; each step waits for the answer before it (line i of the lead's mailbox), so
    the order is fixed. The six answers reach the lead together, and nothing else does."""
    rig = Agent15(tmp_path, {})
    lead_works = threading.Event()

    def after(line: int, reply: Any) -> Any:
        return doing(lambda request: rig.inbox.wait_lines(line + 1), reply)

    def all_six(request: Mapping[str, Any]) -> None:
        lead_works.set()
        rig.inbox.wait_lines(6)

    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE), spawn(2, "bob", BOB)),
            doing(all_six, answer("Still working.")),
            answer("Both reported three times."),
            *[answer("(not asked)")] * 8,
        ],
        ALICE: [
            gated(lead_works, answer("A1"), "the lead's second request"),
            after(1, calls(send(1, "bob", "Wake up, bob (1)."))),
            answer("A2"),
            after(3, calls(send(2, "bob", "Wake up, bob (2)."))),
            answer("A3"),
        ],
        BOB: [
            after(0, calls(send(1, "alice", "Wake up, alice (1)."))),
            answer("B1"),
            after(2, calls(send(2, "alice", "Wake up, alice (2)."))),
            answer("B2"),
            after(4, answer("B3")),
        ],
    }
    answered = rig.run(LEAD)
    lead = rig.requests_of(LEAD)
    assert len(lead) - 1 <= 3  # after the spawn
    assert len(rig.requests_of(ALICE)) == len(rig.requests_of(BOB)) == 5
    assert [(m.sender, m.text) for m in mail_in(lead[-1])] == [
        ("alice", "A1"),
        ("bob", "B1"),
        ("alice", "A2"),
        ("bob", "B2"),
        ("alice", "A3"),
        ("bob", "B3"),
    ]
    assert rig.mailbox("lead") == (6, 6)  # their answers, and nothing about idling
    assert "no message came in" not in rig.printed()  # idle teammates are not working ones
    assert answered == "Both reported three times."


# --- 6. the family budget ----------------------------------------------------------------------


chapter15 = command_line(RECIPE.command(), "python -m chapters.ch15")


def _first_user(body: Mapping[str, Any]) -> str:
    return next(str(m["content"]) for m in body["messages"] if m["role"] == "user")


@pytest.mark.usefixtures("isolated")
def test_the_family_budget_counts_every_member_and_running_out_in_a_teammate_stops_the_team(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--max-requests 3 over the real SDK: the lead's two requests and alice's first use it
    up (alice's first reply is held until the lead's second request came), so alice's second
    is the one refused: exit 1, max_requests, and the lead waiting for her stops too."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
                 DELIVERY_VARIABLE, NOW_VARIABLE):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    asked: dict[str, int] = {}
    lead_asked_again = threading.Event()

    def hold(event: int) -> None:
        if event == 0:
            wait_for(lead_asked_again, "the lead's second request")

    def respond(request: RecordedRequest) -> StreamReply:  # called under the server's lock
        prompt = _first_user(request.body)
        asked[prompt] = asked.get(prompt, 0) + 1
        if prompt == LEAD and asked[prompt] == 1:
            return sse(*calls(spawn(1, "alice", ALICE)))
        if prompt == LEAD:
            lead_asked_again.set()
            return sse(*answer("Waiting for alice."))
        reply = sse(*glob_call(asked[prompt]))
        return dataclasses.replace(reply, before_event=hold) if asked[prompt] == 1 else reply

    workspace = tmp_path / "ws"
    workspace.mkdir()
    before = set(teammate_threads())
    with ChatServer(respond=respond) as server:
        result = chapter15(
            "--workspace", str(workspace), "--max-retries", "0", "--max-requests", "3",
            "--prompt", LEAD, env=model_env(server),
        )  # fmt: skip
        sent = [_first_user(r.body) for r in server.completion_requests()]
    assert result.exit_code == 1, result.stderr
    assert "Agent exceeded max_requests=3" in result.stderr
    assert FAILED not in result.stderr  # not alice's failure: the whole team's limit
    assert sorted(sent) == sorted([LEAD, LEAD, ALICE])  # alice's second was never sent
    assert statuses(workspace, TEAM) == {"alice": "stopped"}
    no_teammate_left(before)


# --- 7. a failing teammate ---------------------------------------------------------------------


def test_a_teammate_whose_model_fails_is_reported_by_the_harness_and_its_name_is_free(
    tmp_path: Path,
) -> None:
    rig = Agent15(tmp_path, {})
    second_asked = threading.Event()
    seen: dict[str, str] = {}

    def read_config(request: Mapping[str, Any]) -> None:
        seen.update(rig.statuses())

    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE)),
            answer("Alice is at work."),
            doing(read_config, calls(spawn(2, "alice", ALICE_AGAIN))),
            doing(lambda request: second_asked.set(), answer("Alice is at it again.")),
            answer("Alice counted them."),
        ],
        ALICE: [gated(rig.team_console.team_waits, [boom()], "the lead waits")],
        ALICE_AGAIN: [gated(second_asked, answer("Four test functions."), "the lead's request")],
    }
    assert rig.run(LEAD) == "Alice counted them."
    lead = rig.requests_of(LEAD)
    (failure,) = mail_in(lead[2])
    assert failure.sender == "harness" and failure.summary == "alice failed"
    assert failure.text.startswith(f"{FAILED}alice: ")
    assert "HTTP 500: the provider broke" in failure.text
    assert seen == {"alice": "failed"}
    assert call_result(lead[3], "call_2").startswith("spawned alice")
    assert mail_from(lead[4], "alice") == ["Four test functions."]
    assert f"team: {FAILED}alice: " in rig.printed()
    members = config_file(rig.root)["members"]
    assert [(m["name"], m["status"]) for m in members] == [("alice", "stopped")]


def test_a_teammate_out_of_turns_is_reported_as_failed(tmp_path: Path) -> None:
    """--max-turns 3 for the lead: a teammate may make 3 requests too (min of its agent's 10)."""
    rig = Agent15(tmp_path, {}, max_turns=3)
    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE)), answer("Alice is at work."), answer("Noted.")],
        ALICE: [
            gated(rig.team_console.team_waits, glob_call(1), "the lead waits"),
            glob_call(2),
            glob_call(3),
        ],
    }
    assert rig.run(LEAD) == "Noted."
    assert len(rig.requests_of(ALICE)) == 3
    (failure,) = mail_in(rig.requests_of(LEAD)[-1])
    assert failure.sender == "harness"
    assert failure.text.startswith(f"{FAILED}alice: ") and "3 turns" in failure.text
    assert rig.statuses() == {"alice": "failed"}


# --- 8. nothing of the team outlives the run ---------------------------------------------------


@pytest.mark.parametrize("ending", ["answer", "provider error", "interrupt"])
def test_no_teammate_thread_is_left_and_every_member_is_stopped_however_the_run_ends(
    tmp_path: Path, ending: str
) -> None:
    """Alice is inside a request when the run ends (her reply waits for the team to stop);
    bob is idle. With --team-wait 0 an answer ends the run while alice works."""
    rig = Agent15(tmp_path, {}, team_wait=0)
    endings: dict[str, list[Any]] = {
        "answer": answer("Done, without alice."),
        "provider error": [boom()],
        "interrupt": [KeyboardInterrupt()],
    }
    end = endings[ending]
    asking = threading.Event()
    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE), spawn(2, "bob", BOB)),
            doing(lambda request: rig.inbox.wait_lines(1), gated(asking, end)),
            answer("Done, without alice."),
        ],
        ALICE: [asks(asking, gated(stopping(rig), glob_call())), answer("(not asked)")],
        BOB: [answer("Bob ready.")],
    }
    before = set(teammate_threads())
    if ending == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            rig.run(LEAD)
    elif ending == "provider error":
        with pytest.raises(ProviderError):
            rig.run(LEAD)
    else:
        assert rig.run(LEAD) == "Done, without alice."
    no_teammate_left(before)
    assert rig.statuses() == {"alice": "stopped", "bob": "stopped"}
    assert len(rig.requests_of(ALICE)) == 1  # stopped at her next request boundary
    assert "team: stopped 2 teammates as the run ended" in rig.printed()


# --- 9. what a run did not deliver, the next one does --------------------------------------------


def test_mail_a_killed_run_left_undelivered_is_delivered_by_the_next_run_once(
    tmp_path: Path,
) -> None:
    """As a run killed with SIGKILL leaves the team: lines after each count, alice "working"."""
    rig = Agent15(tmp_path, {})
    boxes = Mailboxes(rig.root, TEAM)
    for text in ("Old news.", "Kept one.", "Kept two."):
        boxes.send("lead", MailMessage.new("alice", text))
    boxes.mark_delivered("lead", 1)
    for text in ("Seen.", "Unseen."):
        boxes.send("alice", MailMessage.new("lead", text))
    boxes.mark_delivered("alice", 1)
    TeamConfig(rig.root, TEAM).join("alice", "general", rig.root)
    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE)), answer("Waiting."), answer("Done.")],
        ALICE: [gated(rig.team_console.team_waits, answer("Alice here."), "the lead waits")],
    }
    assert rig.run(LEAD) == "Done."
    lead, (alice,) = rig.requests_of(LEAD), rig.requests_of(ALICE)
    assert mail_from(lead[0], "alice") == ["Kept one.", "Kept two."]
    assert mail_from(lead[-1], "alice") == ["Kept one.", "Kept two.", "Alice here."]
    assert mail_from(alice, "lead") == ["Unseen."]
    assert rig.mailbox("lead") == (4, 4) and rig.mailbox("alice") == (2, 2)


def test_an_answer_that_came_after_the_run_ended_reaches_the_next_run_once(
    tmp_path: Path,
) -> None:
    first = _ends_at_once(tmp_path)
    assert first.mailbox("lead") == (1, 0)  # alice's late answer: sent, never delivered
    second = run_team(tmp_path, {LEAD: [answer("Alice had found two.")]}, LEAD)
    third = run_team(tmp_path, {LEAD: [answer("Nothing new.")]}, LEAD)
    assert (second.answer, third.answer) == ("Alice had found two.", "Nothing new.")
    (asked,), (asked_again,) = second.model.requests_of(LEAD), third.model.requests_of(LEAD)
    assert mail_from(asked, "alice") == ["Too late: two test files."]
    assert mail_in(asked_again) == []
    assert third.rig.mailbox("lead") == (1, 1)

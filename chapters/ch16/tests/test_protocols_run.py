"""Chapter 16's protocols as the agent runs them (chapters/ch16/team_protocols.py, parts.py):
a plan-gated teammate reads but writes and runs nothing until its plan is approved, and the
gate sits before the policy, so approval never lifts a deny rule and no allow rule lifts the
gate; a rejected plan's feedback reaches the teammate, which submits again; an approved
shutdown stops the teammate at its next request boundary, releases its in_progress tasks,
marks it stopped and tells the lead, a rejected one tells the lead why; a request nobody
answers expires and the asker is told; unknown, duplicate and mismatched answers change
nothing and are logged once; every request and status change is a line of requests.jsonl;
and the model reads each protocol message as a sentence, not as JSON.

Every member runs on scripted streams (chapters/ch15/tests/support.py). A request's id is
random: a reply reads it from the message or the result it answers. Where the order
matters, a reply waits for an event (a line reached the lead, the team changed), each wait
bounded by `BOUND`. Nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch03.asking import ScriptedAsker
from chapters.ch07.scripted_stream import call_result, text_stream, tool_call
from chapters.ch12.tasks import TaskStore
from chapters.ch15.tests.support import (
    TEAM,
    calls,
    doing,
    gated,
    mail_from,
    mail_in,
    spawn,
    statuses,
)
from chapters.ch16 import team_protocols
from chapters.ch16.protocol import (
    PlanApprovalRequest,
    PlanApprovalResponse,
    RequestLog,
    RequestStatus,
    ShutdownRequest,
    ShutdownResponse,
    parse_protocol,
)
from chapters.ch16.tests.support import (
    Agent16,
    asked_id,
    calls_made,
    changes,
    log_lines,
    mailbox_lines,
    next_call,
    plan_ids,
    shutdown_ids,
    until,
)

LEAD = "Lead: have alice add a line to x.md, with a plan first."
ALICE = "Alice: add a line to x.md. You are in plan mode."
BOB = "Bob: stand by."
PLAN = "1. Read notes.md.\n2. Write x.md with one line."
PLAN_AGAIN = "1. Read notes.md.\n2. Write x.md with the line 'x', nothing else."
FEEDBACK = "Say which line you write."
DENIED_NO_PLAN = "denied: plan not approved: you were started in plan mode"
INVALID = "invalid_arguments: request "
TERMINATED = "teammate_terminated: alice"
Step = Callable[[Mapping[str, Any]], list[dict[str, Any]]]


def answer(text: str) -> list[dict[str, Any]]:
    return text_stream(text)


def spawn_gated(number: int, name: str, prompt: str) -> tuple[str, str, str]:
    arguments = {"name": name, "prompt": prompt, "plan_mode_required": True}
    return tool_call(number, "spawn_teammate", arguments)


def write(number: int, path: str = "x.md") -> tuple[str, str, str]:
    return tool_call(number, "write_file", {"path": path, "content": "x\n"})


def heard(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lead's plain answer: how many messages it holds."""
    return answer(f"Heard {len(mail_in(request))} messages.")


def reviewing(rig: Agent16, verdicts: list[tuple[bool, str | None]]) -> Step:
    """The lead: the k-th plan alice sends is answered with verdicts[k], once alice's answer
    after it reached the lead too (line 2k+1 of the lead's mailbox), so the verdict never
    overtakes it; any other request is answered with a sentence."""

    def step(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        reviewed = [c["request_id"] for c in calls_made(request, "review_plan")]
        new = [p for p in plan_ids(request) if p not in reviewed]
        if not new:
            return heard(request)
        rig.inbox.wait_lines(2 * len(reviewed) + 2)
        approve, feedback = verdicts[len(reviewed)]
        extra = {"feedback": feedback} if feedback else {}
        review = next_call(request, "review_plan", request_id=new[0], approve=approve, **extra)
        return calls(review)

    return step


def asking_to_stop(after: str, reason: str = "Done for today.") -> Step:
    """The lead: once alice said `after`, ask her to stop (once); else a sentence."""

    def step(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        ready = any(text == after for text in mail_from(request, "alice"))
        if ready and not calls_made(request, "request_shutdown"):
            return calls(next_call(request, "request_shutdown", teammate="alice", reason=reason))
        return heard(request)

    return step


def readable_text(text: str) -> None:
    """A protocol message as the model reads it: a sentence, no JSON."""
    assert parse_protocol(text) is None, text
    assert '"type"' not in text and not text.lstrip().startswith("{"), text


# --- 1. the plan gate, and its place before the policy ------------------------------------------

RULES: dict[str, dict[str, Any]] = {
    "bypass": {},  # the rig's mode: every call runs unasked unless a rule denies it
    "deny rule": {"deny": ("write_file(x.md)",)},
    "allow rule": {"mode": None, "allow": ("write_file(x.md)",)},  # default mode: a write asks
}


@pytest.mark.parametrize("rules", list(RULES))
def test_a_plan_gated_teammate_reads_but_writes_and_runs_nothing_until_its_plan_is_approved(
    tmp_path: Path, rules: str
) -> None:
    """Before approval the gate answers first, whatever the rules say (an allow rule does not
    lift it, a deny rule does not get to speak); after approval the same write meets the
    policy: it runs (bypass, allow rule, nobody asked) or the deny rule still refuses it."""
    asker = ScriptedAsker([])  # a question would fail the call: nobody may be asked
    rig = Agent16(tmp_path, {}, asker=asker, **RULES[rules])
    (rig.root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    seen: dict[str, bool] = {}

    def look(request: Mapping[str, Any]) -> None:
        for name in ("x.md", "ran.txt"):
            seen[name] = (rig.root / name).exists()

    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[reviewing(rig, [(True, None)])] * 8],
        ALICE: [
            calls(
                tool_call(1, "read_file", {"path": "notes.md"}),
                write(2),
                tool_call(3, "shell", {"command": "touch ran.txt"}),
            ),
            doing(look, calls(tool_call(4, "submit_plan", {"plan": PLAN}))),
            calls(write(5)),  # the plan waits for its review
            answer("My plan waits."),
            calls(write(6)),  # woken by the approval
            answer("Done."),
        ],
    }
    rig.run(LEAD)
    _, second, third, fourth, fifth, sixth = rig.requests_of(ALICE)
    assert call_result(second, "call_1").startswith("ok: notes.md")  # reading is allowed
    for call_id in ("call_2", "call_3"):
        assert call_result(second, call_id).startswith(DENIED_NO_PLAN)
        assert "submit_plan" in call_result(second, call_id)
    assert seen == {"x.md": False, "ran.txt": False}  # nothing ran
    plan = asked_id(third, "call_4")
    assert call_result(fourth, "call_5").startswith(
        f"denied: plan not approved: your plan {plan} waits for the lead's review"
    )
    assert mail_from(fifth, "lead") == [
        f"plan_approval_response {plan} from lead: approved; go ahead with the plan."
    ]
    after = call_result(sixth, "call_6")
    assert "plan not approved" not in after
    if rules == "deny rule":
        assert after.startswith("denied:") and "write_file(x.md)" in after, after
        assert not (rig.root / "x.md").exists()
    else:
        assert after.startswith("ok:"), after
        assert (rig.root / "x.md").read_text(encoding="utf-8") == "x\n"
    assert not (rig.root / "ran.txt").exists()
    assert asker.requests == []
    assert changes(rig.root) == [(plan, "pending"), (plan, "approved")]
    opened, approved = log_lines(rig.root)
    assert {k: opened[k] for k in ("kind", "from", "to", "plan")} == {
        "kind": "plan_approval",
        "from": "alice",
        "to": "lead",
        "plan": PLAN,
    }
    assert approved["by"] == "lead"


# --- 2. a rejected plan ---------------------------------------------------------------------------


def test_a_rejected_plans_feedback_reaches_the_teammate_which_stays_gated_and_submits_again(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})
    seen: dict[str, bool] = {}
    rig.scripts = {
        LEAD: [
            calls(spawn_gated(1, "alice", ALICE)),
            *[reviewing(rig, [(False, FEEDBACK), (True, None)])] * 10,
        ],
        ALICE: [
            calls(tool_call(1, "submit_plan", {"plan": PLAN})),
            answer("Plan 1 sent."),
            calls(write(2)),  # woken by the rejection: still gated
            doing(
                lambda request: seen.update(absent=not (rig.root / "x.md").exists()),
                calls(tool_call(3, "submit_plan", {"plan": PLAN_AGAIN})),
            ),
            answer("Plan 2 sent."),
            calls(write(4)),  # woken by the approval
            answer("Written."),
        ],
    }
    rig.run(LEAD)
    alice = rig.requests_of(ALICE)
    assert len(alice) == 7
    first_plan, second_plan = asked_id(alice[1], "call_1"), asked_id(alice[4], "call_3")
    assert first_plan != second_plan
    rejected = (
        f"plan_approval_response {first_plan} from lead: rejected. Feedback: {FEEDBACK} "
        "Revise the plan and submit it again with submit_plan."
    )
    assert mail_from(alice[2], "lead") == [rejected]  # in her next request, as a sentence
    readable_text(rejected)
    assert call_result(alice[3], "call_2").startswith(DENIED_NO_PLAN)
    assert seen == {"absent": True}
    assert mail_from(alice[5], "lead")[-1] == (
        f"plan_approval_response {second_plan} from lead: approved; go ahead with the plan."
    )
    assert call_result(alice[6], "call_4").startswith("ok:")
    assert (rig.root / "x.md").read_text(encoding="utf-8") == "x\n"
    # the lead read both plans as sentences, with the plans' own lines
    lead_mail = mail_from(rig.requests_of(LEAD)[-1], "alice")
    plans = [text for text in lead_mail if text.startswith("plan_approval_request")]
    assert plans == [
        f"plan_approval_request {first_plan} from alice:\n{PLAN}\nAnswer with review_plan "
        f'{{"request_id": "{first_plan}", "approve": true|false, "feedback": "..."}}.',
        f"plan_approval_request {second_plan} from alice:\n{PLAN_AGAIN}\nAnswer with "
        f'review_plan {{"request_id": "{second_plan}", "approve": true|false, '
        f'"feedback": "..."}}.',
    ]
    for text in plans:
        readable_text(text)
    # every request and each change of its status is a line
    assert changes(rig.root) == [
        (first_plan, "pending"),
        (first_plan, "rejected"),
        (second_plan, "pending"),
        (second_plan, "approved"),
    ]
    assert log_lines(rig.root)[1]["feedback"] == FEEDBACK


def test_the_mailboxes_hold_the_json_and_the_model_reads_sentences(tmp_path: Path) -> None:
    """What travels is Claude Code's JSON; what the model reads of it, inside the envelope,
    is `readable`'s sentence, in both directions."""
    rig = Agent16(tmp_path, {})
    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[reviewing(rig, [(True, "Go.")])] * 8],
        ALICE: [
            calls(tool_call(1, "submit_plan", {"plan": PLAN})),
            answer("Plan sent."),
            answer("Approved, thanks."),
        ],
    }
    rig.run(LEAD)
    to_lead, to_alice = mailbox_lines(rig.root, "lead"), mailbox_lines(rig.root, "alice")
    request = parse_protocol(to_lead[0].text)
    response = parse_protocol(to_alice[0].text)
    assert isinstance(request, PlanApprovalRequest) and request.plan == PLAN
    assert isinstance(response, PlanApprovalResponse) and response.approve
    assert response.feedback == "Go." and response.request_id == request.request_id
    (asked,) = [t for t in mail_from(rig.requests_of(LEAD)[-1], "alice") if "plan" in t]
    (answered,) = mail_from(rig.requests_of(ALICE)[-1], "lead")
    assert asked.startswith(f"plan_approval_request {request.request_id} from alice:\n")
    assert answered == (
        f"plan_approval_response {request.request_id} from lead: approved; go ahead with the "
        "plan. Feedback: Go."
    )
    for text in (asked, answered):
        readable_text(text)


# --- 3. shutdown ----------------------------------------------------------------------------------


def test_an_approved_shutdown_stops_the_teammate_releases_its_tasks_and_tells_the_lead(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})
    marked: dict[str, str] = {}

    def stopped(request: Mapping[str, Any]) -> None:
        if any(TERMINATED in text for text in mail_from(request, "harness")):
            team = rig.team_of_run
            until(team, lambda: "alice" not in team.member_names(), "alice's thread ends")
            marked.update(statuses(rig.root, TEAM))

    def leave(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        (asked,) = shutdown_ids(request)
        return calls(tool_call(4, "shutdown_response", {"request_id": asked, "approve": True}))

    task = {"taskId": "1", "status": "in_progress", "owner": "alice"}
    done = {"taskId": "2", "status": "completed", "owner": "alice"}
    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE)),
            *[doing(stopped, asking_to_stop("Working on task 1."))] * 8,
        ],
        ALICE: [
            calls(
                tool_call(1, "task_create", {"subject": "Count the tests"}),
                tool_call(2, "task_create", {"subject": "Read the code"}),
                tool_call(3, "task_update", task),
                tool_call(5, "task_update", done),
            ),
            answer("Working on task 1."),
            leave,
            answer("(not asked: alice stopped before this request)"),
        ],
    }
    rig.run(LEAD)
    alice, lead = rig.requests_of(ALICE), rig.requests_of(LEAD)
    assert len(alice) == 3  # no request after her answer
    (shutdown,) = shutdown_ids(alice[2])
    (asking,) = mail_from(alice[2], "lead")
    assert asking == (
        f"shutdown_request {shutdown} from lead: Done for today. Answer with shutdown_response "
        f'{{"request_id": "{shutdown}", "approve": true}} to stop now, or approve false with '
        "a reason to go on."
    )
    readable_text(asking)
    tasks = {t.id: (t.status.value, t.owner) for t in TaskStore(rig.root, TEAM).list().tasks}
    assert tasks == {"1": ("pending", ""), "2": ("completed", "alice")}
    assert marked == {"alice": "stopped"}  # before the run ended
    terminated = [t for r in lead for t in mail_from(r, "harness") if TERMINATED in t]
    assert terminated[0] == (
        "teammate_terminated: alice stopped as asked; its in_progress tasks back to pending: 1"
    )
    told = next(i for i, r in enumerate(lead) if TERMINATED in str(mail_from(r, "harness")))
    assert told == len(lead) - 1  # the lead's next request holds it
    printed = rig.printed()
    assert "team: alice stops, as its shutdown was approved" in printed
    assert "as the run ended" not in printed  # she left on her own; the end stopped nobody
    assert changes(rig.root) == [(shutdown, "pending"), (shutdown, "approved")]
    assert log_lines(rig.root)[1]["by"] == "alice"


def test_a_rejected_shutdowns_reason_reaches_the_lead_and_the_teammate_goes_on(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})

    def refuse(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        (asked,) = shutdown_ids(request)
        arguments = {"request_id": asked, "approve": False, "reason": "I am still counting"}
        return calls(tool_call(1, "shutdown_response", arguments))

    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE)), *[asking_to_stop("Alice ready.")] * 8],
        ALICE: [answer("Alice ready."), refuse, answer("Still here: 3 tests.")],
    }
    rig.run(LEAD)
    alice, lead = rig.requests_of(ALICE), rig.requests_of(LEAD)
    assert len(alice) == 3  # she went on after her answer
    (shutdown,) = shutdown_ids(alice[1])
    heard_of_her = mail_from(lead[-1], "alice")
    reason = (
        f"shutdown_response {shutdown} from alice: rejected; alice goes on. Reason: I am still "
        "counting."
    )
    assert reason in heard_of_her and heard_of_her[-1] == "Still here: 3 tests."
    readable_text(reason)
    assert isinstance(parse_protocol(mailbox_lines(rig.root, "lead")[1].text), ShutdownResponse)
    assert not any(TERMINATED in str(mail_from(r, "harness")) for r in lead)
    assert "stops, as its shutdown was approved" not in rig.printed()
    assert changes(rig.root) == [(shutdown, "pending"), (shutdown, "rejected")]
    assert log_lines(rig.root)[1]["reason"] == "I am still counting"


# --- 4. expiry -----------------------------------------------------------------------------------


@pytest.fixture
def fast_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(team_protocols, "EXPIRY_POLL", 0.02)


@pytest.mark.usefixtures("fast_expiry")
def test_a_plan_nobody_reviews_expires_the_teammate_is_told_and_must_submit_again(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {}, protocol_timeout=0.2)

    def told(request: Mapping[str, Any]) -> None:  # alice waits, inside her request
        until(rig.team_of_run, lambda: bool(mailbox_lines(rig.root, "alice")), "the expiry")

    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[heard] * 8],  # it never reviews
        ALICE: [
            calls(tool_call(1, "submit_plan", {"plan": PLAN})),
            doing(told, calls(write(2))),
            answer("No answer came."),
        ],
    }
    rig.run(LEAD)
    _, second, third = rig.requests_of(ALICE)
    plan = asked_id(second, "call_1")
    assert mail_from(third, "harness") == [
        f"plan_approval_request {plan} to lead expired: no answer in 0.2s (--protocol-timeout)."
    ]
    assert call_result(third, "call_2").startswith(DENIED_NO_PLAN)  # submit a plan again
    assert changes(rig.root) == [(plan, "pending"), (plan, "expired")]
    assert RequestLog(rig.root, TEAM).get(plan).status is RequestStatus.EXPIRED  # type: ignore[union-attr]
    assert f"protocol: plan_approval_request {plan} to lead expired" in rig.printed()


@pytest.mark.usefixtures("fast_expiry")
def test_a_shutdown_nobody_answers_expires_the_lead_is_told_and_a_late_answer_counts_not(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {}, protocol_timeout=0.2)
    shutdown: list[str] = []

    def late(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        shutdown.extend(shutdown_ids(request))
        rig.inbox.wait_lines(2)  # "Alice ready.", then the harness's word of the expiry
        arguments = {"request_id": shutdown[0], "approve": True}
        return calls(tool_call(1, "shutdown_response", arguments))

    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE)), *[asking_to_stop("Alice ready.")] * 8],
        ALICE: [answer("Alice ready."), late, answer("Still here.")],
    }
    rig.run(LEAD)
    alice, lead = rig.requests_of(ALICE), rig.requests_of(LEAD)
    expired = (
        f"shutdown_request {shutdown[0]} to alice expired: no answer in 0.2s (--protocol-timeout)."
    )
    told = [i for i, r in enumerate(lead) if expired in mail_from(r, "harness")]
    assert told and mail_from(lead[told[0]], "harness") == [expired]
    assert call_result(alice[2], "call_1") == (
        f"{INVALID}{shutdown[0]} was not answered: expired. Nothing changed."
    )
    assert len(alice) == 3  # the late yes did not stop her
    assert changes(rig.root) == [(shutdown[0], "pending"), (shutdown[0], "expired"),
                                 (shutdown[0], "ignored")]  # fmt: skip


# --- 5. answers that change nothing --------------------------------------------------------------


def test_unknown_and_duplicate_reviews_are_invalid_logged_once_and_change_nothing(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})
    results: dict[str, str] = {}

    def review_thrice(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        plans = plan_ids(request)
        if not plans or calls_made(request, "review_plan"):
            return heard(request)
        rig.inbox.wait_lines(2)
        return calls(
            tool_call(11, "review_plan", {"request_id": "0badc0de", "approve": True}),
            tool_call(12, "review_plan", {"request_id": plans[0], "approve": True}),
            tool_call(13, "review_plan", {"request_id": plans[0], "approve": False,
                                          "feedback": "On second thought, no."}),
        )  # fmt: skip

    def after(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        for call_id in ("call_11", "call_12", "call_13"):
            results[call_id] = results.get(call_id) or call_result(request, call_id)
        return review_thrice(request)

    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[after] * 8],
        ALICE: [
            calls(tool_call(1, "submit_plan", {"plan": PLAN})),
            answer("Plan sent."),
            calls(write(2)),
            answer("Written."),
        ],
    }
    rig.run(LEAD)
    plan = asked_id(rig.requests_of(ALICE)[1], "call_1")
    assert results["call_11"] == (
        f"{INVALID}0badc0de was not answered: unknown request_id. Nothing changed."
    )
    assert results["call_12"].startswith(f"plan {plan} of alice approved")
    assert results["call_13"] == (
        f"{INVALID}{plan} was not answered: already approved. Nothing changed."
    )
    assert RequestLog(rig.root, TEAM).get(plan).status is RequestStatus.APPROVED  # type: ignore[union-attr]
    assert changes(rig.root) == [
        (plan, "pending"),
        ("0badc0de", "ignored"),
        (plan, "approved"),
        (plan, "ignored"),
    ]
    ignored = [line for line in log_lines(rig.root) if "ignored" in line]
    assert [(i["ignored"], i["type"], i["by"]) for i in ignored] == [
        ("unknown request_id", "plan_approval_response", "lead"),
        ("already approved", "plan_approval_response", "lead"),
    ]
    (only,) = mailbox_lines(rig.root, "alice")  # the duplicate's rejection was never sent
    assert isinstance(parse_protocol(only.text), PlanApprovalResponse)
    assert (rig.root / "x.md").exists()  # the gate stayed lifted


def test_a_shutdown_response_to_a_plan_request_is_invalid_and_the_teammate_stays(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})

    def wrong_answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        plan = asked_id(request, "call_1")
        arguments = {"request_id": plan, "approve": True}
        return calls(tool_call(2, "shutdown_response", arguments))

    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[heard] * 8],  # it never reviews
        ALICE: [
            calls(tool_call(1, "submit_plan", {"plan": PLAN})),
            wrong_answer,
            calls(write(3)),
            answer("Still here, still gated."),
        ],
    }
    rig.run(LEAD)
    alice = rig.requests_of(ALICE)
    assert len(alice) == 4  # the answer did not stop her
    plan = asked_id(alice[1], "call_1")
    assert call_result(alice[2], "call_2") == (
        f"{INVALID}{plan} was not answered: wrong type: request {plan} is answered with "
        "plan_approval_response. Nothing changed."
    )
    assert call_result(alice[3], "call_3").startswith(
        f"denied: plan not approved: your plan {plan} waits"
    )
    assert RequestLog(rig.root, TEAM).get(plan).status is RequestStatus.PENDING  # type: ignore[union-attr]
    assert changes(rig.root) == [(plan, "pending"), (plan, "ignored")]
    assert log_lines(rig.root)[1]["by"] == "alice"
    assert not any(TERMINATED in str(mail_from(r, "harness")) for r in rig.requests_of(LEAD))


def test_a_shutdown_response_from_the_wrong_teammate_is_invalid_and_stops_nobody(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})
    asked = threading.Event()

    def answer_for_alice(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        (shutdown,) = RequestLog(rig.root, TEAM).pending()  # what bob should not answer
        arguments = {"request_id": shutdown.id, "approve": True}
        return calls(tool_call(1, "shutdown_response", arguments))

    rig.scripts = {
        LEAD: [
            calls(spawn(1, "alice", ALICE), spawn(2, "bob", BOB)),
            calls(tool_call(3, "request_shutdown", {"teammate": "alice"})),
            doing(lambda request: asked.set(), heard),
            *[heard] * 8,
        ],
        ALICE: [answer("Alice ready."), answer("Alice ready.")],  # she never answers it
        BOB: [gated(asked, answer_for_alice, "the lead asked alice"), answer("Bob goes on.")],
    }
    rig.run(LEAD)
    lead, bob = rig.requests_of(LEAD), rig.requests_of(BOB)
    shutdown = asked_id(lead[2], "call_3")
    assert len(bob) == 2  # he went on
    assert call_result(bob[1], "call_1") == (
        f"{INVALID}{shutdown} was not answered: wrong responder: request {shutdown} is for "
        "alice. Nothing changed."
    )
    assert RequestLog(rig.root, TEAM).get(shutdown).status is RequestStatus.PENDING  # type: ignore[union-attr]
    assert changes(rig.root) == [(shutdown, "pending"), (shutdown, "ignored")]
    assert log_lines(rig.root)[1]["by"] == "bob"
    assert isinstance(parse_protocol(mailbox_lines(rig.root, "alice")[0].text), ShutdownRequest)
    assert not any(TERMINATED in str(mail_from(r, "harness")) for r in lead)
    assert "stops, as its shutdown was approved" not in rig.printed()


# --- 6. a name used again, and a stop approved on the last turn ---------------------------------

ALICE_AGAIN = "Alice (again, not in plan mode): write y.md."


def test_a_teammate_spawned_again_without_plan_mode_under_a_once_gated_name_may_write(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {})

    def lead(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        gone = any(TERMINATED in text for text in mail_from(request, "harness"))
        if gone and len(calls_made(request, "spawn_teammate")) == 1:
            team = rig.team_of_run  # told before her thread let the name go: wait for that
            until(team, lambda: "alice" not in team.member_names(), "alice's thread ends")
            return calls(next_call(request, "spawn_teammate", name="alice", prompt=ALICE_AGAIN))
        return asking_to_stop("Ready.")(request)

    def leave(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        (asked,) = shutdown_ids(request)
        return calls(tool_call(1, "shutdown_response", {"request_id": asked, "approve": True}))

    rig.scripts = {
        LEAD: [calls(spawn_gated(1, "alice", ALICE)), *[lead] * 10],
        ALICE: [answer("Ready."), leave, answer("(not asked)")],
        ALICE_AGAIN: [calls(write(1, "y.md")), answer("Wrote y.md.")],
    }
    rig.run(LEAD)
    _, after = rig.requests_of(ALICE_AGAIN)
    assert call_result(after, "call_1").startswith("ok:"), call_result(after, "call_1")
    assert (rig.root / "y.md").exists()


def test_a_shutdown_approved_on_the_teammates_last_turn_still_releases_its_tasks(
    tmp_path: Path,
) -> None:
    rig = Agent16(tmp_path, {}, max_turns=5)  # a teammate's turns: min(its agent's 10, 5)

    def leave(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        (asked,) = shutdown_ids(request)
        return calls(tool_call(1, "shutdown_response", {"request_id": asked, "approve": True}))

    claim = {"taskId": "1", "status": "in_progress", "owner": "alice"}
    rig.scripts = {
        LEAD: [calls(spawn(1, "alice", ALICE)), *[asking_to_stop("Ready.")] * 4],
        ALICE: [
            calls(
                tool_call(2, "task_create", {"subject": "Count the tests"}),
                tool_call(3, "task_update", claim),
            ),
            answer("Ready."),
            calls(tool_call(4, "glob", {"pattern": "*"})),
            calls(tool_call(5, "glob", {"pattern": "*"})),
            leave,  # her 5th and last request
        ],
    }
    rig.run(LEAD)
    assert len(rig.requests_of(ALICE)) == 5
    harness = mail_from(rig.requests_of(LEAD)[-1], "harness")
    assert any(text.startswith(TERMINATED) for text in harness), harness
    (task,) = TaskStore(rig.root, TEAM).list().tasks
    assert (task.status.value, task.owner) == ("pending", "")

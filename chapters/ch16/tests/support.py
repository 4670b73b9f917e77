"""What chapter 16's run tests share: chapter 15's rig (chapters/ch15/tests/support.py) with
chapter 16's recipe, the request ids a reply finds in what it answers, the team's request log
as lines, and a wait for the team's files that does not sleep.

    rig = Agent16(tmp_path, {PROMPT: [...], ALICE: [...]}, protocol_timeout=0.2)
    rig.run(PROMPT)
    rig.protocols                # the run's `Protocols` (chapters/ch16/team_protocols.py)
    log_lines(rig.root)          # requests.jsonl, one dict a line
    until(rig.team_of_run, lambda: ..., "what")   # wakes whenever the team changes

A request's id is random, so a scripted reply reads it where the model would: in the
message it answers (`plan_ids`, `shutdown_ids`) or in the result of the call that asked
(`asked_id`). Every wait is bounded by `BOUND` (30 s); nothing sleeps.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chapters.ch07.scripted_stream import call_result, tool_call
from chapters.ch09.session_log import SessionLog
from chapters.ch11.tests.composed import STARTED
from chapters.ch15.mailbox import MailMessage
from chapters.ch15.team import Team
from chapters.ch15.tests.support import BOUND, TEAM, Agent15, mail_from
from chapters.ch16.protocol import REQUESTS_FILE
from chapters.ch16.team_protocols import EndProtocols, Protocols

_PLAN = re.compile(r"plan_approval_request (?P<id>[0-9a-f]{8}) from ")
_SHUTDOWN = re.compile(r"shutdown_request (?P<id>[0-9a-f]{8}) from ")
_ASKED = re.compile(r"request_id (?P<id>[0-9a-f]{8}):")


@dataclass
class Agent16(Agent15):
    """One run of chapter 16's agent in tmp_path/ws on scripted streams (one per member):
    chapter 15's rig, with `protocol_timeout` as --protocol-timeout (None: its default)."""

    chapter = 16
    protocol_timeout: float | None = None

    def given(self) -> dict[str, Any]:
        given = {**super().given(), "log": SessionLog.new(self.root, 16, STARTED)}
        if self.protocol_timeout is not None:
            given["protocol_timeout"] = self.protocol_timeout
        return given

    @property
    def protocols(self) -> Protocols:
        """The run's `Protocols`, as the lead's `EndProtocols` holds it."""
        assert self.spec is not None, "the agent is not built yet"
        found = [f.protocols for f in self.spec.features if isinstance(f, EndProtocols)]
        assert len(found) == 1 and found[0] is not None, found
        return found[0]


# --- the ids a reply reads ---------------------------------------------------------------------


def plan_ids(request: Mapping[str, Any], sender: str = "alice") -> list[str]:
    """The ids of the plan_approval_requests from `sender` that `request` carries, in order."""
    return [m["id"] for text in mail_from(request, sender) for m in _PLAN.finditer(text)]


def shutdown_ids(request: Mapping[str, Any]) -> list[str]:
    """The ids of the shutdown_requests from the lead that `request` carries, in order."""
    return [m["id"] for text in mail_from(request, "lead") for m in _SHUTDOWN.finditer(text)]


def asked_id(request: Mapping[str, Any], call_id: str) -> str:
    """The request_id the result of `call_id` (submit_plan, request_shutdown) names."""
    found = _ASKED.match(call_result(request, call_id))
    assert found is not None, call_result(request, call_id)
    return found["id"]


def calls_made(request: Mapping[str, Any], tool: str) -> list[dict[str, Any]]:
    """The arguments of every call of `tool` the history of `request` holds, in order."""
    return [
        json.loads(call["function"]["arguments"])
        for message in request["messages"]
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or ()
        if call["function"]["name"] == tool
    ]


def next_call(request: Mapping[str, Any], tool: str, **arguments: Any) -> tuple[str, str, str]:
    """A call with an id no earlier call in the history has (call_<n>)."""
    made = sum(
        len(m.get("tool_calls") or ()) for m in request["messages"] if m["role"] == "assistant"
    )
    return tool_call(100 + made, tool, arguments)


# --- the team's files --------------------------------------------------------------------------


def log_lines(root: Path, team: str = TEAM) -> list[dict[str, Any]]:
    """Every line of the team's requests.jsonl, in order ([] when there is none)."""
    path = root / ".tutorial" / "teams" / team / REQUESTS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def changes(root: Path, team: str = TEAM) -> list[tuple[str, str]]:
    """(request_id, status or `ignored`) of each line of the log, in order."""
    return [
        (line["request_id"], "ignored" if "ignored" in line else line["status"])
        for line in log_lines(root, team)
    ]


def mailbox_lines(root: Path, name: str, team: str = TEAM) -> list[MailMessage]:
    """Every message in `name`'s mailbox file, delivered or not, in order."""
    path = root / ".tutorial" / "teams" / team / "inboxes" / f"{name}.jsonl"
    if not path.exists():
        return []
    return [MailMessage.from_line(line) for line in path.read_bytes().splitlines()]


def until(team: Team | Callable[[], Team], holds: Callable[[], bool], what: str) -> None:
    """Until `holds()`: looked at again each time the team changes (mail sent, a member's
    state), at most `BOUND` seconds; TimeoutError naming `what`."""
    deadline = time.monotonic() + BOUND
    while True:
        now = team if isinstance(team, Team) else team()
        seen = now.generation()
        if holds():
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{what}: not within {BOUND:g} s")
        now.wait_for_change(seen, left)

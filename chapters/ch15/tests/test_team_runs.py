"""What one run of a team leaves for the next: mail a resumed history holds, and the lead lock."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chapters.ch13.inbox import Inbox
from chapters.ch15.mailbox import LEAD, MailMessage, envelope
from chapters.ch15.team import Team
from shared.console import Console
from shared.messages import Message, SystemMessage, UserMessage


def team_in(root: Path) -> Team:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    return Team(root, "crew", Inbox(), console)


def test_mail_a_resumed_history_holds_is_counted_not_sent_again(tmp_path: Path) -> None:
    team = team_in(tmp_path)
    read = MailMessage.new("alice", "the tests are in tests/", "tests found")
    waiting = MailMessage.new("bob", "cart.py has one function", "code read")
    team.mailboxes.send(LEAD, read)
    team.mailboxes.send(LEAD, waiting)
    # The run that added alice's message to the history was killed before it counted it.
    history: list[Message] = [
        SystemMessage(content="You are the lead."),
        UserMessage(content=envelope(read)),
    ]

    team.already_read(LEAD, team.lead_inbox, history)
    team.read_mail(LEAD, team.lead_inbox)
    team.count_delivered(LEAD, team.lead_inbox)

    assert [event.text for event in team.lead_inbox.pending()] == [envelope(waiting)]
    assert team.mailboxes.delivered(LEAD) == 1  # alice's line: in the history, now counted


def test_a_new_history_gets_every_undelivered_message(tmp_path: Path) -> None:
    team = team_in(tmp_path)
    message = MailMessage.new("alice", "the tests are in tests/", None)
    team.mailboxes.send(LEAD, message)

    team.already_read(LEAD, team.lead_inbox, [SystemMessage(content="You are the lead.")])
    team.read_mail(LEAD, team.lead_inbox)

    assert [event.text for event in team.lead_inbox.pending()] == [envelope(message)]
    assert team.mailboxes.delivered(LEAD) == 0


def test_one_run_leads_a_team_at_a_time(tmp_path: Path) -> None:
    """Two runs that both led a team would share its mailboxes and mark each other's members:
    the second is refused until the first has ended, and names the way out."""
    from chapters.ch15.team import TeamLed

    first, second = team_in(tmp_path), team_in(tmp_path)
    started = first.spawn("alice", "general", lambda seat: first.wait_for_mail(seat))
    try:
        with pytest.raises(TeamLed, match=r"led by another run.*--team"):
            second.spawn("alice", "general", lambda seat: None)
        assert [m.status for m in first.config.members()] == ["working"]  # left as it was
    finally:
        first.stop_all()
    assert started.thread is not None and not started.thread.is_alive()
    again = second.spawn("bob", "general", lambda seat: second.wait_for_mail(seat))
    second.stop_all()
    assert again.name == "bob"
    assert {m.name: m.status for m in second.config.members()} == {
        "alice": "stopped",
        "bob": "stopped",
    }

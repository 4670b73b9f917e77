"""A resumed lead's history may hold mail its last run did not count: it is not sent again."""

from __future__ import annotations

import io
from pathlib import Path

from chapters.ch13.inbox import Inbox
from chapters.ch15.mailbox import LEAD, MailMessage, envelope
from chapters.ch15.team import Team
from shared.console import Console
from shared.messages import SystemMessage, UserMessage


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
    history = [SystemMessage(content="You are the lead."), UserMessage(content=envelope(read))]

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

"""The roster's promises: Claude Code's exact file, names unique among live members and free
again once a member ended, statuses that never come back from stopped or failed, the bounds,
and a file that cannot be used stopping every call and never being overwritten."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from chapters.ch03.tests.support import link
from chapters.ch15 import team_config
from chapters.ch15.team_config import (
    LOCK_TIMEOUT,
    MAX_ENTRIES,
    MAX_MEMBERS,
    Member,
    MemberEnded,
    MemberStatus,
    NameTaken,
    TeamBusy,
    TeamConfig,
    TeamFileError,
    TeamFull,
    UnknownMember,
)

CONFIG = Path(".tutorial/teams/demo/config.json")
START = 1_796_378_398.5  # seconds since 1970: joinedAt 1796378398500


class Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        self.now += 1
        return self.now - 1


def team(root: Path) -> TeamConfig:
    return TeamConfig(root, "demo", clock=Clock())


def test_join_writes_claude_codes_file_exactly(tmp_path: Path) -> None:
    config = team(tmp_path)
    alice = config.join("alice", "general", "/home/me/project")
    assert alice == Member(
        agentId="alice@demo",
        name="alice",
        agentType="general",
        status=MemberStatus.WORKING,
        cwd="/home/me/project",
        joinedAt=1_796_378_398_500,
    )
    config.join("bob", "explore", tmp_path)
    expected = {
        "name": "demo",
        "leadAgentId": "lead@demo",
        "members": [
            {
                "agentId": "alice@demo",
                "name": "alice",
                "agentType": "general",
                "status": "working",
                "cwd": "/home/me/project",
                "joinedAt": 1_796_378_398_500,
            },
            {
                "agentId": "bob@demo",
                "name": "bob",
                "agentType": "explore",
                "status": "working",
                "cwd": str(tmp_path),
                "joinedAt": 1_796_378_399_500,
            },
        ],
    }
    data = (tmp_path / CONFIG).read_bytes()
    assert data == (json.dumps(expected, indent=2, ensure_ascii=False) + "\n").encode()
    assert [member.name for member in config.members()] == ["alice", "bob"]


def test_a_team_with_no_file_has_no_members_and_reading_makes_nothing(tmp_path: Path) -> None:
    config = team(tmp_path)
    assert config.members() == [] and config.live() == []
    assert not (tmp_path / ".tutorial").exists()
    assert config.shown == ".tutorial/teams/demo/config.json"
    assert config.lock_timeout == LOCK_TIMEOUT
    with pytest.raises(ValueError, match="team name"):
        TeamConfig(tmp_path, "no/slash")


@pytest.mark.parametrize(
    ("name", "agent_type", "cwd", "why"),
    [
        ("Alice", "general", "/w", "1 to 32 characters"),
        ("a" * 33, "general", "/w", "1 to 32 characters"),
        ("lead", "general", "/w", "reserved"),
        ("harness", "general", "/w", "reserved"),
        ("alice", "", "/w", "agentType"),
        ("alice", "two\nlines", "/w", "agentType"),
        ("alice", "g" * 65, "/w", "agentType"),
        ("alice", "general", "", "cwd"),
        ("alice", "general", "/" * 4_097, "cwd"),
    ],
)
def test_join_refuses_what_can_never_be_a_member_and_writes_nothing(
    tmp_path: Path, name: str, agent_type: str, cwd: str, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        team(tmp_path).join(name, agent_type, cwd)
    assert not (tmp_path / ".tutorial").exists()


def test_a_name_is_taken_while_its_member_lives_and_free_once_it_ended(tmp_path: Path) -> None:
    config = team(tmp_path)
    first = config.join("alice", "general", "/w")
    config.join("bob", "general", "/w")
    for status in (MemberStatus.WORKING, MemberStatus.IDLE):
        config.set_status("alice", status)
        with pytest.raises(NameTaken, match=r"named alice already; .* live members: alice, bob"):
            config.join("alice", "general", "/w")
    for ended in (MemberStatus.STOPPED, MemberStatus.FAILED):
        config.set_status("alice", ended)
        assert [member.name for member in config.live()] == ["bob"]
        again = config.join("alice", "explore", "/elsewhere")
        assert again.status is MemberStatus.WORKING and again.joinedAt > first.joinedAt
        entries = [member for member in config.members() if member.name == "alice"]
        assert entries == [again]  # replaced, not added: one entry per name
        assert config.members()[-1] == again  # the file keeps the order they joined


def test_status_moves_between_working_and_idle_and_an_ended_member_changes_no_more(
    tmp_path: Path,
) -> None:
    config = team(tmp_path)
    config.join("alice", "general", "/w")
    assert config.set_status("alice", "idle").status is MemberStatus.IDLE
    assert config.set_status("alice", MemberStatus.WORKING).status is MemberStatus.WORKING
    path = tmp_path / CONFIG
    before = path.stat()
    assert config.set_status("alice", "working").status is MemberStatus.WORKING
    assert path.stat().st_ino == before.st_ino  # the same status again: nothing written
    config.set_status("alice", "stopped")
    assert config.set_status("alice", "stopped").status is MemberStatus.STOPPED
    written = path.read_bytes()
    for late in ("idle", "working", "failed"):
        with pytest.raises(MemberEnded, match=f"alice is stopped: .* \\(to {late}\\)"):
            config.set_status("alice", late)
    assert path.read_bytes() == written
    with pytest.raises(UnknownMember, match=r"no member carol\. The members: alice"):
        config.set_status("carol", "idle")
    with pytest.raises(ValueError, match="status 'asleep' is not one of working, idle"):
        config.set_status("alice", "asleep")


def test_at_most_16_live_members_and_an_ended_one_makes_room(tmp_path: Path) -> None:
    config = team(tmp_path)
    for number in range(MAX_MEMBERS):
        config.join(f"m{number}", "general", "/w")
    with pytest.raises(TeamFull, match="16 live members"):
        config.join("one-more", "general", "/w")
    config.set_status("m3", "failed")
    config.join("one-more", "general", "/w")
    assert len(config.live()) == MAX_MEMBERS


def test_the_oldest_ended_entries_make_room_once_the_file_holds_32(tmp_path: Path) -> None:
    config = team(tmp_path)
    config.join("keeper", "general", "/w")  # live all along: never dropped
    for number in range(MAX_ENTRIES + 3):
        config.join(f"m{number}", "general", "/w")
        config.set_status(f"m{number}", "stopped")
    names = [member.name for member in config.members()]
    assert len(names) == MAX_ENTRIES
    assert names == ["keeper", *(f"m{number}" for number in range(4, MAX_ENTRIES + 3))]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "it is not JSON"),
        (b'{"name": "demo", "leadAgentId": "lead@demo"}', "members: Field required"),
        (b'{"name": "demo", "leadAgentId": "lead@demo", "members": [], "x": 1}', "x: Extra"),
        (b'{"name": "other", "leadAgentId": "lead@demo", "members": []}', "its name is 'other'"),
        (b'{"name": "demo", "leadAgentId": "boss@demo", "members": []}', "leadAgentId"),
    ],
)
def test_a_file_that_cannot_be_used_stops_every_call_and_is_never_overwritten(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / CONFIG
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    config = team(tmp_path)
    calls: list[Callable[[], object]] = [
        config.members,
        config.live,
        lambda: config.join("alice", "general", "/w"),
        lambda: config.set_status("alice", "idle"),
    ]
    for call in calls:
        with pytest.raises(TeamFileError) as caught:
            call()
        text = str(caught.value)
        assert text.startswith(".tutorial/teams/demo/config.json cannot be used: ")
        assert why in text
        assert "fix it by hand, or, when no member of the team runs, delete it" in text
    assert path.read_bytes() == content


def entry(**changes: object) -> dict[str, object]:
    member: dict[str, object] = {
        "agentId": "alice@demo",
        "name": "alice",
        "agentType": "general",
        "status": "idle",
        "cwd": "/w",
        "joinedAt": 1,
    }
    return {**member, **changes}


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([entry(status="asleep")], "members.0.status"),
        ([entry(joinedAt="1")], "members.0.joinedAt"),
        ([entry(color="blue")], "members.0.color"),
        ([entry(name="Alice", agentId="Alice@demo")], "members.0: teammate name 'Alice'"),
        ([entry(agentId="alice@other")], "agentId 'alice@other' is not 'alice@demo'"),
        ([entry(), entry(status="stopped")], "members.1: the name alice is in the list twice"),
        ([entry(joinedAt=-5)], "joinedAt is before 1970"),
    ],
)
def test_an_entry_that_is_not_a_member_makes_the_file_unusable(
    tmp_path: Path, members: list[dict[str, object]], why: str
) -> None:
    path = tmp_path / CONFIG
    path.parent.mkdir(parents=True)
    content = json.dumps({"name": "demo", "leadAgentId": "lead@demo", "members": members})
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TeamFileError, match="cannot be used") as caught:
        team(tmp_path).join("bob", "general", "/w")
    assert why in str(caught.value)
    assert path.read_text(encoding="utf-8") == content


def test_a_file_larger_than_any_roster_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = team(tmp_path)
    config.join("alice", "general", "/w")
    monkeypatch.setattr(team_config, "MAX_FILE_BYTES", 100)
    with pytest.raises(TeamFileError, match="it is more than 100 bytes"):
        config.members()


def test_a_change_waits_for_the_lock_at_most_its_timeout(tmp_path: Path) -> None:
    config = team(tmp_path)
    config.join("alice", "general", "/w")
    before = (tmp_path / CONFIG).read_bytes()
    busy = TeamConfig(tmp_path, "demo", lock_timeout=0.05)
    with FileLock(tmp_path / CONFIG.parent / "config.json.lock", timeout=1):  # another holder
        with pytest.raises(TeamBusy, match=r"locked by another process \(waited 0.05 s\)"):
            busy.set_status("alice", "idle")
        with pytest.raises(TeamBusy):
            busy.join("bob", "general", "/w")
        assert [member.name for member in busy.members()] == ["alice"]  # reads take no lock
    assert (tmp_path / CONFIG).read_bytes() == before


def test_a_team_folder_that_links_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "work"
    link(root / CONFIG.parent, outside)
    with pytest.raises(TeamFileError, match="leads outside"):
        team(root).join("alice", "general", "/w")
    assert list(outside.iterdir()) == []

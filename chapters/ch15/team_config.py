"""The team's roster: who is on the team and what each member is doing, in one file.

    .tutorial/teams/<team>/config.json       Claude Code's shape (UTF-8, indent 2, newline):
        {"name": "demo", "leadAgentId": "lead@demo",
         "members": [{"agentId": "alice@demo", "name": "alice", "agentType": "general",
                      "status": "working", "cwd": "/home/me/project",
                      "joinedAt": 1796378398000}]}
    .tutorial/teams/<team>/config.json.lock  taken by every change (`filelock`)

(`joinedAt`: milliseconds since 1970.) The lead is not a member: it is named by
`leadAgentId`, and its mailbox is `lead` (chapters/ch15/mailbox.py). A member's
status is one of four:

    working   its loop is making requests
    idle      it answered and waits for a message
    stopped   the run ended and stopped it
    failed    a provider error, its turn limit or an exception ended it

Working and idle members are live; their names are taken. A stopped or failed
member's name is free again: joining under it replaces the old entry. A stopped
or failed member changes no more (`MemberEnded`): a loop that has not noticed it
was stopped cannot bring it back to life by saying "idle".

Every change takes `config.json.lock` (at most `LOCK_TIMEOUT` seconds of
waiting: then `TeamBusy`), reads the file fresh, checks the rules, and writes
the whole file atomically (chapter 2's `atomic_write`); a refused change writes
nothing. Reads take no lock: the file is replaced whole, so a reader sees it
before a change or after it.

A file that cannot be used (not JSON, not this shape, another team's, a name
twice) stops every call with `TeamFileError`, which names the file and the fix,
and it is never overwritten: the roster is not guessed.

Bounds: at most `MAX_MEMBERS` live members (each is a loop on its own thread,
making requests against one family budget and asking the one human for
approvals: a bound keeps a runaway lead from spawning teammates without end);
at most `MAX_ENTRIES` entries (the oldest stopped or failed ones make room);
an agent type of `MAX_AGENT_TYPE` characters, a cwd of `MAX_CWD`; the file at
most `MAX_FILE_BYTES`, read or written.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from chapters.ch02.text_files import atomic_write, read_open_file
from chapters.ch03.harness_files import harness_folder, open_harness_file
from chapters.ch15.mailbox import LEAD, TEAMS_FOLDER, member_name_problem, team_name_problem
from shared.errors import EXIT_USAGE, TutorialError

CONFIG_FILE = "config.json"
LOCK_FILE = "config.json.lock"
LOCK_TIMEOUT = 10.0  # seconds a change waits for another process's change to end
MAX_MEMBERS = 16  # live (working or idle) at once: each is a thread making requests
MAX_ENTRIES = 32  # entries in the file, stopped and failed ones included
MAX_AGENT_TYPE = 64  # characters of an agent definition's name (chapter 6's are at most 40)
MAX_CWD = 4_096  # characters of a working folder (PATH_MAX on Linux)
# Of the file, read or written. 32 entries whose cwd is 4,096 six-byte \u escapes are about
# 800 KB; the rest of an entry is under 300 bytes.
MAX_FILE_BYTES = 1024 * 1024


class MemberStatus(StrEnum):
    WORKING = "working"
    IDLE = "idle"
    STOPPED = "stopped"
    FAILED = "failed"


LIVE = frozenset({MemberStatus.WORKING, MemberStatus.IDLE})  # their names are taken


class TeamError(TutorialError):
    """Something the team refused, or could not do; the message says what to do."""


class TeamFileError(TeamError):
    """The team's config.json cannot be used as a whole (not JSON, not the shape, unreadable)."""

    exit_code = EXIT_USAGE

    def cli_line(self) -> str:
        return str(self)


class TeamBusy(TeamError):
    """Another process held the lock for `LOCK_TIMEOUT` seconds."""


class TeamFull(TeamError):
    """`MAX_MEMBERS` members are live already."""


class NameTaken(TeamError):
    """A live member has that name."""


class UnknownMember(TeamError):
    """No member has that name."""


class MemberEnded(TeamError):
    """The member is stopped or failed: its status changes no more."""


class Member(BaseModel):
    """One entry of `members`, exactly its keys (Claude Code's names)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    agentId: str  # "<name>@<team>"
    name: str
    agentType: str  # the agent definition (chapter 6) it runs as: "general"
    status: MemberStatus
    cwd: str  # the folder it works in
    joinedAt: int  # milliseconds since 1970

    @property
    def live(self) -> bool:
        return self.status in LIVE


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    leadAgentId: str
    members: list[Member]

    def file_bytes(self) -> bytes:
        data = self.model_dump(mode="json")
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def agent_id(name: str, team: str) -> str:
    """Claude Code's id of a team's agent: `alice@demo`, `lead@demo`."""
    return f"{name}@{team}"


class TeamConfig:
    """The roster of one team of a workspace: `root/.tutorial/teams/<team>/config.json`.

    Holds nothing itself: every call reads the file, so objects in several
    processes (or several in one) on the same team always agree.
    """

    def __init__(
        self,
        root: Path,
        team: str,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        problem = team_name_problem(team)
        if problem:
            raise ValueError(problem)
        self.root = root
        self.team = team
        self.lock_timeout = lock_timeout
        self.clock = clock  # seconds since 1970: `joinedAt`

    @property
    def relative(self) -> Path:
        """The file below the workspace: `.tutorial/teams/<team>/config.json`."""
        return TEAMS_FOLDER / self.team / CONFIG_FILE

    @property
    def shown(self) -> str:
        return self.relative.as_posix()

    # --- reading ----------------------------------------------------------------------------

    def members(self) -> list[Member]:
        """Every entry, in the file's order (the order they joined); none if there is no file
        yet. Takes no lock. `TeamFileError` if the file cannot be used."""
        return list(self._read().members)

    def live(self) -> list[Member]:
        """The working and idle members."""
        return [member for member in self.members() if member.live]

    # --- changing ---------------------------------------------------------------------------

    def join(self, name: str, agent_type: str, cwd: Path | str) -> Member:
        """A new member, working from now; a stopped or failed one of that name is replaced.

        ValueError for a name or argument that can never be used; `NameTaken` if a live
        member has the name; `TeamFull` at `MAX_MEMBERS` live members.
        """
        problem = member_name_problem(name) or _agent_type_problem(agent_type)
        folder = str(cwd)
        if not problem and not 0 < len(folder) <= MAX_CWD:
            problem = f"cwd must be 1 to {MAX_CWD:,} characters, not {len(folder):,}"
        if problem:
            raise ValueError(problem)
        with self._locked():
            team = self._read()
            live = [member for member in team.members if member.live]
            if any(member.name == name for member in live):
                raise NameTaken(
                    f"a live member of team {self.team} is named {name} already; choose "
                    f"another name. The live members: {_names(live)}"
                )
            if len(live) >= MAX_MEMBERS:
                raise TeamFull(
                    f"team {self.team} has {len(live)} live members, the most a team may have; "
                    "wait for one to finish before starting another"
                )
            member = Member(
                agentId=agent_id(name, self.team),
                name=name,
                agentType=agent_type,
                status=MemberStatus.WORKING,
                cwd=folder,
                joinedAt=int(self.clock() * 1000),
            )
            kept = [each for each in team.members if each.name != name]
            while len(kept) >= MAX_ENTRIES:  # live ones are fewer: an ended one is there
                oldest = min(
                    (each for each in kept if not each.live), key=lambda each: each.joinedAt
                )
                kept.remove(oldest)
            self._write(
                _File(name=team.name, leadAgentId=team.leadAgentId, members=[*kept, member])
            )
            return member

    def set_status(self, name: str, status: MemberStatus | str) -> Member:
        """The member with its new status. The same status again writes nothing.

        `UnknownMember` if there is none of that name; `MemberEnded` if it is stopped
        or failed (join again to bring the name back); ValueError for no such status.
        """
        try:
            new = MemberStatus(status)
        except ValueError:
            known = ", ".join(each.value for each in MemberStatus)
            raise ValueError(f"status {status!r} is not one of {known}") from None
        with self._locked():
            team = self._read()
            found = next((each for each in team.members if each.name == name), None)
            if found is None:
                raise UnknownMember(
                    f"team {self.team} has no member {name}. The members: {_names(team.members)}"
                )
            if found.status is new:
                return found
            if not found.live:
                raise MemberEnded(
                    f"{name} is {found.status.value}: a member that ended changes no more "
                    f"(to {new.value}); join again to start a member of that name"
                )
            changed = found.model_copy(update={"status": new})
            members = [changed if each is found else each for each in team.members]
            self._write(_File(name=team.name, leadAgentId=team.leadAgentId, members=members))
            return changed

    # --- inside -----------------------------------------------------------------------------

    def _read(self) -> _File:
        empty = _File(name=self.team, leadAgentId=agent_id(LEAD, self.team), members=[])
        try:
            descriptor = open_harness_file(self.root, self.relative, os.O_RDONLY)
            data = read_open_file(descriptor, MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return empty
        except (OSError, ValueError) as error:  # ValueError: not a regular file
            raise TeamFileError(f"{self.shown} cannot be read ({error})") from None
        if len(data) > MAX_FILE_BYTES:
            raise self._unusable(f"it is more than {MAX_FILE_BYTES:,} bytes")
        try:
            team = _File.model_validate_json(data)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            kind = "it is not JSON" if first["type"] == "json_invalid" else "it is not the shape"
            raise self._unusable(
                f"{kind} ({where + ': ' if where else ''}{first['msg']})"
            ) from None
        problem = self._content_problem(team)
        if problem:
            raise self._unusable(problem)
        return team

    def _content_problem(self, team: _File) -> str | None:
        if team.name != self.team:
            return f"its name is {team.name!r}, not {self.team!r}"
        if team.leadAgentId != agent_id(LEAD, self.team):
            return f"its leadAgentId is {team.leadAgentId!r}, not {agent_id(LEAD, self.team)!r}"
        seen: set[str] = set()
        for number, member in enumerate(team.members):
            where = f"members.{number}"
            problem = member_name_problem(member.name) or _agent_type_problem(member.agentType)
            if problem:
                return f"{where}: {problem}"
            if member.name in seen:
                return f"{where}: the name {member.name} is in the list twice"
            seen.add(member.name)
            expected = agent_id(member.name, self.team)
            if member.agentId != expected:
                return f"{where}: agentId {member.agentId!r} is not {expected!r}"
            if not 0 < len(member.cwd) <= MAX_CWD:
                return f"{where}: cwd must be 1 to {MAX_CWD:,} characters"
            if member.joinedAt < 0:
                return f"{where}: joinedAt is before 1970"
        return None

    def _unusable(self, why: str) -> TeamFileError:
        return TeamFileError(
            f"{self.shown} cannot be used: {why}. It holds team {self.team}'s members, as "
            '{"name", "leadAgentId", "members": [{"agentId", "name", "agentType", "status", '
            '"cwd", "joinedAt"}]}: fix it by hand, or, when no member of the team runs, delete '
            "it to start the team with no members. It is never overwritten"
        )

    def _write(self, team: _File) -> None:
        data = team.file_bytes()
        if len(data) > MAX_FILE_BYTES:  # not reached within the bounds; never write past them
            raise TeamError(
                f"{self.shown} would be {len(data):,} bytes; at most {MAX_FILE_BYTES:,}"
            )
        try:
            atomic_write(self._folder() / CONFIG_FILE, data)
        except OSError as error:
            raise TeamFileError(f"{self.shown} could not be written ({error})") from None

    def _folder(self) -> Path:
        """The team's folder, made if missing, checked to stay inside the workspace (a link
        that leads out is refused: chapters/ch03/harness_files.py)."""
        try:
            return harness_folder(self.root, self.relative.parent, create=True)
        except OSError as error:
            raise TeamFileError(
                f"{self.relative.parent.as_posix()}/ cannot be used ({error})"
            ) from None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import FileLock, Timeout  # only a team's run needs it

        lock = FileLock(
            self._folder() / LOCK_FILE, timeout=self.lock_timeout, fallback_to_soft=False
        )
        try:
            lock.acquire()
        except Timeout:
            raise TeamBusy(
                f"{self.shown} is locked by another process (waited {self.lock_timeout:g} s); "
                "try again"
            ) from None
        except OSError as error:
            raise TeamFileError(f"{self.shown}.lock cannot be taken ({error})") from None
        try:
            yield
        finally:
            lock.release()


def _agent_type_problem(agent_type: str) -> str | None:
    if not agent_type.strip() or len(agent_type) > MAX_AGENT_TYPE or "\n" in agent_type:
        return f"agentType {agent_type!r} must be one line of 1 to {MAX_AGENT_TYPE} characters"
    return None


def _names(members: list[Member]) -> str:
    return ", ".join(member.name for member in members) or "(none)"

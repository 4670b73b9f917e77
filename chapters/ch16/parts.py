"""Chapter 16's part: chapter 15's team, with a plan gate and a stop that is asked and answered.

team  replaces chapter 15's part of that name, and changes what it makes in four places
      (its methods), with the protocols of chapters/ch16/team_protocols.py:
        make_team       the team renders a protocol message as a sentence that says how
                        to answer it, not as JSON
        lead            request_shutdown and review_plan; the plan gate (`PlanGate`,
                        first of the authorizers: before the hooks and the policy, so an
                        approved plan can lift this gate only); the end of the expiry
                        thread; --protocol-timeout
        teammate        submit_plan and shutdown_response; `LeaveWhenApproved` first of
                        its features: an approved shutdown stops it at the next boundary
        start_teammate  spawn_teammate's plan_mode_required gates the teammate before
                        its thread starts
      `team` lists the open requests too (.tutorial/teams/NAME/requests.jsonl).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch12.parts import TASKS
from chapters.ch15.parts import RUN_TEAM, TeamPart
from shared.parts import Build, Subcommand
from shared.recipe import AUTHORIZE, FEATURES, FOLDER, TOOLS
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch06.definitions import AgentDefinition
    from chapters.ch15.demo import DemoGate
    from chapters.ch15.team import Seat, Team
    from chapters.ch15.team_tools import SpawnArgs
    from chapters.ch16.team_protocols import Protocols
    from shared.agent import AgentSpec

PROTOCOLS: Key[Protocols] = Key("the run's protocol requests: plans and shutdowns")
TIMEOUT_DEFAULT = 300.0  # chapters/ch16/team_protocols.py's; here for a fast --help
TIMEOUT_MAX = 86_400.0


class ProtocolTeam(TeamPart):
    """Chapter 15's team, whose plans must be approved and whose stops are asked."""

    summary = (
        "chapter 15's team with protocols: request_shutdown, review_plan, submit_plan, "
        "shutdown_response, plan_mode_required; --protocol-timeout; `team` lists open requests"
    )
    options = (
        *TeamPart.options,
        click.Option(
            ["--protocol-timeout"],
            type=click.FloatRange(min=0, min_open=True, max=TIMEOUT_MAX),
            default=TIMEOUT_DEFAULT,
            show_default=True,
            metavar="SECONDS",
            help=(
                "A plan or shutdown request not answered within this long expires, and the "
                "one who asked is told."
            ),
        ),
    )

    def demo_gate(self) -> DemoGate:
        from chapters.ch16.demo import demo_gate

        return demo_gate()

    def make_team(self, build: Build) -> Team:
        from chapters.ch16.team_protocols import render

        team = super().make_team(build)
        team.render = render  # a protocol message as a sentence, not as JSON
        return team

    def protocols(self, build: Build) -> Protocols:
        """The run's protocols, made once for the lead and its teammates."""
        from chapters.ch16.protocol import RequestLog
        from chapters.ch16.team_protocols import Protocols

        def made() -> Protocols:
            team = build.shared(RUN_TEAM, lambda: self.make_team(build))
            if build.setup.demo:
                from chapters.ch16.demo import demo_ids

                log = RequestLog(build.get(FOLDER), team.name, new_id=demo_ids())
            else:
                log = RequestLog(build.get(FOLDER), team.name)
            timeout = build.setup.option("protocol_timeout")
            return Protocols(team, log, build.setup.get(TASKS), timeout)

        return build.shared(PROTOCOLS, made)

    def lead(self, build: Build) -> None:
        from chapters.ch06.parts import AGENTS
        from chapters.ch16.protocol_tools import lead_tools
        from chapters.ch16.team_protocols import EndProtocols

        super().lead(build)
        if not build.get(AGENTS).names:
            return
        for tool in lead_tools(lambda: self.protocols(build)):
            build.add(TOOLS, tool)
        gate = build.later(lambda: self.protocols(build))
        build.add(AUTHORIZE, gate, phase=Phase.FIRST, label="PlanGate")
        end = build.later(lambda: EndProtocols(self.protocols(build)))
        build.add(FEATURES, end, phase=Phase.FIRST, label="EndProtocols")

    def teammate(self, build: Build, seat: Seat) -> None:
        from chapters.ch16.protocol_tools import teammate_tools
        from chapters.ch16.team_protocols import LeaveWhenApproved

        protocols = build.get(PROTOCOLS)
        leave = LeaveWhenApproved(protocols, seat.name)
        build.add(FEATURES, leave, phase=Phase.FIRST, before=["budget"], children=True)
        super().teammate(build, seat)
        for tool in teammate_tools(protocols, seat.name):
            build.add(TOOLS, tool, children=True)

    def spawn_args(self) -> type[SpawnArgs]:
        from chapters.ch16.protocol_tools import ProtocolSpawnArgs

        return ProtocolSpawnArgs

    def start_teammate(
        self,
        build: Build,
        team: Team,
        lead: AgentSpec,
        args: SpawnArgs,
        definition: AgentDefinition,
    ) -> None:
        if getattr(args, "plan_mode_required", False):
            self.protocols(build).require_plan(args.name)  # before its first call can run
        super().start_teammate(build, team, lead, args, definition)

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch15.listing import make_team_command

        return {
            "team": Subcommand(
                lambda recipe: make_team_command(recipe, more=list_requests),
                help="List a team's members, their status and their waiting mail; nothing runs.",
                absent="Chapter {n} has no teams; teammates run from chapter 15 on",
            )
        }


def list_requests(root: Path, team: str) -> None:
    """The team's open requests, after its members: id, type, who asked whom, since when."""
    from chapters.ch16.protocol import REQUEST_TYPE, ProtocolError, RequestLog, RequestStatus

    log = RequestLog(root, team)
    try:
        requests = log.requests()
    except ProtocolError as error:
        raise click.ClickException(str(error)) from None
    for warning in log.warnings:
        click.echo(f"warning: {warning}", err=True)
    open_ones = [r for r in requests if r.status is RequestStatus.PENDING]
    if not open_ones:
        click.echo(f"open requests: none ({len(requests)} in {log.shown})")
        return
    click.echo(f"open requests ({len(open_ones)} of {len(requests)} in {log.shown}):")
    for request in open_ones:
        since = request.opened_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        click.echo(
            f"  {request.id}  {REQUEST_TYPE[request.kind]}  {request.sender} -> "
            f"{request.recipient}  since {since}"
        )

"""Chapter 16's part: a plan that must be approved, and a stop that is asked and answered.

protocols  --protocol-timeout SECONDS. Through chapter 15's seams:
           MAIL_RENDER   decorated: a protocol message reads as a sentence that says how
                         to answer it, not as JSON (chapters/ch16/team_protocols.py render)
           SPAWN_ARGS    decorated: spawn_teammate takes plan_mode_required
           BEFORE_SPAWN  such a teammate is gated before its thread starts
           The lead gets request_shutdown and review_plan, the plan gate (`PlanGate`:
           the run's `Protocols`, first of the authorizers, before the hooks and the
           policy, so an approved plan lifts this gate only) and `EndProtocols` (the
           expiry thread ends with the run). A teammate (a build with chapter 15's
           TEAMMATE) gets submit_plan and shutdown_response, and `LeaveWhenApproved`
           first of its features. `team` lists the open requests too (`list_team`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from chapters.ch12.parts import TASKS
from chapters.ch15.parts import (
    BEFORE_SPAWN,
    MAIL_RENDER,
    RUN_TEAM,
    SPAWN_ARGS,
    TEAMMATE,
    team_tools_kept,
)
from shared.parts import Build, Part, Setup
from shared.recipe import AUTHORIZE, FEATURES, FOLDER, TOOLS
from shared.slots import Key, Phase

if TYPE_CHECKING:
    from chapters.ch15.team_tools import SpawnArgs
    from chapters.ch16.team_protocols import Protocols

PROTOCOLS: Key[Protocols] = Key("the run's protocol requests: plans and shutdowns")
TIMEOUT_DEFAULT = 300.0  # chapters/ch16/team_protocols.py's; here for a fast --help
TIMEOUT_MAX = 86_400.0


class TeamProtocols(Part):
    """Plans approved before a teammate writes; stops asked, answered, and done cleanly."""

    name = "protocols"
    summary = (
        "--protocol-timeout; request_shutdown, review_plan, submit_plan, shutdown_response, "
        "spawn_teammate's plan_mode_required: requests with ids, answers and expiry"
    )
    options = (
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

    def setup(self, setup: Setup) -> None:
        from chapters.ch16.protocol_tools import ProtocolSpawnArgs
        from chapters.ch16.team_protocols import render

        setup.decorate(MAIL_RENDER, lambda _: render)
        setup.decorate(SPAWN_ARGS, lambda _: ProtocolSpawnArgs)
        if setup.demo:
            from chapters.ch15.demo import DEMO_GATE
            from chapters.ch16.demo import demo_gate

            setup.decorate(DEMO_GATE, lambda _: demo_gate())  # alice's three turns

    def contribute(self, build: Build) -> None:
        if build.child:
            seat = build.find(TEAMMATE, None)
            if seat is not None:
                self.teammate(build, seat.name)
            return
        self.lead(build)

    def protocols(self, build: Build) -> Protocols:
        """The run's protocols on its team, made once for the lead and its teammates."""
        from chapters.ch16.protocol import RequestLog
        from chapters.ch16.team_protocols import Protocols

        def made() -> Protocols:
            team = build.get(RUN_TEAM)
            if build.setup.demo:
                from chapters.ch16.demo import demo_ids

                log = RequestLog(build.get(FOLDER), team.name, new_id=demo_ids())
            else:
                log = RequestLog(build.get(FOLDER), team.name)
            timeout = build.setup.option("protocol_timeout")
            return Protocols(team, log, build.setup.get(TASKS), timeout)

        return build.shared(PROTOCOLS, made)

    def lead(self, build: Build) -> None:
        from chapters.ch16.protocol_tools import lead_tools
        from chapters.ch16.team_protocols import EndProtocols

        for tool in lead_tools(lambda: self.protocols(build)):
            build.add(TOOLS, tool, after=["team"])
        gate = build.later(lambda: self.protocols(build))
        build.add(AUTHORIZE, gate, phase=Phase.FIRST, label="PlanGate")
        end = build.later(lambda: EndProtocols(self.protocols(build)))
        build.add(FEATURES, end, phase=Phase.FIRST, label="EndProtocols")

        def plan_first(args: SpawnArgs) -> None:  # before its first call can run
            required = bool(getattr(args, "plan_mode_required", False))
            self.protocols(build).joining(args.name, required)

        build.add(BEFORE_SPAWN, plan_first, label="plan_mode_required")

    def teammate(self, build: Build, name: str) -> None:
        from chapters.ch16.protocol_tools import teammate_tools
        from chapters.ch16.team_protocols import LeaveWhenApproved

        protocols = build.get(PROTOCOLS)
        leave = LeaveWhenApproved(protocols, name)
        build.add(FEATURES, leave, phase=Phase.FIRST, before=["team"], children=True)
        tools = teammate_tools(protocols, name)
        for tool in tools:
            build.add(TOOLS, tool, children=True)
        team_tools_kept(build, *(tool.name for tool in tools))

    def list_team(self, root: Path, team: str) -> None:
        """After chapter 15's members: the team's open requests, and since when."""
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

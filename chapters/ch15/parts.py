"""Chapter 15's part: teammates that run beside the lead and talk through mailboxes.

team  --team NAME, --team-wait SECONDS. The team's name is --team's, else the task
      list's (chapter 12): the team and its task list are one name, so the
      teammates' task tools work on the team's list. Per run, made only when a run
      needs it: the `Team` (chapters/ch15/team.py) on .tutorial/teams/NAME/, with
      the lead's inbox (chapter 13's) as the lead's mail slot.
      The lead gets spawn_teammate and send_message (chapters/ch15/team_tools.py),
      `LeadMail` before chapter 13's DeliverEvents (its mail before each request;
      after an answer, the end rule: wait while a teammate works), `MailCount` after
      it, `EndTeam` (every teammate stopped when the run ends) and a line under the
      spinner (chapters/ch15/view.py). `team` lists a team's members and mail
      (chapters/ch15/listing.py).
      A teammate is a child made by every part again (`child_parts`, with the
      `TEAMMATE` service, so that this part knows the child is one): its agent's
      tools, send_message and the task tools, never spawn_teammate or task; its own
      inbox with chapter 13's DeliverEvents (it never waits for background jobs:
      their ends go to the lead), `TeammateMail` (idle after each answer, stopped at
      a request boundary) and `MailCount`; a console whose lines start with its
      name (chapters/ch15/member_console.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from chapters.ch06.parts import AGENTS
from chapters.ch12.parts import DEFAULT_LIST
from chapters.ch13.parts import INBOX, PROVIDER_PROFILE
from shared.parts import Build, Later, Part, Setup, Subcommand
from shared.recipe import FEATURES, FOLDER, TOOL_FILTERS, TOOLS, VIEWS, child_parts
from shared.slots import Key, Phase, Slot

if TYPE_CHECKING:
    from chapters.ch06.definitions import AgentDefinition
    from chapters.ch15.mailbox import MailMessage
    from chapters.ch15.member_console import LineSink
    from chapters.ch15.team import Seat, Team
    from chapters.ch15.team_tools import SpawnArgs
    from shared.agent import AgentSpec

RUN_TEAM: Key[Team] = Key("the run's team: its teammates and their mail")
TEAMMATE: Key[Seat] = Key("the teammate being made (only a teammate's build has one)")
LINES: Key[LineSink] = Key("where the teammates' tagged lines are written")
MAIL_RENDER: Key[Callable[[MailMessage], str]] = Key("what the model reads of a message")
SPAWN_ARGS: Key[type[SpawnArgs]] = Key("what spawn_teammate takes")
BEFORE_SPAWN = Slot[Callable[["SpawnArgs"], None]](
    "before spawn", "what runs before a teammate starts, given spawn_teammate's arguments"
)
TEAM_WAIT_DEFAULT = 600.0  # chapters/ch15/team.py's DEFAULT_TEAM_WAIT; here for a fast --help
TEAM_WAIT_MAX = 3_600.0


def team_name(setup: Setup) -> str:
    """--team, else the task list's name: one name for the team and its list."""
    return str(setup.option("team") or setup.option("task_list") or DEFAULT_LIST)


class TeamPart(Part):
    """spawn_teammate, send_message, and a run that lasts while its teammates work."""

    name = "team"
    summary = (
        "--team, --team-wait; spawn_teammate, send_message: teammates beside the lead, "
        "talking through mailboxes; `team` lists them"
    )
    options: Sequence[click.Parameter] = (
        click.Option(
            ["--team"],
            default=None,
            metavar="NAME",
            help=(
                "The team, in .tutorial/teams/NAME/ (its task list is .tutorial/tasks/NAME/); "
                "default: the --task-list name."
            ),
        ),
        click.Option(
            ["--team-wait"],
            type=click.FloatRange(min=0, max=TEAM_WAIT_MAX),
            default=TEAM_WAIT_DEFAULT,
            show_default=True,
            metavar="SECONDS",
            help=(
                "When the lead answers while a teammate works, wait this long for a message "
                "from the team and go on (0: do not wait)."
            ),
        ),
    )

    def check(self, setup: Setup) -> None:
        from chapters.ch15.mailbox import team_name_problem

        team, tasks = setup.option("team"), setup.option("task_list")
        if team is None:
            return
        problem = team_name_problem(team)
        if problem:
            raise click.BadParameter(problem, param_hint="--team")
        if tasks not in (DEFAULT_LIST, team):
            raise click.UsageError(
                f"--team {team} and --task-list {tasks} name two lists: a team works on the "
                f"list of its own name. Give one of them (--team {team})"
            )

    def setup(self, setup: Setup) -> None:
        if setup.option("team"):
            setup.options["task_list"] = setup.option("team")  # the team's list is its own
        if setup.demo:
            from chapters.ch15.demo import DEMO_GATE, DemoGate

            setup.provide(DEMO_GATE, DemoGate)  # the order its teammates take their turns in
        setup.provide(MAIL_RENDER, lambda: _envelope)
        setup.provide(SPAWN_ARGS, _spawn_args)
        setup.add_banner("team", lambda: banner(setup))

    def contribute(self, build: Build) -> None:
        seat = build.find(TEAMMATE, None)
        if build.child:
            if seat is not None:
                self.teammate(build, seat)
            return  # a sub-agent (chapter 6) is no member of the team
        self.lead(build)

    def lead(self, build: Build) -> None:
        from chapters.ch15.team import EndTeam, LeadMail, MailCount
        from chapters.ch15.team_tools import make_send_tool
        from chapters.ch15.view import team_view

        made: list[Team] = []

        def team() -> Team:
            if not made:
                made.append(self.make_team(build))
            return made[0]

        build.provide(RUN_TEAM, build.later(team))  # the lead's, its teammates', a later part's

        agents = build.get(AGENTS)
        if not agents.names:
            return  # no agent a teammate could be
        later = Later(
            "spawn_teammate",
            make=lambda agent: self.spawn_tool(build, team(), agent),
            stand_in=lambda: self.spawn_stand_in(build),
        )
        build.add(TOOLS, later, phase=Phase.LAST, label="spawn_teammate")

        def send_tool() -> Any:  # a listing reads its name only: it gets no team
            return make_send_tool(_ListingTeam() if build.listing else team(), "lead")  # type: ignore[arg-type]

        build.add(TOOLS, build.later(send_tool), label="send_message")
        wait = build.setup.option("team_wait")
        lead_mail = build.later(lambda: LeadMail(team(), wait, waiting=self.waiting(build)))
        count = build.later(lambda: MailCount(team(), "lead", team().lead_inbox))
        build.add(FEATURES, lead_mail, before=["background"], label="LeadMail")
        build.add(FEATURES, count, after=["background"], label="MailCount")
        build.add(
            FEATURES,
            EndTeam(lambda: made[0] if made else None),
            phase=Phase.FIRST,
            label="EndTeam",
        )
        build.add(VIEWS, lambda: team_view(made[0] if made else None), label="team_view")

    def make_team(self, build: Build) -> Team:
        """The run's team, on its folder, with the lead's inbox (chapter 13's) as its mail slot."""
        from chapters.ch13.inbox import Inbox
        from chapters.ch15.demo import DEMO_GATE
        from chapters.ch15.team import Team

        setup = build.setup
        gate = setup.get(DEMO_GATE) if setup.demo else None
        team = Team(
            build.get(FOLDER),
            team_name(setup),
            build.shared(INBOX, Inbox),
            build.run_console,
            before_turn=gate.before_turn if gate else None,
            render=setup.get(MAIL_RENDER),
        )
        if gate is not None:
            gate.team = team
        return team

    def waiting(self, build: Build) -> Any:
        from chapters.ch15.demo import DEMO_GATE, counted_waiting
        from chapters.ch15.team import waiting_for_team

        if build.setup.demo:
            return counted_waiting(build.setup.get(DEMO_GATE))
        return waiting_for_team

    def teammate(self, build: Build, seat: Seat) -> None:
        from chapters.ch13.inbox import DeliverEvents
        from chapters.ch15.team import MailCount, TeammateMail
        from chapters.ch15.team_tools import SEND_MESSAGE, make_send_tool

        team = build.get(RUN_TEAM)
        build.add(TOOLS, make_send_tool(team, seat.name), children=True)
        team_tools_kept(build, SEND_MESSAGE)
        mail = TeammateMail(team, seat)
        deliver = DeliverEvents(
            seat.inbox,
            delivery=build.setup.get(PROVIDER_PROFILE).delivery,
            background_wait=0,  # a job's end goes to the lead's inbox, not to this one
        )
        # First, before the budget: a teammate the run stopped sends no request.
        build.add(FEATURES, mail, phase=Phase.FIRST, before=["budget"], children=True)
        build.add(FEATURES, deliver, before=["hooks"], children=True, label="DeliverEvents")
        build.add(
            FEATURES, MailCount(team, seat.name, seat.inbox), after=["background"], children=True
        )

    def spawn_tool(self, build: Build, team: Team, lead: AgentSpec) -> Any:
        from chapters.ch15.team_tools import make_spawn_tool

        def start(args: SpawnArgs, definition: AgentDefinition) -> None:
            self.start_teammate(build, team, lead, args, definition)

        return make_spawn_tool(team, build.get(AGENTS), start, build.setup.get(SPAWN_ARGS))

    def start_teammate(
        self,
        build: Build,
        team: Team,
        lead: AgentSpec,
        args: SpawnArgs,
        definition: AgentDefinition,
    ) -> None:
        """One spawn_teammate call: say who joins, and start it on its thread."""
        for before in build.values(BEFORE_SPAWN):  # refuses by raising; nothing has started
            before(args)
        said = f"team: {args.name} ({definition.name}) joins team {team.name}: "
        lead.console.info(said + short(args.prompt))

        def life(seat: Seat) -> None:
            run_teammate(build, lead, seat, args.prompt, definition)

        team.spawn(args.name, definition.name, life)

    def spawn_stand_in(self, build: Build) -> Any:
        from chapters.ch15.team_tools import make_spawn_tool

        def not_started(args: SpawnArgs, definition: AgentDefinition) -> None:
            raise ValueError("this spawn_teammate tool is not connected to a team")

        listing = _ListingTeam()
        args = build.setup.get(SPAWN_ARGS)
        return make_spawn_tool(listing, build.get(AGENTS), not_started, args)  # type: ignore[arg-type]

    def commands(self) -> Mapping[str, Subcommand]:
        from chapters.ch15.listing import make_team_command

        return {
            "team": Subcommand(
                lambda recipe: make_team_command(recipe, more=team_listings(recipe)),
                help="List a team's members, their status and their waiting mail; nothing runs.",
                absent="Chapter {n} has no teams; teammates run from chapter 15 on",
            )
        }


def team_tools_kept(build: Build, *names: str) -> None:
    """A teammate's team tools survive --tools (chapter 11's filter: checked against the lead's
    tools, it could not name them) and its agent definition's list: they are how it works in
    the team."""

    def kept(chosen: Sequence[str]) -> list[str]:
        return [*chosen, *(name for name in names if name not in chosen)]

    build.get(TEAMMATE).team_tools.update(names)  # kept whatever its definition lists, too

    build.add(TOOL_FILTERS, kept, phase=Phase.LAST, children=True, label="team tools kept")


def team_listings(recipe: Any) -> Callable[[Path, str], None]:
    """What the `team` command prints after the members: each part of the recipe that has a
    `list_team(root, team)` adds its own."""
    more = [part.list_team for part in recipe.parts if hasattr(part, "list_team")]

    def listed(root: Path, team: str) -> None:
        for each in more:
            each(root, team)

    return listed


def _envelope(message: MailMessage) -> str:
    from chapters.ch15.mailbox import envelope

    return envelope(message)


def _spawn_args() -> type[SpawnArgs]:
    from chapters.ch15.team_tools import SpawnArgs

    return SpawnArgs


class _ListingTeam:
    """What the stand-in spawn tool reads of a team, for a listing: nobody is on it."""

    name = "(listing)"

    def member_names(self) -> list[str]:
        return []

    def described(self, sender: str) -> str:
        return ""


def run_teammate(
    build: Build, lead: AgentSpec, seat: Seat, prompt: str, definition: AgentDefinition
) -> None:
    """A teammate's loop, on its thread: a child of the lead's recipe, with its own console."""
    from chapters.ch01.loop import run_agent
    from chapters.ch12.task_tools import TASK_TOOLS
    from chapters.ch15.member_console import LineSink, member_console
    from chapters.ch15.team import identity_line

    team = build.get(RUN_TEAM)
    sink = build.shared(LINES, lambda: LineSink(lead.console))
    console = member_console(lead.console, seat.name, seat.number, sink)
    tools, features = child_parts(build, seat.name, {TEAMMATE: seat}, console)
    # A teammate's own tools (send_message, and any a part gives teammates only: each says so
    # with `team_tools_kept`) and the team's task list come whatever its definition lists:
    # they are how it works in a team.
    always = {*TASK_TOOLS, *seat.team_tools}
    keep = [
        name
        for name in tools.names
        if definition.tools is None or name in definition.tools or name in always
    ]
    spec = lead.child(
        name=seat.name,
        tools=tools.subset(keep),
        system_prompt=f"{identity_line(seat.name, team.name)}\n{teammate_rules(team.name)}\n\n"
        f"{definition.system_prompt}",
        max_turns=min(definition.max_turns, lead.max_turns),
        features=features,
        console=console,
    )
    try:
        run_agent(prompt, spec)
    finally:
        console.err.close()  # a line it had not ended is shown


def teammate_rules(team: str) -> str:
    """What a teammate is told about the team, after its identity line."""
    return (
        f"The lead of team {team!r} started you and gave you your assignment. When you answer, "
        "your answer is sent to the lead as a message from you, and you wait until someone "
        "writes to you; their messages reach you as <teammate-message> elements. Write to the "
        "lead or to another teammate with send_message only when they need it."
    )


def short(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def banner(setup: Setup) -> str:
    """`team: default (.tutorial/teams/default/) · waits up to 600s for teammates`"""
    wait = setup.option("team_wait")
    name = team_name(setup)
    waits = f"waits up to {wait:g}s for teammates" if wait else "does not wait for teammates"
    return f"team: {name} (.tutorial/teams/{name}/) · {waits}"

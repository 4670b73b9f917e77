"""spawn_teammate and send_message: how the lead starts a colleague, and how anyone writes.

    spawn_teammate {name, prompt, agent?}      the lead's: a teammate starts at once, on
                                               its own thread, with chapter 6's agent
                                               definition `agent` (default general)
    send_message   {to, message, summary?}     everyone's: `to` is a member, `lead` or
                                               `*` (everyone but the sender)

Both change only the team (`SideEffect.STATE`): nobody is asked. What a teammate
then does is judged call by call by the same pipeline as the lead's own calls.
Everything that can be refused is refused in prepare, before anything is sent or
started: a name that is not a name or is taken, an agent that does not exist, a
recipient that is not on the team (the result lists who is).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch06.definitions import DEFAULT_AGENT, AgentCatalog, AgentDefinition
from chapters.ch15.mailbox import (
    MAX_SUMMARY,
    MAX_TEXT,
    MailboxError,
    MailMessage,
    member_name_problem,
)
from chapters.ch15.team import Team
from chapters.ch15.team_config import TeamError
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, Status, ToolResult

SPAWN_TEAMMATE = "spawn_teammate"
SEND_MESSAGE = "send_message"

Start = Callable[["SpawnArgs", AgentDefinition], None]  # starts the teammate the call asks for


class SpawnArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(
        description="The teammate's name: 1 to 32 of a-z 0-9 -, unique on the team (alice)."
    )
    prompt: str = Field(
        min_length=1,
        description=(
            "Its assignment. It sees nothing of this conversation: say what to do and what to "
            "report. Its answer comes back to you as a message from it."
        ),
    )
    agent: str = Field(default=DEFAULT_AGENT, description="Which agent it is (listed above).")


class SendArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    to: str = Field(description="A member's name, lead, or * for everyone but you.")
    message: str = Field(description=f"What to say (at most {MAX_TEXT:,} characters).")
    summary: str | None = Field(
        default=None, description=f"A few words the recipient sees first (at most {MAX_SUMMARY})."
    )


def make_spawn_tool(
    team: Team, agents: AgentCatalog, start: Start, args_model: type[SpawnArgs] | None = None
) -> PydanticTool:
    """`spawn_teammate` on `team`; `start` runs the new teammate's loop (it returns at once).
    `args_model`: `SpawnArgs` or a model that extends it with what else a spawn may say."""

    def check(args: SpawnArgs) -> ToolResult | str:
        problem = member_name_problem(args.name)
        if problem:
            return _invalid(f"{problem}; nothing started.")
        if agents.get(args.agent) is None:
            return _invalid(
                f"there is no agent named {args.agent!r}; nothing started. Available agents: "
                f"{', '.join(agents.names)}."
            )
        if args.name in team.member_names():
            return _invalid(
                f"{args.name} is on the team already and still running; choose another name, "
                f"or send_message to it. {team.described('lead')}"
            )
        return args.prompt

    def run(args: SpawnArgs) -> ToolResult:
        checked = check(args)
        if isinstance(checked, ToolResult):
            return checked
        definition = agents.get(args.agent)
        assert definition is not None
        try:
            start(args, definition)
        except (TeamError, ValueError) as error:
            return ToolResult.failed("tool_error", f"{error}; nothing started.", Status.ERROR)
        return ToolResult.success(
            f"spawned {args.name} ({definition.name}) in team {team.name}: it works on its own "
            "from now, beside you. Its answer comes to you as a message from it; write to it "
            f"with send_message. {team.described('lead')}"
        )

    return PydanticTool(
        name=SPAWN_TEAMMATE,
        description=(
            "Start a teammate: another agent that works at the same time as you, in a context "
            "of its own (it sees only your prompt), until the run ends. When it answers, the "
            "answer comes to you as a message, and it waits for the next message from you "
            "(send_message). Teammates cannot spawn teammates. Agents:\n" + agents.listed()
        ),
        args_model=args_model or SpawnArgs,
        side_effect=SideEffect.STATE,
        run=run,
        preview=check,
        key=KeyArgument("name", KeyKind.TEXT),
    )


def make_send_tool(team: Team, sender: str) -> PydanticTool:
    """`send_message` from `sender` (the lead's name, or a teammate's)."""

    def check(args: SendArgs) -> ToolResult | str:
        named = team.recipients(sender, args.to)
        if isinstance(named, str):
            return _invalid(f"nothing was sent: {named}")
        try:
            MailMessage.new(sender, args.message, args.summary)
        except ValueError as error:
            return _invalid(f"nothing was sent: {error}")
        return args.message

    def run(args: SendArgs) -> ToolResult:
        checked = check(args)
        if isinstance(checked, ToolResult):
            return checked
        named = team.recipients(sender, args.to)
        assert isinstance(named, list)
        try:
            team.send(sender, named, args.message, args.summary)
        except MailboxError as error:
            return ToolResult.failed("tool_error", str(error), Status.ERROR)
        return ToolResult.success(f"sent to {', '.join(named)}")

    return PydanticTool(
        name=SEND_MESSAGE,
        description=(
            "Send a message to a member of your team, to the lead (lead), or to everyone but "
            "you (*). It reaches them before their next request; one who is idle wakes up. "
            "Write only what they need: every message costs them a turn."
        ),
        args_model=SendArgs,
        side_effect=SideEffect.STATE,
        run=run,
        preview=check,
        key=KeyArgument("to", KeyKind.TEXT),
    )


def _invalid(detail: str) -> ToolResult:
    return ToolResult.failed("invalid_arguments", detail, Status.INVALID)

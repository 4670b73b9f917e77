"""The protocols' tools, and spawn_teammate's one new argument.

    request_shutdown  {teammate, reason?}               the lead's: ask a teammate to stop
    review_plan       {request_id, approve, feedback?}  the lead's: answer a plan
    submit_plan       {plan}                            a teammate's: ask for a plan's approval
    shutdown_response {request_id, approve, reason?}    a teammate's: answer a stop
    spawn_teammate    ... plan_mode_required?           the teammate writes nothing before
                                                        its plan is approved

Like send_message, they change only the team (`SideEffect.STATE`): nobody is
asked. Every refusal (an unknown teammate or request, an answer that does not
fit its request) is `invalid_arguments` and changes nothing; the request log
records the ignored answer all the same (chapters/ch16/protocol.py).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from chapters.ch15.team_tools import SpawnArgs
from chapters.ch16.protocol import MAX_PLAN, MAX_REASON
from chapters.ch16.team_protocols import Protocols
from shared.tools import KeyArgument, KeyKind, PydanticTool, SideEffect, ToolResult

REQUEST_SHUTDOWN = "request_shutdown"
REVIEW_PLAN = "review_plan"
SUBMIT_PLAN = "submit_plan"
SHUTDOWN_RESPONSE = "shutdown_response"
LEAD_TOOLS = (REQUEST_SHUTDOWN, REVIEW_PLAN)
TEAMMATE_TOOLS = (SUBMIT_PLAN, SHUTDOWN_RESPONSE)
_ARGS = ConfigDict(extra="forbid", str_strip_whitespace=True)
_ID = "The request's id, as the message about it says (8 hexadecimal digits)."


class ProtocolSpawnArgs(SpawnArgs):
    plan_mode_required: bool = Field(
        default=False,
        description=(
            "True: the teammate may read, but writes and runs nothing until you approve its "
            "plan (it sends one with submit_plan; you answer with review_plan)."
        ),
    )


class ShutdownArgs(BaseModel):
    model_config = _ARGS

    teammate: str = Field(description="The teammate to stop.")
    reason: str = Field(
        default="the lead asks you to stop",
        max_length=MAX_REASON,
        description="Why, in a sentence.",
    )


class ReviewArgs(BaseModel):
    model_config = _ARGS

    request_id: str = Field(description=_ID)
    approve: bool = Field(description="True: the teammate may go ahead with the plan.")
    feedback: str | None = Field(
        default=None, max_length=MAX_REASON, description="What to change, or keep in mind."
    )


class PlanArgs(BaseModel):
    model_config = _ARGS

    plan: str = Field(
        min_length=1,
        max_length=MAX_PLAN,
        description="What you will change and how, step by step, before you change anything.",
    )


class AnswerArgs(BaseModel):
    model_config = _ARGS

    request_id: str = Field(description=_ID)
    approve: bool = Field(description="True: stop now. False: go on, and say why.")
    reason: str | None = Field(default=None, max_length=MAX_REASON, description="Why.")


def lead_tools(protocols: Callable[[], Protocols]) -> list[PydanticTool]:
    """request_shutdown and review_plan, from the lead; `protocols` is asked for at the first
    call (a listing of the tools makes none)."""

    def shutdown(args: ShutdownArgs) -> ToolResult:
        return protocols().request_shutdown(args.teammate, args.reason)

    def review(args: ReviewArgs) -> ToolResult:
        return protocols().review_plan(args.request_id, args.approve, args.feedback)

    return [
        PydanticTool(
            name=REQUEST_SHUTDOWN,
            description=(
                "Ask a teammate to stop. It answers with shutdown_response: approved, it stops "
                "before its next request and its unfinished tasks go back to the list; "
                "rejected, you read its reason. Unanswered, the request expires."
            ),
            args_model=ShutdownArgs,
            side_effect=SideEffect.STATE,
            run=shutdown,
            key=KeyArgument("teammate", KeyKind.TEXT),
        ),
        PydanticTool(
            name=REVIEW_PLAN,
            description=(
                "Answer a teammate's plan_approval_request. Approved, it may write and run, "
                "still under the permission rules; rejected, it reads your feedback and may "
                "submit a new plan."
            ),
            args_model=ReviewArgs,
            side_effect=SideEffect.STATE,
            run=review,
            key=KeyArgument("request_id", KeyKind.TEXT),
        ),
    ]


def teammate_tools(protocols: Protocols, sender: str) -> list[PydanticTool]:
    """submit_plan and shutdown_response, from teammate `sender`."""

    def submit(args: PlanArgs) -> ToolResult:
        return protocols.submit_plan(sender, args.plan)

    def answer(args: AnswerArgs) -> ToolResult:
        return protocols.shutdown_response(sender, args.request_id, args.approve, args.reason)

    return [
        PydanticTool(
            name=SUBMIT_PLAN,
            description=(
                "Send the lead your plan for approval (in plan mode you write and run nothing "
                "before it approves). Its answer comes as a message."
            ),
            args_model=PlanArgs,
            side_effect=SideEffect.STATE,
            run=submit,
        ),
        PydanticTool(
            name=SHUTDOWN_RESPONSE,
            description=(
                "Answer the lead's shutdown_request: approve true to stop (before your next "
                "request), or false with a reason to go on."
            ),
            args_model=AnswerArgs,
            side_effect=SideEffect.STATE,
            run=answer,
            key=KeyArgument("request_id", KeyKind.TEXT),
        ),
    ]

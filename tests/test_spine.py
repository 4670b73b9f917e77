"""The spine every chapter stands on: one loop with named seams, an agent spec, a call
pipeline, tools by protocol, a model boundary ready for recovery, a past that never names
the future, and an honest `tutorial diff`. One section per property (docs/architecture.md).
"""

from __future__ import annotations

import ast
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, openai_error
from chapters.ch01.tests.harness import (
    FakeRunner,
    ScriptedApprover,
    plain_console,
    printed,
    result_of,
)
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.policy import Policy
from chapters.ch03.settings import load_policy
from chapters.ch03.tests.support import read_audit
from chapters.testing import agent_of, recipe_of
from shared.agent import AgentSpec, Feature, KeepGoing, Run
from shared.calls import CallPipeline, PendingCall
from shared.completion import ModelReply
from shared.config import Settings
from shared.errors import AgentLimitError, ProviderError, ProviderErrorKind
from shared.messages import Message, UserMessage
from shared.openai_client import OpenAIChatModel, retry_after_seconds
from shared.scripted import ScriptedModel, response, tool_call
from shared.tools import (
    Arguments,
    KeyArgument,
    KeyKind,
    SideEffect,
    Status,
    ToolRegistry,
    ToolResult,
)
from tutorial.catalog import CHAPTERS, CHAPTERS_ROOT, find_chapter
from tutorial.diff import DeclarationError, chapter_diff, chapter_stat, declared_base

REPOSITORY = CHAPTERS_ROOT.parent


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return tool_call(call_id, name, json.dumps(arguments))


# --- 1. one loop, with named seams ------------------------------------------------------------


def python_files(*folders: str) -> list[Path]:
    return sorted(
        path
        for folder in folders
        for path in (REPOSITORY / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def test_the_one_loop_is_chapter_1s_and_nothing_else_asks_the_model() -> None:
    """Only the loop sends a run's requests: no chapter restates it. Two requests are sent
    beside them, each through the same `ask_model`, not around it: chapter 8's summary of
    an overfull context, and chapter 11's request for the rest of a reply the loop is on."""
    asking = [
        path.relative_to(REPOSITORY).as_posix()
        for path in python_files("chapters", "shared")
        if "/tests/" not in path.as_posix() and "ask_model(" in path.read_text(encoding="utf-8")
    ]
    assert asking == [
        "chapters/ch01/loop.py",
        "chapters/ch08/compaction.py",
        "chapters/ch11/continuation.py",
        "shared/completion.py",
    ]


def test_the_loop_is_five_numbered_steps_on_one_screen() -> None:
    source = (CHAPTERS_ROOT / "ch01" / "loop.py").read_text(encoding="utf-8")
    function = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == "run_agent"
    )
    lines = source.splitlines()[function.lineno - 1 : function.end_lineno]
    assert len(lines) <= 40
    for step in range(1, 6):
        assert any(f"# {step}." in line for line in lines), f"step {step} is not marked"


@dataclass
class Recorder(Feature):
    """Writes down every moment the loop calls, and can refuse one stop and add to prompts."""

    said: list[str] = field(default_factory=list)
    refuse_first_stop: bool = False
    added: str | None = None

    def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
        self.said.append(f"on_prompt {prompt}")
        return [UserMessage(content=self.added)] if self.added else []

    def on_message(self, run: Run, message: Message) -> None:
        self.said.append(f"on_message {message.role}")

    def before_request(self, run: Run) -> None:
        self.said.append(f"before_request {run.turn}")

    def after_reply(self, run: Run, reply: ModelReply) -> None:
        self.said.append(f"after_reply {run.turn}")

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        self.said.append(f"on_stop {answer}")
        if self.refuse_first_stop:
            self.refuse_first_stop = False
            return KeepGoing(UserMessage(content="not yet"))
        return answer + " (checked)"

    def on_end(self, run: Run, error: BaseException | None) -> None:
        self.said.append(f"on_end {type(error).__name__ if error else None}")


def spec(steps: Sequence[Any], *features: Feature, max_turns: int = 10) -> AgentSpec:
    """Chapter 1's agent with a scripted model, a yes-saying human and a fake shell."""
    agent = agent_of(
        1,
        model=ScriptedModel(steps),
        console=plain_console(),
        approver=ScriptedApprover.always(True),
        cwd=Path.cwd(),
        runner=FakeRunner(),
    )
    return replace(agent, features=features, max_turns=max_turns)


def test_a_feature_hears_every_moment_of_the_loop_in_order() -> None:
    recorder = Recorder(added="context")
    steps = [response(None, [call("c1", "shell", command="ls")]), response("done")]
    assert run_agent("go", spec(steps, recorder)) == "done (checked)"
    assert recorder.said == [
        "on_message system",
        "on_prompt go",
        "on_message user",
        "on_message user",  # what on_prompt added, right after the prompt
        "before_request 1",
        "on_message assistant",
        "after_reply 1",
        "on_message tool",
        "before_request 2",
        "on_message assistant",
        "after_reply 2",
        "on_stop done",
        "on_end None",
    ]


def test_a_refused_stop_sends_the_model_back_with_the_features_message() -> None:
    recorder = Recorder(refuse_first_stop=True)
    agent = spec([response("first"), response("second")], recorder)
    history: list[Message] = []
    assert run_agent("go", agent, history=history) == "second (checked)"
    assert [m.role for m in history] == ["system", "user", "assistant", "user", "assistant"]
    assert history[3] == UserMessage(content="not yet")
    sent = agent.model.requests[1]["messages"]  # type: ignore[attr-defined]
    assert sent[-1] == {"role": "user", "content": "not yet"}


def test_features_hear_how_a_run_ended_when_it_failed() -> None:
    recorder = Recorder()
    steps = [response(None, [call("c1", "shell", command="ls")])]
    with pytest.raises(AgentLimitError):
        run_agent("go", spec(steps, recorder, max_turns=1))
    assert recorder.said[-1] == "on_end AgentLimitError"


def test_a_feature_that_refuses_the_prompt_stops_the_run_before_any_request() -> None:
    class Refusing(Feature):
        def on_prompt(self, run: Run, prompt: str) -> Sequence[Message]:
            raise AgentLimitError(0, "prompts", "refused on purpose")

    agent = spec([response("never")], Refusing())
    with pytest.raises(AgentLimitError, match="refused on purpose"):
        run_agent("go", agent)
    assert agent.model.requests == []  # type: ignore[attr-defined]


def test_the_finish_reason_step_can_be_replaced() -> None:
    """A later chapter can continue after `length` instead of stopping; the loop does not care."""
    seen: list[str | None] = []

    def accept_everything(run: Run, reply: ModelReply) -> ModelReply:
        seen.append(reply.finish_reason)
        return reply

    agent = replace(
        spec([response("cut off", finish_reason="length")]), check_reply=accept_everything
    )
    assert run_agent("go", agent) == "cut off"
    assert seen == ["length"]


def test_a_history_a_feature_rewrote_is_what_the_next_request_sends() -> None:
    """Rewriting goes through `Run.replace_history`; the contract checker, which read the
    old messages, must notice the change and send the new ones, not what it cached."""
    from shared.messages import ToolMessage

    class Shorten(Feature):
        def before_request(self, run: Run) -> None:
            if run.turn == 4:  # c1's result is neither the first nor the last message checked
                run.replace_history(
                    [
                        ToolMessage(tool_call_id=m.tool_call_id, content="[stub]")
                        if isinstance(m, ToolMessage) and m.tool_call_id == "c1"
                        else m
                        for m in run.history
                    ]
                )

    steps = [
        response(None, [call("c1", "shell", command="ls")]),
        response(None, [call("c2", "shell", command="ls")]),
        response(None, [call("c3", "shell", command="ls")]),
        response("done"),
    ]
    agent = spec(steps, Shorten())
    history: list[Message] = []
    assert run_agent("go", agent, history=history) == "done"
    requests = agent.model.requests  # type: ignore[attr-defined]
    assert requests[2]["messages"][3]["content"].startswith("ok: the command `ls` ran")
    assert requests[3]["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "[stub]"}
    assert history[3].content == "[stub]"  # the caller's list is the one rewritten


# --- 2. an agent spec that makes children --------------------------------------------------------


@pytest.fixture
def gated(tmp_path: Path) -> AgentSpec:
    """Chapter 3's agent in tmp_path with `shell(rm:*)` denied and no human to ask."""
    return agent_of(
        3,
        model=ScriptedModel([]),
        console=plain_console(),
        asker=ScriptedAsker([]),
        workspace=Workspace(tmp_path),
        home=tmp_path / "home",
        deny=("shell(rm:*)",),
        audit=AuditLog(tmp_path / "audit.jsonl"),
        runner=FakeRunner(),
    )


def test_a_child_sees_only_its_tools_its_prompt_and_its_own_history(gated: AgentSpec) -> None:
    child = gated.child(
        name="explore",
        tools=gated.tools.subset(["read_file", "grep"]),
        system_prompt="find things",
        max_turns=3,
    )
    model = ScriptedModel([response("found it")])
    assert run_agent("where is X?", replace(child, model=model)) == "found it"
    (request,) = model.requests
    assert [t["function"]["name"] for t in request["tools"]] == ["read_file", "grep"]
    assert request["messages"] == [
        {"role": "system", "content": "find things"},
        {"role": "user", "content": "where is X?"},
    ]
    assert child.max_turns == 3 and child.name == "explore"
    assert child.calls is gated.calls  # the same pipeline: the same policy and the same human


def test_a_child_is_denied_what_the_parent_is_denied(gated: AgentSpec, tmp_path: Path) -> None:
    child = gated.child(
        name="helper", tools=gated.tools.subset(["shell"]), system_prompt="help", max_turns=3
    )
    model = ScriptedModel(
        [response(None, [call("c1", "shell", command="rm -rf x")]), response("ok")]
    )
    history: list[Message] = []
    run_agent("clean up", replace(child, model=model), history=history)
    assert result_of(history, "c1").startswith("denied: shell(rm -rf x) is not allowed")
    assert [r["decision"] for r in read_audit(tmp_path / "audit.jsonl")] == ["deny"]


def test_a_child_without_a_terminal_is_denied_side_effects(tmp_path: Path) -> None:
    parent = agent_of(
        1,
        model=ScriptedModel([]),
        console=plain_console(),
        approver=ScriptedApprover.always(False),  # the human (or no terminal) says no
        cwd=tmp_path,
        runner=(runner := FakeRunner()),
    )
    child = parent.child(name="c", tools=parent.tools, system_prompt="p", max_turns=2)
    model = ScriptedModel([response(None, [call("c1", "shell", command="ls")]), response("ok")])
    run_agent("go", replace(child, model=model))
    assert runner.commands == []


def test_no_chapter_builds_its_run_through_another_chapters_command_line() -> None:
    """A chapter's command is its own recipe's: `python -m chapters.chNN` starts
    chapters.chNN.agent, and no chapter reaches into another's command (`__main__`, or a
    `cli` module); what it keeps of an earlier chapter it keeps through that recipe."""
    for path in python_files("chapters"):
        if "tests" in path.relative_to(CHAPTERS_ROOT).parts or path.parent == CHAPTERS_ROOT:
            continue
        own = path.relative_to(CHAPTERS_ROOT).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                match = re.fullmatch(r"chapters\.(ch\d\d)\.(?:cli|__main__)", node.module)
                assert match is None or match[1] == own, f"{path} imports {node.module}"
    for chapter in (c for c in CHAPTERS if c.ready):
        tree = ast.parse((chapter.folder / "__main__.py").read_text(encoding="utf-8"))
        started = [
            node.args[0].value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and ast.unparse(node.func) == "start"
            and isinstance(node.args[0], ast.Constant)
        ]
        assert started == [f"chapters.{chapter.folder.name}.agent"], chapter.number


def _calls(path: Path) -> set[str]:
    """The names of what `path`'s code calls (`f(...)`: "f"; `x.f(...)`: "f")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


def test_each_ready_chapter_has_one_composition_module() -> None:
    """A chapter's composition is its `RECIPE` in agent.py, and only there: chapter 1's a
    `Recipe` of its own, each later one the previous chapter's, extended. Neither agent.py
    nor parts.py restates a composition: no `AgentSpec(...)`, no `build_agent(...)` (the
    recipe's agent is built in shared/recipe.py)."""
    for chapter in (c for c in CHAPTERS if c.ready):
        number, agent_py = chapter.number, chapter.folder / "agent.py"
        tree = ast.parse(agent_py.read_text(encoding="utf-8"))
        [made] = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["RECIPE"]
        ]
        recipe = recipe_of(number)
        assert recipe.chapter == number
        if number == 1:
            assert isinstance(made, ast.Call) and ast.unparse(made.func) == "Recipe"
            assert recipe.base is None
        else:
            previous = {
                alias.asname or alias.name
                for node in tree.body
                if isinstance(node, ast.ImportFrom)
                and node.module == f"chapters.ch{number - 1:02d}.agent"
                for alias in node.names
                if alias.name == "RECIPE"
            }
            assert isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute)
            assert made.func.attr == "extend" and ast.unparse(made.func.value) in previous
            assert recipe.base is recipe_of(number - 1), number
        for path in (agent_py, chapter.folder / "parts.py"):
            assert not _calls(path) & {"AgentSpec", "build_agent"}, path
    others = [
        path
        for path in python_files("chapters")
        if "tests" not in path.parts and path.name != "agent.py"
    ]
    for path in others:
        assert "RECIPE =" not in path.read_text(encoding="utf-8"), path


# --- 3. a call pipeline in named stages ----------------------------------------------------


@dataclass
class Judge:
    """An authorizer and finisher that writes down what it saw."""

    name: str
    log: list[str]
    refuse: set[str] = field(default_factory=set)

    def authorize(self, pending: PendingCall) -> ToolResult | None:
        self.log.append(f"{self.name} authorize {pending.call.id}")
        if pending.call.id in self.refuse:
            return ToolResult.denied(f"{self.name} said no")
        return None

    def finish(self, pending: PendingCall, result: ToolResult, ran: bool) -> ToolResult:
        self.log.append(f"{self.name} finish {pending.call.id} ran={ran}")
        pending.notes.append(f"[{self.name}]")
        return result


def test_each_call_goes_prepare_authorize_execute_finish_and_gets_one_result_in_order() -> None:
    log: list[str] = []
    first, second = Judge("first", log, refuse={"c2"}), Judge("second", log)
    runner = FakeRunner()
    agent = spec([])
    pipeline = CallPipeline(authorize=[first, second], finish=[first, second])
    steps = [
        response(
            None,
            [
                call("c1", "shell", command="echo one"),
                call("c2", "shell", command="echo two"),
                call("c3", "nope"),
                call("c4", "shell", command="echo four"),
            ],
        ),
        response("done"),
    ]
    agent = replace(
        agent_of(
            1,
            model=ScriptedModel(steps),
            console=plain_console(),
            approver=ScriptedApprover([]),
            cwd=Path.cwd(),
            runner=runner,
        ),
        calls=pipeline,
    )
    history: list[Message] = []
    run_agent("go", agent, history=history)
    assert log == [
        "first authorize c1",
        "second authorize c1",
        "first finish c1 ran=True",
        "second finish c1 ran=True",
        "first authorize c2",  # the first refusal decides: the second judge is not asked
        "first finish c2 ran=False",
        "second finish c2 ran=False",
        # c3 failed in prepare: no stage saw it
        "first authorize c4",
        "second authorize c4",
        "first finish c4 ran=True",
        "second finish c4 ran=True",
    ]
    assert runner.commands == ["echo one", "echo four"]
    tool_ids = [m.tool_call_id for m in history if m.role == "tool"]
    assert tool_ids == ["c1", "c2", "c3", "c4"]
    assert result_of(history, "c2") == "denied: first said no\n[first]\n[second]"
    assert result_of(history, "c3").startswith("unknown_tool:")


def test_an_authorizer_that_breaks_denies_the_call_and_the_run_goes_on() -> None:
    class Broken:
        def authorize(self, pending: PendingCall) -> ToolResult | None:
            raise RuntimeError("policy file vanished")

    runner = FakeRunner()
    steps = [response(None, [call("c1", "shell", command="ls")]), response("done")]
    agent = replace(
        agent_of(
            1,
            model=ScriptedModel(steps),
            console=plain_console(),
            approver=ScriptedApprover.always(True),
            cwd=Path.cwd(),
            runner=runner,
        ),
        calls=CallPipeline(authorize=[Broken()]),
    )
    history: list[Message] = []
    assert run_agent("go", agent, history=history) == "done"
    assert runner.commands == []
    assert result_of(history, "c1") == (
        "denied: the check Broken failed (RuntimeError: policy file vanished), "
        "so the call did not run."
    )


# --- 4. tools by protocol ----------------------------------------------------------------------


TICKET_SCHEMA = {
    "type": "object",
    "properties": {
        "project": {"type": "string", "minLength": 1},
        "title": {"type": "string"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 3},
    },
    "required": ["project", "title"],
    "additionalProperties": False,
}

TICKET_KEY = KeyArgument("project", KeyKind.TEXT)


@dataclass(frozen=True)
class TicketTool:
    """A tool written to the `Tool` protocol alone, with a JSON Schema dict and its own
    check of the arguments, as a tool another program offers would be."""

    filed: list[Mapping[str, Any]]
    name: str = "file_ticket"
    description: str = "File a ticket in a project."
    side_effect: SideEffect = SideEffect.WRITE
    key: KeyArgument | None = TICKET_KEY
    concurrency_safe: bool = False
    parameters: Mapping[str, Any] = field(default_factory=lambda: TICKET_SCHEMA)

    def validate(self, raw: Mapping[str, Any]) -> Arguments | str:
        properties = self.parameters["properties"]
        problems = [f"{name}: extra field not permitted" for name in raw if name not in properties]
        problems += [f"{name}: field required" for name in self.parameters["required"]
                     if name not in raw]  # fmt: skip
        if raw.get("priority", 1) > properties["priority"]["maximum"]:
            problems.append("priority: must be at most 3")
        if problems:
            return "Problems: " + "; ".join(problems) + "."
        return Arguments(dict(raw), dict(raw))

    def preview_call(self, arguments: Arguments) -> str | ToolResult | None:
        return None

    def invoke(self, arguments: Arguments) -> ToolResult:
        self.filed.append(arguments.value)
        ticket = arguments.value
        return ToolResult.success(f"ok: filed {ticket['title']!r} in {ticket['project']}")


def test_a_tool_known_only_by_the_protocol_goes_through_prepare_policy_approval_and_execute(
    tmp_path: Path,
) -> None:
    filed: list[Mapping[str, Any]] = []
    tools = ToolRegistry([TicketTool(filed)])
    workspace = Workspace(tmp_path)
    policy = load_policy(
        workspace,
        tmp_path / "home",
        known_tools=tools,
        allow=["file_ticket(docs-site)"],
        deny=["file_ticket(prod)"],
    )
    asker = ScriptedAsker(["y"])
    from chapters.ch03.gate import PermissionGate

    gate = PermissionGate(policy, asker, AuditLog(tmp_path / "audit.jsonl"), plain_console())
    steps = [
        response(
            None,
            [
                call("c1", "file_ticket", project="docs-site", title="typo"),  # allowed by rule
                call("c2", "file_ticket", project="prod", title="outage"),  # denied by rule
                call("c3", "file_ticket", project="web", title="bug", priority=2),  # asks: yes
                call("c4", "file_ticket", project="web", title="x", priority=9),  # invalid
                call("c5", "file_ticket", project="web", title="x", color="red"),  # invalid
            ],
        ),
        response("done"),
    ]
    agent = AgentSpec(
        model=ScriptedModel(steps),
        tools=tools,
        calls=CallPipeline(authorize=[gate], finish=[gate]),
        console=plain_console(),
        system_prompt="file tickets",
    )
    history: list[Message] = []
    run_agent("go", agent, history=history)
    assert [a["title"] for a in filed] == ["typo", "bug"], [
        m.content for m in history if m.role == "tool"
    ]
    assert result_of(history, "c2").startswith("denied: file_ticket(prod) is not allowed")
    assert [r.arguments["project"] for r in asker.requests] == ["web"]
    assert "priority: must be at most 3" in result_of(history, "c4")
    assert "color: extra field not permitted" in result_of(history, "c5")
    assert agent.model.requests[0]["tools"][0]["function"]["parameters"] == TICKET_SCHEMA  # type: ignore[attr-defined]


def test_the_result_status_is_a_closed_set_and_the_keyword_is_the_finer_reason() -> None:
    assert ToolResult.failed("not_read", "read it first").status is Status.FAILED
    assert ToolResult.failed("not_read", "read it first").keyword == "not_read"
    assert ToolResult.denied("no").status is Status.DENIED
    assert ToolResult.success("ok: done").keyword == "ok"
    with pytest.raises(ValueError):
        ToolResult("not_read", "a keyword is not a status")  # type: ignore[arg-type]


def test_a_registry_gives_a_subset_of_its_tools() -> None:
    ticket = TicketTool([])
    tools = ToolRegistry([ticket, replace(ticket, name="file_bug")])
    assert tools.names == ("file_ticket", "file_bug")
    assert tools.subset(["file_bug"]).names == ("file_bug",)
    with pytest.raises(KeyError):
        tools.subset(["nope"])
    with pytest.raises(ValueError, match="already registered"):
        tools.register(ticket)
    schemas = [s["function"]["name"] for s in tools.snapshot().schemas()]
    assert schemas == ["file_ticket", "file_bug"]


# --- 5. a model boundary ready for streaming and recovery ------------------------------------


def real_model(base_url: str) -> OpenAIChatModel:
    settings = Settings.model_validate(
        {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}
    )
    return OpenAIChatModel(settings, timeout=10.0)


def one_request(status: int, headers: Mapping[str, str], body: Any = None) -> ProviderError:
    body = body if body is not None else openai_error("slow down")
    agent = spec([])
    with ChatServer([(status, body, headers)]) as server, pytest.raises(ProviderError) as caught:
        run_agent("hi", replace(agent, model=real_model(server.base_url)))
    return caught.value


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, ProviderErrorKind.AUTHENTICATION),
        (403, ProviderErrorKind.AUTHENTICATION),
        (404, ProviderErrorKind.NOT_FOUND),
        (429, ProviderErrorKind.RATE_LIMITED),
        (500, ProviderErrorKind.SERVER),
        (503, ProviderErrorKind.SERVER),
        (400, ProviderErrorKind.BAD_REQUEST),
    ],
)
def test_a_provider_error_says_what_kind_it_is(status: int, kind: ProviderErrorKind) -> None:
    error = one_request(status, {})
    assert (error.kind, error.status) == (kind, status)
    assert error.body is not None and "slow down" in error.body


def test_retry_after_ms_wins_over_retry_after_and_both_are_read_over_the_wire() -> None:
    error = one_request(429, {"retry-after-ms": "1500", "retry-after": "9"})
    assert error.retry_after == 1.5
    assert one_request(503, {"Retry-After": "7"}).retry_after == 7.0
    assert one_request(429, {}).retry_after is None


def test_retry_after_may_be_an_http_date() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"Retry-After": later}, now=now.timestamp()) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "-3"}) is None  # no wait: the caller backs off


def test_a_connection_failure_is_its_own_kind() -> None:
    agent = replace(spec([]), model=real_model("http://127.0.0.1:9/v1"))
    with pytest.raises(ProviderError) as caught:
        run_agent("hi", agent)
    assert caught.value.kind is ProviderErrorKind.CONNECTION


def test_trace_shows_the_status_and_body_of_a_failed_response() -> None:
    console = plain_console()
    console.tracing = True
    with ChatServer([(502, "<html>bad gateway</html>")]) as server:
        agent = replace(spec([]), model=real_model(server.base_url), console=console)
        with pytest.raises(ProviderError):
            run_agent("hi", agent)
    text = printed(console)
    assert "--- request 1 ---" in text
    assert "--- response 1 (failed: HTTP 502) ---\n<html>bad gateway</html>" in text


@dataclass
class Watcher:
    """An exchange observer that only writes down what it was told."""

    seen: list[str] = field(default_factory=list)

    def request_sent(self, title: str, request: Mapping[str, Any]) -> None:
        self.seen.append(f"sent {title} with {len(request['messages'])} messages")

    def waiting(self, what: str) -> Any:
        from contextlib import nullcontext

        self.seen.append("waiting")
        return nullcontext()

    def response_received(self, title: str, body: Mapping[str, Any]) -> None:
        self.seen.append(f"received {title}")

    def response_failed(self, title: str, error: ProviderError) -> None:
        self.seen.append(f"failed {title}")

    def said_while_calling(self, text: str) -> None:
        self.seen.append(f"said {text}")


def test_the_spinner_and_the_trace_only_observe_the_exchange() -> None:
    from shared.completion import ask_model

    watcher = Watcher()
    model = ScriptedModel([response("thinking", [call("c1", "shell", command="ls")])])
    ask_model(model, [UserMessage(content="hi")], ToolRegistry().snapshot(), watcher, 1)
    assert watcher.seen == [
        "sent request 1 with 1 messages",
        "waiting",
        "received response 1",
        "said thinking",
    ]


# --- 6. the past never names the future --------------------------------------------------------

LATER = re.compile(r"(?:[Cc]hapter\s+|chapters\.ch|\bch)0?(\d{1,2})\b|第\s*(\d{1,2})\s*章")


def later_chapters(path: Path, own: int) -> list[int]:
    text = path.read_text(encoding="utf-8")
    found = {int(a or b) for a, b in LATER.findall(text)}
    return sorted(number for number in found if number > own)


# The one test harness: like tests/, it serves every chapter, so it names them all.
HARNESS = CHAPTERS_ROOT / "testing.py"


def test_no_code_in_shared_or_in_a_chapter_names_a_later_chapter() -> None:
    offenders = []
    for path in python_files("shared", "chapters"):
        if path == HARNESS:
            continue
        relative = path.relative_to(REPOSITORY)
        chapter = re.fullmatch(r"ch(\d\d)", relative.parts[1]) if len(relative.parts) > 2 else None
        own = int(chapter[1]) if chapter else 0
        if later := later_chapters(path, own):
            offenders.append(f"{relative.as_posix()} names chapter(s) {later}")
    assert offenders == []


def test_the_check_for_later_chapters_would_catch_one(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text('"""Chapter 11 adds retry."""\n', encoding="utf-8")
    assert later_chapters(path, 1) == [11]
    path.write_text("# see chapters.ch03.policy, 第 6 章\n", encoding="utf-8")
    assert later_chapters(path, 2) == [3, 6]
    assert later_chapters(path, 6) == []


def _shared_modules() -> dict[str, ast.Module]:
    return {
        f"shared.{path.stem}": ast.parse(path.read_text(encoding="utf-8"))
        for path in python_files("shared")
        if path.stem != "__init__"
    }


def _imports(tree: ast.Module, modules: Mapping[str, ast.Module]) -> dict[str, tuple[str, str]]:
    """Local name -> (shared module, name) or (shared module, "") for a module alias."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "shared":
            for alias in node.names:
                found[alias.asname or alias.name] = (f"shared.{alias.name}", "")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module in modules:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    found[alias.asname] = (alias.name, "")
    return found


def _references(node: ast.AST, imports: Mapping[str, tuple[str, str]]) -> set[tuple[str, str]]:
    """The shared names `node` refers to, through what its module imported."""
    found: set[tuple[str, str]] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in imports:
            found.add(imports[inner.id])
        elif isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
            module, name = imports.get(inner.value.id, ("", "x"))
            if module and not name:
                found.add((module, inner.attr))
        elif isinstance(inner, ast.Attribute) and ast.unparse(inner.value).startswith("shared."):
            found.add((ast.unparse(inner.value), inner.attr))  # after `import shared.console`
    return found


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update((t.id, node) for t in targets if isinstance(t, ast.Name))
    return found


PLAIN_METHODS = {"property", "cached_property", "classmethod", "staticmethod"}


def unused_shared_names(roots: Sequence[Path]) -> list[str]:
    """`module.name` of each public name in shared/ that no chapter reaches.

    A name is used when chapter or tutorial code (tests and scripts are not chapters)
    refers to it, or a used name of shared/ does. A public method of a used class is
    used when some chapter, tutorial or shared code reads that attribute by name.
    """
    modules = _shared_modules()
    definitions = {module: _definitions(tree) for module, tree in modules.items()}
    imports = {module: _imports(tree, modules) for module, tree in modules.items()}
    used: set[tuple[str, str]] = set()
    attributes: set[str] = set()
    for path in roots:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used |= _references(tree, _imports(tree, modules))
        attributes |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for tree in modules.values():
        attributes |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    todo = list(used)
    while todo:
        module, name = todo.pop()
        node = definitions.get(module, {}).get(name)
        if node is None:
            continue
        own = {n: (module, n) for n in definitions[module]}
        for found in _references(node, {**imports[module], **own}) - used:
            used.add(found)
            todo.append(found)
    unused = []
    for module, names in definitions.items():
        for name, node in names.items():
            if name.startswith("_"):
                continue
            if (module, name) not in used:
                unused.append(f"{module}.{name}")
            elif isinstance(node, ast.ClassDef):
                unused += [
                    f"{module}.{name}.{method.name}"
                    for method in node.body
                    if isinstance(method, ast.FunctionDef)
                    and not method.name.startswith("_")
                    and method.name not in attributes
                    and all(ast.unparse(d) in PLAIN_METHODS for d in method.decorator_list)
                ]
    return sorted(unused)


def chapter_code() -> list[Path]:
    return [p for p in python_files("chapters", "tutorial") if "tests" not in p.parts]


def test_shared_holds_nothing_that_no_chapter_uses() -> None:
    """What only a later chapter, a test or a script needs lives there, not in shared/."""
    unused = unused_shared_names(chapter_code())
    assert unused == [], f"public names in shared/ that no chapter uses: {', '.join(unused)}"


def test_the_check_for_unused_shared_names_would_catch_one(tmp_path: Path) -> None:
    user = tmp_path / "user.py"
    user.write_text("from shared.text import *\n", encoding="utf-8")
    everything = unused_shared_names([user])
    assert "shared.tools.ToolRegistry" in everything
    user.write_text(
        "from shared import tools\nimport shared.agent as agent\n"
        "x: tools.ToolRegistry = agent.AgentSpec\n",
        encoding="utf-8",
    )
    some = unused_shared_names([user])
    assert "shared.tools.ToolRegistry" not in some
    assert "shared.agent.AgentSpec" not in some
    assert "shared.tools.ToolResult" not in some  # reached through ToolRegistry


# --- 7. an honest diff ------------------------------------------------------------------------


def test_a_file_is_diffed_only_against_the_file_it_declares_it_extends() -> None:
    text = chapter_diff(find_chapter(4))
    assert "--- chapters/ch03/agent.py\n+++ chapters/ch04/agent.py\n" in text
    assert "--- recipe of chapter 3\n+++ recipe of chapter 4\n" in text  # what they add up to
    assert "--- /dev/null\n+++ chapters/ch04/settings.py\n" in text  # not chapter 3's settings
    assert "--- chapters/ch03/settings.py" not in text
    assert "--- /dev/null\n+++ chapters/ch04/parts.py\n" in text  # nor chapter 3's parts
    assert "--- chapters/ch03/parts.py" not in text


def test_every_declared_base_is_a_file_of_an_earlier_chapter() -> None:
    for chapter in (c for c in CHAPTERS if c.ready):
        for path in chapter.folder.glob("*.py"):
            base = declared_base(path, chapter.number)  # raises if the declaration is wrong
            if base is not None:
                assert base.is_file()


def test_a_declaration_of_a_missing_or_later_base_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    path.write_text('"""x\n\nExtends: chapters/ch03/missing.py\n"""\n', encoding="utf-8")
    with pytest.raises(DeclarationError):
        declared_base(path, 5)  # no such file
    path.write_text('"""x\n\nExtends: chapters/ch05/agent.py\n"""\n', encoding="utf-8")
    with pytest.raises(DeclarationError):
        declared_base(path, 3)  # a file of a later chapter
    assert declared_base(path, 6) == CHAPTERS_ROOT / "ch05" / "agent.py"


def test_stat_has_one_line_per_file_then_a_total() -> None:
    lines = chapter_stat(find_chapter(5)).splitlines()
    by_name = {line.split()[0]: line for line in lines[:-1]}
    assert "extends chapters/ch04/agent.py" in by_name["chapters/ch05/agent.py"]
    assert by_name["chapters/ch05/reminder.py"].rstrip().endswith("new")
    assert re.fullmatch(
        r"\d+ files \(\d+ new, \d+ extending\), \+\d+ -\d+ lines; \d+ test files", lines[-1]
    )


def test_the_stat_counts_are_what_the_diff_shows() -> None:
    """The total counts the files' lines: the diff up to the recipe's, which ends it."""
    chapter = find_chapter(5)
    diff = chapter_diff(chapter)
    code, recipe, _ = diff.partition("\n--- recipe of chapter")
    assert recipe, "the diff ends with the recipe's"
    added = sum(
        1 for line in code.splitlines() if line.startswith("+") and not line.startswith("+++")
    )
    assert f"+{added} -" in chapter_stat(chapter).splitlines()[-1]


def test_console_observer_in_plain_mode_keeps_trace_off_stdout() -> None:
    console = plain_console()
    console.tracing = True
    console.request_sent("request 1", {"messages": []})
    assert isinstance(console.out, io.StringIO) and console.out.getvalue() == ""
    assert "--- request 1 ---" in printed(console)


def test_policy_layers_added_from_outside_are_heard_right_after_their_named_layer(
    tmp_path: Path,
) -> None:
    from chapters.ch02.toolset import make_tools
    from chapters.ch03.policy import Call, Verdict
    from shared.decisions import Decision

    tools = make_tools(Workspace(tmp_path))
    policy = Policy(Workspace(tmp_path))
    heard: list[str] = []

    def judge(call: Call) -> Verdict:
        heard.append(call.shown)
        return Verdict(Decision.ALLOW, "outside judge")

    with pytest.raises(ValueError, match="no layer named"):
        policy.with_layer("nowhere", judge)
    joined = policy.with_layer("plan mode", judge)
    verdict = joined.decide(joined.call(tools["shell"], {"command": "make"}, "c1"))
    assert (verdict.decision, verdict.source) == (Decision.ALLOW, "outside judge")
    assert heard == ["shell(make)"]
    assert policy.decide(policy.call(tools["shell"], {"command": "make"})).decision is Decision.ASK


def test_a_request_beside_the_loops_steps_is_named_and_may_carry_more_fields() -> None:
    from shared.completion import ask_model

    watcher = Watcher()
    model = ScriptedModel([response("a summary")])
    history = [UserMessage(content="hi")]
    reply = ask_model(
        model,
        history,
        ToolRegistry().snapshot(),
        watcher,
        4,
        purpose="aside",
        fields={"tool_choice": "none"},
    )
    assert reply.message.content == "a summary"
    assert watcher.seen == [
        "sent aside request 4 with 1 messages",
        "waiting",
        "received aside response 4",
    ]
    assert model.requests[0]["tool_choice"] == "none"

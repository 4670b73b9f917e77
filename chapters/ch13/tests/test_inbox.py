"""The inbox's promises: exactly once, in order, marked only once in the history, placed as
the provider needs, in the first request after it was posted, and a stop that waits for it.

Sources post from real threads. Nothing sleeps to wait: a thread waits on a
`threading.Event` the other side sets, and every wait has a bound (`BOUND`).
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from chapters.ch01.loop import run_agent
from chapters.ch13.inbox import (
    EVENT_CHARS,
    EVENTS_PER_MESSAGE,
    MAX_BACKGROUND_WAIT,
    SUMMARY_CHARS,
    DeliverEvents,
    Delivery,
    Event,
    Inbox,
    delivered_in,
    envelopes,
    task_notification,
)
from shared.agent import AgentSpec, Feature, Run
from shared.calls import CallPipeline
from shared.console import Console
from shared.errors import AgentLimitError
from shared.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from shared.scripted import ScriptedModel, Step, response, tool_call
from shared.tools import PydanticTool, SideEffect, ToolRegistry, ToolResult

BOUND = 10.0  # seconds: the longest any test waits for another thread
ENVELOPE = (
    "<task-notification><task-id>bg1</task-id><status>completed</status>"
    "<exit-code>0</exit-code><output-file>.tutorial/jobs/bg1.log</output-file>"
    '<summary>Background command "pytest -q" completed (exit code 0)</summary>'
    "</task-notification>"
)


def job_ended(task_id: str = "bg1", exit_code: int = 0) -> Event:
    status = "completed" if exit_code == 0 else "failed"
    return task_notification(
        task_id,
        status,
        f'Background command "pytest -q" {status} (exit code {exit_code})',
        exit_code=exit_code,
        output_file=f".tutorial/jobs/{task_id}.log",
    )


def event(key: str, source: str = "test") -> Event:
    return Event(source, key, f"<note>{source} {key}</note>")


# -- the envelope ---------------------------------------------------------------------------


def test_a_task_notification_is_claude_codes_envelope() -> None:
    ended = job_ended()
    assert ended.text == ENVELOPE
    assert (ended.source, ended.key, ended.ident) == ("job", "bg1", ("job", "bg1"))


def test_its_values_are_xml_escaped_and_absent_fields_left_out() -> None:
    ended = task_notification("bg2", "killed", 'Background command "a<b && c>d" was stopped')
    assert ended.text == (
        "<task-notification><task-id>bg2</task-id><status>killed</status>"
        '<summary>Background command "a&lt;b &amp;&amp; c&gt;d" was stopped</summary>'
        "</task-notification>"
    )


@pytest.mark.parametrize(
    "path", [PurePosixPath(".tutorial/jobs/bg3.log"), PureWindowsPath(r".tutorial\jobs\bg3.log")]
)
def test_an_output_path_is_written_with_forward_slashes(path: PurePosixPath) -> None:
    ended = task_notification("bg3", "completed", "done", output_file=path)
    assert "<output-file>.tutorial/jobs/bg3.log</output-file>" in ended.text


def test_a_long_summary_is_cut_to_its_bound() -> None:
    ended = task_notification("bg4", "completed", "x" * (SUMMARY_CHARS * 3))
    summary = ended.text.split("<summary>")[1].split("</summary>")[0]
    assert len(summary) == SUMMARY_CHARS and summary.endswith("…")


@pytest.mark.parametrize(
    ("source", "key", "text"),
    [("", "k", "t"), ("s", "", "t"), ("s", "k", "  \n"), ("s", "k", "x" * (EVENT_CHARS + 1))],
    ids=["no-source", "no-key", "no-text", "too-long"],
)
def test_an_event_needs_a_source_a_key_and_text_within_its_bound(
    source: str, key: str, text: str
) -> None:
    with pytest.raises(ValueError):
        Event(source, key, text)


# -- exactly once, in order -----------------------------------------------------------------


def test_a_key_posted_twice_is_one_event() -> None:
    inbox = Inbox()
    assert inbox.post(event("a")) is True
    assert inbox.post(Event("test", "a", "<note>again, other text</note>")) is False
    assert inbox.post(event("a", source="other")) is True  # a key is unique per source
    assert [e.ident for e in inbox.pending()] == [("test", "a"), ("other", "a")]


def test_a_key_posted_after_its_delivery_is_ignored() -> None:
    inbox = Inbox()
    inbox.post(event("a"))
    inbox.delivered(inbox.pending())
    assert inbox.post(event("a")) is False
    assert inbox.pending() == []
    assert inbox.delivered_keys == {("test", "a")}


def test_a_resumed_inbox_knows_what_the_history_holds_whichever_way_it_went() -> None:
    first, second, third = job_ended("bg1"), job_ended("bg2"), job_ended("bg3")
    history: list[Message] = [
        SystemMessage(content="s"),
        UserMessage(content="go"),
        UserMessage(content=envelopes([first])),
        ToolMessage(tool_call_id="c1", content=f"ok\n\n{second.text}"),  # appended to a result
    ]
    inbox = Inbox(delivered_keys=delivered_in(history, [first, second, third]))
    assert [inbox.post(e) for e in (first, second, third)] == [False, False, True]
    assert inbox.pending() == [third]


def test_pending_is_in_posting_order_and_marks_nothing() -> None:
    inbox = Inbox()
    for key in "cab":
        inbox.post(event(key))
    assert [e.key for e in inbox.pending()] == ["c", "a", "b"]
    assert [e.key for e in inbox.pending(limit=2)] == ["c", "a"]
    assert [e.key for e in inbox.pending()] == ["c", "a", "b"]  # reading is not delivering
    inbox.delivered(inbox.pending(limit=1))
    assert [e.key for e in inbox.pending()] == ["a", "b"]


def test_posts_from_many_threads_each_arrive_once_in_each_threads_order() -> None:
    inbox, start = Inbox(), threading.Event()

    def source(name: str) -> None:
        assert start.wait(BOUND)
        for n in range(50):
            inbox.post(event(f"{name}-{n}", source=name))
            inbox.post(event(f"{name}-{n}", source=name))  # a source that posts twice

    threads = [threading.Thread(target=source, args=(f"s{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join(BOUND)
        assert not thread.is_alive()
    got = inbox.pending()
    assert len(got) == len({e.ident for e in got}) == 200
    for i in range(4):
        mine = [e.key for e in got if e.source == f"s{i}"]
        assert mine == [f"s{i}-{n}" for n in range(50)]


# -- waiting, on the condition ----------------------------------------------------------------


def done_after(gate: threading.Event, inbox: Inbox, source_key: str) -> None:
    """A source that ends without posting, once `gate` is set."""
    assert gate.wait(BOUND)
    inbox.done(source_key)


def test_wait_returns_at_once_when_an_event_is_pending() -> None:
    inbox = Inbox()
    inbox.post(event("a"))
    assert inbox.wait(0) is True


def test_wait_wakes_when_another_thread_posts() -> None:
    inbox, go = Inbox(), threading.Event()
    inbox.expect("job:bg1")

    def job() -> None:
        assert go.wait(BOUND)
        inbox.post(job_ended())
        inbox.done("job:bg1")

    thread = threading.Thread(target=job)
    thread.start()
    started = time.monotonic()
    go.set()
    assert inbox.wait(60) is True
    assert time.monotonic() - started < BOUND  # woken by the post, not by the timeout
    thread.join(BOUND)


def test_wait_ends_when_the_last_source_is_done_without_posting() -> None:
    inbox, go = Inbox(), threading.Event()
    inbox.expect("job:bg1")
    thread = threading.Thread(target=done_after, args=(go, inbox, "job:bg1"))
    thread.start()
    started = time.monotonic()
    go.set()
    assert inbox.wait(60) is False
    assert time.monotonic() - started < BOUND
    assert not inbox.expecting()
    thread.join(BOUND)


def test_wait_without_a_source_that_may_post_returns_at_once() -> None:
    started = time.monotonic()
    assert Inbox().wait(60) is False
    assert time.monotonic() - started < BOUND


def test_wait_gives_up_after_its_timeout() -> None:
    inbox = Inbox()
    inbox.expect("job:bg1")
    assert inbox.wait(0.05) is False
    assert inbox.expecting()


@pytest.mark.parametrize("timeout", [-1.0, float("inf"), float("nan")])
def test_wait_refuses_a_timeout_that_is_not_a_number_of_seconds(timeout: float) -> None:
    with pytest.raises(ValueError):
        Inbox().wait(timeout)


# -- delivery on a real run -------------------------------------------------------------------


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def look_tool(then: Callable[[], object] = lambda: None) -> PydanticTool:
    """A tool that runs `then` (a job ending while it runs, say) and says it looked."""

    def look(args: Empty) -> ToolResult:
        then()
        return ToolResult.success("ok: looked")

    return PydanticTool("look", "Looks.", Empty, SideEffect.READ, look)


def look(call_id: str) -> dict[str, Any]:
    return response(None, [tool_call(call_id, "look", "{}")])


class Waits:
    """A `waiting` callback that records each bound and says when a wait starts."""

    def __init__(self) -> None:
        self.bounds: list[float] = []
        self.started = threading.Event()

    @contextmanager
    def __call__(self, run: Run, seconds: float) -> Iterator[None]:
        self.bounds.append(seconds)
        self.started.set()
        yield


def spec(
    steps: Sequence[Step],
    feature: DeliverEvents,
    *,
    tools: Sequence[PydanticTool] = (),
    more: Sequence[Feature] = (),
    max_turns: int = 10,
) -> AgentSpec:
    return AgentSpec(
        model=ScriptedModel(steps),
        tools=ToolRegistry(tools or [look_tool()]),
        calls=CallPipeline(),
        console=Console(out=io.StringIO(), err=io.StringIO(), fancy=False),
        system_prompt="You are tested.",
        features=[feature, *more],
        max_turns=max_turns,
    )


def requests(agent: AgentSpec) -> list[dict[str, Any]]:
    assert isinstance(agent.model, ScriptedModel)
    return agent.model.requests


def roles(request: Mapping[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


def copies(request: Mapping[str, Any], text: str) -> int:
    """In how many of the request's messages `text` appears."""
    return sum(text in (m.get("content") or "") for m in request["messages"])


def test_user_message_profile_adds_one_user_message_after_the_last_tool_message() -> None:
    inbox = Inbox()
    ended = [job_ended("bg1"), job_ended("bg2", exit_code=1)]
    tool = look_tool(then=lambda: [inbox.post(e) for e in ended])
    agent = spec([look("c1"), response("done")], DeliverEvents(inbox), tools=[tool])

    assert run_agent("go", agent) == "done"

    first, second = requests(agent)
    assert roles(first) == ["system", "user"]
    assert roles(second) == ["system", "user", "assistant", "tool", "user"]
    assert second["messages"][3]["content"] == "ok: looked"
    assert second["messages"][4]["content"] == f"{ended[0].text}\n{ended[1].text}"
    assert inbox.pending() == []
    assert inbox.delivered_keys == {("job", "bg1"), ("job", "bg2")}


def test_append_to_tool_profile_appends_the_events_to_the_last_tool_message() -> None:
    inbox = Inbox()
    tool = look_tool(then=lambda: inbox.post(job_ended()))
    feature = DeliverEvents(inbox, delivery=Delivery.APPEND_TO_TOOL)
    history: list[Message] = []
    agent = spec([look("c1"), response("done")], feature, tools=[tool])

    assert run_agent("go", agent, history=history) == "done"

    second = requests(agent)[1]
    assert roles(second) == ["system", "user", "assistant", "tool"]
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": f"ok: looked\n\n{ENVELOPE}",
    }
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "assistant"]
    assert inbox.pending() == []


def test_append_to_tool_profile_adds_a_user_message_when_no_tool_message_is_last() -> None:
    inbox = Inbox()
    inbox.post(job_ended())
    agent = spec([response("done")], DeliverEvents(inbox, delivery=Delivery.APPEND_TO_TOOL))
    run_agent("go", agent)
    (first,) = requests(agent)
    assert roles(first) == ["system", "user", "user"]
    assert first["messages"][2]["content"] == ENVELOPE


class BreaksOnNotifications(Feature):
    """A feature after the inbox that fails while the message enters (a log that cannot write)."""

    def on_message(self, run: Run, message: Message) -> None:
        if "<task-notification>" in str(message.content):
            raise RuntimeError("the log could not write it")


@pytest.mark.parametrize("delivery", list(Delivery))
def test_an_event_whose_message_did_not_enter_whole_stays_pending(delivery: Delivery) -> None:
    inbox = Inbox()
    tool = look_tool(then=lambda: inbox.post(job_ended()))
    feature = DeliverEvents(inbox, delivery=delivery)
    agent = spec(
        [look("c1"), response("done")], feature, tools=[tool], more=[BreaksOnNotifications()]
    )

    with pytest.raises(RuntimeError, match="could not write"):
        run_agent("go", agent)

    assert inbox.pending() == [job_ended()]
    assert inbox.delivered_keys == set()
    assert len(requests(agent)) == 1  # nothing was sent with it


def test_the_notification_is_in_the_first_request_after_posting_and_in_no_other() -> None:
    inbox, go, posted = Inbox(), threading.Event(), threading.Event()

    def job() -> None:  # ends while the model is busy with its second reply
        assert go.wait(BOUND)
        inbox.post(job_ended())
        posted.set()

    def second_reply(request: Mapping[str, Any]) -> Mapping[str, Any]:
        go.set()
        assert posted.wait(BOUND)
        return look("c2")

    thread = threading.Thread(target=job)
    thread.start()
    agent = spec([look("c1"), second_reply, look("c3"), response("done")], DeliverEvents(inbox))
    assert run_agent("go", agent) == "done"
    thread.join(BOUND)

    sent = requests(agent)
    assert [copies(r, ENVELOPE) for r in sent] == [0, 0, 1, 1]  # added once, then history
    third, fourth = sent[2], sent[3]
    assert roles(third)[-2:] == ["tool", "user"]  # right after the result of c2
    assert third["messages"][-1]["content"] == ENVELOPE
    assert fourth["messages"][: len(third["messages"])] == third["messages"]


def test_more_events_than_one_message_carries_go_with_the_next_request_in_order() -> None:
    inbox = Inbox()
    posted = [event(f"e{n:02d}") for n in range(EVENTS_PER_MESSAGE + 5)]
    for e in posted:
        inbox.post(e)
    agent = spec([look("c1"), response("done")], DeliverEvents(inbox))
    run_agent("go", agent)
    first, second = requests(agent)
    assert first["messages"][-1]["content"] == envelopes(posted[:EVENTS_PER_MESSAGE])
    assert second["messages"][-1]["content"] == envelopes(posted[EVENTS_PER_MESSAGE:])


def test_a_resumed_session_does_not_deliver_again() -> None:
    ended = job_ended()
    history: list[Message] = [
        SystemMessage(content="You are tested."),
        UserMessage(content="go"),
        UserMessage(content=ended.text),
        AssistantMessage(content="The tests passed."),
    ]
    inbox = Inbox(delivered_keys=delivered_in(history, [ended]))
    inbox.post(ended)  # the job's end, read again from its state file
    agent = spec([response("still done")], DeliverEvents(inbox))
    run_agent("and now?", agent, history=history)
    (first,) = requests(agent)
    assert copies(first, ENVELOPE) == 1


# -- a stop while a source may still post -------------------------------------------------------


def test_a_stop_waits_for_the_event_and_the_next_request_carries_it() -> None:
    inbox, waits = Inbox(), Waits()
    inbox.expect("job:bg1")

    def job() -> None:
        assert waits.started.wait(BOUND)
        inbox.post(job_ended())
        inbox.done("job:bg1")

    thread = threading.Thread(target=job)
    thread.start()
    feature = DeliverEvents(inbox, background_wait=60, waiting=waits)
    history: list[Message] = []
    agent = spec([response("started the tests"), response("the tests passed")], feature)
    assert run_agent("go", agent, history=history) == "the tests passed"
    thread.join(BOUND)

    assert waits.bounds == [60]
    first, second = requests(agent)
    assert copies(first, ENVELOPE) == 0
    assert roles(second)[-2:] == ["assistant", "user"]
    assert second["messages"][-1]["content"] == ENVELOPE
    assert [m.role for m in history] == ["system", "user", "assistant", "user", "assistant"]
    assert inbox.pending() == [] and inbox.delivered_keys == {("job", "bg1")}


def test_no_event_within_the_wait_ends_the_run_with_its_answer() -> None:
    inbox, waits = Inbox(), Waits()
    inbox.expect("job:bg1")
    agent = spec([response("started")], DeliverEvents(inbox, background_wait=0.05, waiting=waits))
    assert run_agent("go", agent) == "started"
    assert waits.bounds == [0.05]
    assert len(requests(agent)) == 1


def test_a_wait_of_zero_never_waits() -> None:
    inbox, waits = Inbox(), Waits()
    inbox.expect("job:bg1")
    agent = spec([response("started")], DeliverEvents(inbox, background_wait=0, waiting=waits))
    assert run_agent("go", agent) == "started"
    assert waits.bounds == []


def test_the_wait_ends_when_the_last_source_is_done_without_an_event() -> None:
    inbox, waits = Inbox(), Waits()
    inbox.expect("job:bg1")
    thread = threading.Thread(target=done_after, args=(waits.started, inbox, "job:bg1"))
    thread.start()
    started = time.monotonic()
    agent = spec([response("started")], DeliverEvents(inbox, background_wait=60, waiting=waits))
    assert run_agent("go", agent) == "started"
    assert time.monotonic() - started < BOUND  # not the 60 s of the bound
    thread.join(BOUND)


def test_an_event_pending_at_the_stop_goes_on_without_waiting() -> None:
    inbox, waits = Inbox(), Waits()

    def answer_while_the_job_ends(request: Mapping[str, Any]) -> Mapping[str, Any]:
        inbox.post(job_ended())  # after this request's before_request
        return response("started")

    feature = DeliverEvents(inbox, background_wait=0, waiting=waits)
    agent = spec([answer_while_the_job_ends, response("passed")], feature)
    assert run_agent("go", agent) == "passed"
    assert waits.bounds == []
    assert requests(agent)[1]["messages"][-1]["content"] == ENVELOPE
    assert inbox.pending() == []


def test_out_of_turns_right_after_the_stop_its_events_count_as_delivered() -> None:
    inbox = Inbox()

    def answer_while_the_job_ends(request: Mapping[str, Any]) -> Mapping[str, Any]:
        inbox.post(job_ended())
        return response("started")

    agent = spec([answer_while_the_job_ends], DeliverEvents(inbox), max_turns=1)
    history: list[Message] = []
    with pytest.raises(AgentLimitError):
        run_agent("go", agent, history=history)
    assert history[-1] == UserMessage(content=ENVELOPE)  # it is in the history...
    assert inbox.pending() == []  # ...so it is not delivered again


def test_a_stop_message_that_did_not_enter_whole_leaves_its_events_pending() -> None:
    inbox = Inbox()

    def answer_while_the_job_ends(request: Mapping[str, Any]) -> Mapping[str, Any]:
        inbox.post(job_ended())
        return response("started")

    agent = spec([answer_while_the_job_ends], DeliverEvents(inbox), more=[BreaksOnNotifications()])
    with pytest.raises(RuntimeError, match="could not write"):
        run_agent("go", agent)
    assert inbox.pending() == [job_ended()]


def test_the_default_wait_shows_a_line_on_the_console() -> None:
    inbox = Inbox()
    inbox.expect("job:bg1")
    agent = spec([response("started")], DeliverEvents(inbox, background_wait=0.05))
    run_agent("go", agent)
    assert isinstance(agent.console.err, io.StringIO)
    assert "waiting for a background event (at most 0.05s)" in agent.console.err.getvalue()


@pytest.mark.parametrize("seconds", [-1.0, MAX_BACKGROUND_WAIT + 1])
def test_a_wait_out_of_bounds_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="background_wait"):
        DeliverEvents(Inbox(), background_wait=seconds)

"""Chapter 5's loop end to end: the reminder's timing, the note at the stop, the Stop hook.

The agent is wired as the command line wires it (see support.py); the model is a
`ScriptedModel` that emits real tool calls, and `ScriptedModel.requests` holds a
deep copy of every request, so each test can say exactly which request carried
a reminder. "Request N+2" is where the first reminder belongs: the plan is
written in reply 1, replies 2 to N+1 are the N silent ones.
"""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch03.policy import Mode
from chapters.ch03.tests.support import read_audit
from chapters.ch04.demo import python_command
from chapters.ch04.hooks import Hook, HookEvent, HookReply, command_hook
from chapters.ch04.loop_hooks import StopRefusedError
from chapters.ch05.tests.support import (
    FINISHED,
    FRESH,
    HALFWAY,
    LEFT_OPEN,
    REMINDER_NOTICE,
    REMINDER_PREFIX,
    glob,
    item,
    make_agent,
    reminded_at,
    silent,
    todo,
    turn,
)
from chapters.ch05.todo import TODO_TOOL
from shared.decisions import Decision
from shared.errors import AgentLimitError
from shared.messages import AssistantMessage
from shared.scripted import response, tool_call

pytestmark = pytest.mark.usefixtures("isolated")

DONE = response("done")
OPEN_NOTE = (
    "[harness] The model stopped with 2 of 3 plan items still open:\n"
    "[>] 2. Read each file\n"
    "[ ] 3. Write the summary"
)


# --- 1. when the reminder comes ------------------------------------------------------------


@pytest.mark.parametrize("remind_after", [1, 3, 5])
def test_the_reminder_comes_after_n_silent_replies_and_not_before(
    tmp_path: Path, remind_after: int
) -> None:
    agent = make_agent(tmp_path, remind_after=remind_after)
    agent.run(turn(todo("p1", *FRESH)), *silent(remind_after), DONE)
    requests = agent.requests
    assert len(requests) == remind_after + 2
    assert reminded_at(requests) == [remind_after + 2]
    reminder = requests[remind_after + 1]["messages"][-1]  # request N+2, 0-based N+1
    assert reminder["role"] == "user"
    assert reminder["content"].startswith(REMINDER_PREFIX)
    assert f" for {remind_after} turns " in reminder["content"]
    # It follows the last tool result, and it names the open items.
    assert requests[remind_after + 1]["messages"][-2]["role"] == "tool"
    assert reminder["content"].endswith(
        "[>] 1. List the files\n[ ] 2. Read each file\n[ ] 3. Write the summary"
    )


def test_the_reminder_is_a_notice_on_the_console_once(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=3)
    agent.run(turn(todo("p1", *HALFWAY)), *silent(4), DONE)
    text = agent.printed()
    assert text.count(REMINDER_NOTICE) == 1
    notice = f"{REMINDER_NOTICE} (plan: 1 of 3 completed)\n"
    assert notice in text
    # Printed before the request it goes with, after the one before.
    assert text.index("(turn 4)") < text.index(notice) < text.index("(turn 5)")


def test_after_a_reminder_the_next_one_waits_another_n_silent_replies(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=3)
    agent.run(turn(todo("p1", *FRESH)), *silent(9), DONE)
    assert reminded_at(agent.requests) == [5, 8, 11]
    assert agent.printed().count(REMINDER_NOTICE) == 3


def test_an_accepted_todo_write_starts_the_count_again(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=3)
    agent.run(
        turn(todo("p1", *FRESH)),
        *silent(2),
        turn(todo("p2", *HALFWAY)),  # reply 4: without it, request 5 would carry a reminder
        *silent(3, start=200),
        DONE,
    )
    assert reminded_at(agent.requests) == [8]
    assert agent.requests[7]["messages"][-1]["content"].endswith(
        "Open items:\n[>] 2. Read each file\n[ ] 3. Write the summary"
    )


def test_a_todo_write_beside_other_calls_also_starts_the_count_again(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=2)
    agent.run(
        turn(todo("p1", *FRESH)),
        turn(glob("g1")),
        turn(glob("g2"), todo("p2", *HALFWAY)),  # reply 3: without it, request 4 is reminded
        turn(glob("g3")),
        DONE,
    )
    assert agent.result("p2").startswith("plan: 1 of 3 completed")
    assert reminded_at(agent.requests) == []


def test_a_rejected_todo_write_does_not_start_the_count_again(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=3)
    repeated_ids = [item("1", "a", "in_progress"), item("1", "b")]
    agent.run(
        turn(todo("p1", *FRESH)),
        *silent(1),
        turn(todo("p2", *repeated_ids)),  # reply 3: rejected
        *silent(1, start=200),
        DONE,
    )
    assert agent.result("p2").startswith("invalid_arguments: ")
    assert reminded_at(agent.requests) == [5]
    assert agent.plan.as_json() == list(FRESH)  # the rejected list changed nothing


def test_a_plan_with_two_items_in_progress_does_not_hold_up_the_task(tmp_path: Path) -> None:
    """A small model sent such a list again and again while it was rejected whole; now it
    is accepted the first time and the work goes on."""
    agent = make_agent(tmp_path, mode=Mode.ACCEPT_EDITS)
    busy = [item("1", "Write the file", "in_progress"), item("2", "Check it", "in_progress")]
    write_it = tool_call("w1", "write_file", json.dumps({"path": "out.txt", "content": "x\n"}))
    agent.run(turn(todo("p1", *busy)), turn(write_it), DONE)
    assert agent.result("p1").startswith("plan: 0 of 2 completed\n[>] 1. Write the file\n[ ] 2.")
    assert 'The harness kept "1" in_progress' in agent.result("p1")
    assert (agent.workspace.root / "out.txt").read_text(encoding="utf-8") == "x\n"
    assert len(agent.requests) == 3  # the plan went in once; nothing was sent twice


def test_a_plan_with_nothing_in_progress_starts_its_first_item(tmp_path: Path) -> None:
    """Told to mark an item, a small model sent the same all-pending list five times and
    was stopped; now the first pending item starts, and the result says so."""
    agent = make_agent(tmp_path, mode=Mode.ACCEPT_EDITS)
    idle = [item("1", "Write the file"), item("2", "Check it")]
    write_it = tool_call("w1", "write_file", json.dumps({"path": "out.txt", "content": "x\n"}))
    agent.run(turn(todo("p1", *idle)), turn(write_it), DONE)
    assert agent.result("p1").startswith("plan: 0 of 2 completed\n[>] 1. Write the file\n[ ] 2.")
    assert 'The harness marked "1", the first pending one, in_progress' in agent.result("p1")
    assert (agent.workspace.root / "out.txt").read_text(encoding="utf-8") == "x\n"


def test_a_todo_write_denied_by_a_hook_does_not_start_the_count_again(tmp_path: Path) -> None:
    def frozen(payload: Mapping[str, Any]) -> HookReply | None:
        """Denies any list that marks the first item completed."""
        if payload["input"]["todos"][0]["status"] == "completed":
            return HookReply(Decision.DENY, "the plan is frozen")
        return None

    agent = make_agent(tmp_path, Hook(HookEvent.PRE_TOOL_USE, "frozen", frozen), remind_after=2)
    agent.run(turn(todo("p1", *FRESH)), turn(todo("p2", *HALFWAY)), *silent(1), DONE)
    assert agent.result("p2").startswith("denied")
    assert reminded_at(agent.requests) == [4]
    assert agent.plan.as_json() == list(FRESH)


@pytest.mark.parametrize(
    "plan_call",
    [
        pytest.param(None, id="no-plan"),
        pytest.param(todo("p1"), id="empty-plan"),
        pytest.param(todo("p1", *FINISHED), id="all-completed"),
    ],
)
def test_no_reminder_without_open_items(tmp_path: Path, plan_call: dict[str, Any] | None) -> None:
    agent = make_agent(tmp_path, remind_after=1)
    first = [turn(plan_call)] if plan_call else []
    agent.run(*first, *silent(6), DONE)
    assert reminded_at(agent.requests) == []
    assert REMINDER_NOTICE not in agent.printed()


def test_a_plan_cleared_with_an_empty_list_stops_the_reminders(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, remind_after=1)
    agent.run(turn(todo("p1", *FRESH)), *silent(1), turn(todo("p2")), *silent(4, start=200), DONE)
    assert reminded_at(agent.requests) == [3]
    assert agent.plan.items == ()


def test_a_stop_refused_by_a_hook_counts_as_a_silent_reply(tmp_path: Path) -> None:
    replies = [HookReply(Decision.DENY, "not yet"), None]
    refuse_once = Hook(HookEvent.STOP, "once", lambda payload: replies.pop(0))
    agent = make_agent(tmp_path, refuse_once, remind_after=2)
    agent.run(turn(todo("p1", *FRESH)), *silent(1), response("done?"), DONE)
    assert reminded_at(agent.requests) == [4]
    fourth = agent.requests[3]["messages"]
    assert [m["role"] for m in fourth[-3:]] == ["assistant", "user", "user"]
    assert fourth[-2]["content"] == "[Stop hook] Do not stop yet: once: not yet"


def test_every_request_carries_the_todo_write_schema(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    agent.run(turn(todo("p1", *FRESH)), DONE)
    assert agent.model is not None
    for request in agent.model.requests:
        names = [tool["function"]["name"] for tool in request["tools"]]
        assert names[-1] == TODO_TOOL
        assert "$ref" not in json.dumps(request["tools"])
    assert agent.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "p1",
        "content": "plan: 0 of 3 completed\n"
        "[>] 1. List the files\n[ ] 2. Read each file\n[ ] 3. Write the summary\n"
        "Work on the in_progress item; update the list when its status changes.",
    }


# --- 2. the note when the model stops with items open --------------------------------------


def test_stopping_with_open_items_adds_a_note_listing_only_those(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    answer = agent.run(turn(todo("p1", *HALFWAY)), response("All done.\n"))
    assert answer == f"All done.\n\n{OPEN_NOTE}"
    assert "[x] 1." not in answer.split(LEFT_OPEN)[1]
    # The note is for the human: the history keeps what the model said.
    last = agent.history[-1]
    assert isinstance(last, AssistantMessage)
    assert last.content == "All done.\n"


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([DONE], id="no-plan"),
        pytest.param([turn(todo("p1", *FINISHED)), DONE], id="all-completed"),
        pytest.param([turn(todo("p1", *FRESH)), turn(todo("p2")), DONE], id="cleared"),
    ],
)
def test_no_note_when_nothing_is_left_open(tmp_path: Path, steps: list[dict[str, Any]]) -> None:
    agent = make_agent(tmp_path)
    assert agent.run(*steps) == "done"


def test_running_out_of_turns_with_open_items_says_where_the_plan_stood(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path, remind_after=10)
    with pytest.raises(AgentLimitError):
        agent.run(turn(todo("p1", *HALFWAY)), *silent(1), max_turns=2)
    assert agent.printed().endswith(OPEN_NOTE + "\n")


def test_running_out_of_turns_with_the_plan_done_adds_nothing(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    with pytest.raises(AgentLimitError):
        agent.run(turn(todo("p1", *FINISHED)), *silent(1), max_turns=2)
    assert LEFT_OPEN not in agent.printed()


# --- 3. the Stop hook sees the plan --------------------------------------------------------


def test_the_stop_event_carries_the_plan(tmp_path: Path) -> None:
    seen: list[Mapping[str, Any]] = []

    def record(payload: Mapping[str, Any]) -> None:
        seen.append(json.loads(json.dumps(payload)))  # what a command hook would read

    agent = make_agent(tmp_path, Hook(HookEvent.STOP, "record", record))
    agent.run(turn(todo("p1", *HALFWAY)), response("stopping"), prompt="summarise")
    assert seen == [
        {
            "event": "Stop",
            "workspace": str(agent.workspace.root),
            "prompt": "summarise",
            "answer": "stopping",
            "plan": [dict(i) for i in HALFWAY],
        }
    ]


def test_the_stop_event_carries_an_empty_plan_when_there_is_none(tmp_path: Path) -> None:
    seen: list[Mapping[str, Any]] = []
    agent = make_agent(tmp_path, Hook(HookEvent.STOP, "record", seen.append))
    agent.run(DONE)
    assert [payload["plan"] for payload in seen] == [[]]


def until_done(payload: Mapping[str, Any]) -> HookReply | None:
    """A Stop hook that refuses while the plan has open items."""
    open_ids = [i["id"] for i in payload["plan"] if i["status"] != "completed"]
    if open_ids:
        return HookReply(Decision.DENY, f"the plan still has open items: {', '.join(open_ids)}")
    return None


def test_a_stop_hook_can_send_the_model_back_until_the_plan_is_done(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, Hook(HookEvent.STOP, "until-done", until_done))
    answer = agent.run(
        turn(todo("p1", *HALFWAY)),
        response("I think that is enough."),
        turn(todo("p2", *FINISHED)),
        response("Now every step is done."),
    )
    assert answer == "Now every step is done."  # no note: nothing is open
    assert agent.requests[2]["messages"][-2:] == [
        {"role": "assistant", "content": "I think that is enough."},
        {
            "role": "user",
            "content": "[Stop hook] Do not stop yet: until-done: "
            "the plan still has open items: 2, 3",
        },
    ]
    assert "Stop hook refused the stop: until-done: the plan still has open items: 2, 3" in (
        agent.printed()
    )


def test_a_stop_hook_that_keeps_refusing_is_still_bounded(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, Hook(HookEvent.STOP, "until-done", until_done))
    with pytest.raises(StopRefusedError, match="the plan still has open items: 2, 3"):
        agent.run(turn(todo("p1", *HALFWAY)), *[response("no")] * 10)


UNTIL_DONE_SCRIPT = """
    import json, sys
    event = json.load(sys.stdin)
    left = [item["id"] for item in event["plan"] if item["status"] != "completed"]
    if left:
        sys.stderr.write("open items: " + ", ".join(left))
        sys.exit(2)
"""


def test_a_command_stop_hook_reads_the_plan_on_stdin_and_refuses(tmp_path: Path) -> None:
    script = tmp_path / "until_done.py"
    script.write_text(textwrap.dedent(UNTIL_DONE_SCRIPT), encoding="utf-8")
    hook = command_hook(
        HookEvent.STOP,
        python_command(script),
        name="until_done.py",
        workspace=tmp_path / "ws",
        timeout=30,
    )
    agent = make_agent(tmp_path, hook)
    answer = agent.run(
        turn(todo("p1", *HALFWAY)),
        response("Stopping here."),
        turn(todo("p2", *FINISHED)),
        response("Finished."),
    )
    assert answer == "Finished."
    assert agent.requests[2]["messages"][-1] == {
        "role": "user",
        "content": "[Stop hook] Do not stop yet: until_done.py: open items: 2, 3",
    }


# --- 4. todo_write under chapter 3's policy ------------------------------------------------


def test_todo_write_changes_only_state_is_allowed_in_plan_mode_and_audited(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, mode=Mode.PLAN)
    agent.run(turn(todo("p1", *FRESH)), DONE)
    assert agent.result("p1").startswith("plan: 0 of 3 completed\n")
    assert agent.plan.as_json() == list(FRESH)
    [record] = read_audit(tmp_path / "audit.jsonl")
    assert (record["tool_call_id"], record["tool"], record["decision"]) == (
        "p1",
        TODO_TOOL,
        "allow",
    )
    assert record["source"] == "mode plan allows state calls"


# --- 5. plain output: the plan as lines ----------------------------------------------------


def test_plain_output_prints_the_plan_as_lines_without_escapes(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    agent.run(turn(todo("p1", *FRESH)), turn(todo("p2", *HALFWAY)), DONE)
    text = agent.printed()
    assert "\x1b" not in text
    assert (
        "[todo_write → ok]\n"
        "plan: 0 of 3 completed\n"
        "[>] 1. List the files\n"
        "[ ] 2. Read each file\n"
        "[ ] 3. Write the summary\n"
        "Work on the in_progress item; update the list when its status changes.\n"
    ) in text
    assert "[x] 1. List the files\n[>] 2. Read each file\n" in text
    assert "计划" not in text  # the view under the spinner is for terminals only
    assert isinstance(agent.console.out, io.StringIO)
    assert agent.console.out.getvalue() == ""  # the loop prints no answer; the CLI does


def test_the_shells_output_cap_can_be_raised_through_chapter_tools(tmp_path: Path) -> None:
    """`output_limit` reaches chapter 1's shell through chapter 5's recipe."""
    from chapters.ch01.shell_tool import ShellArgs
    from chapters.ch02.workspace import Workspace
    from chapters.testing import setup_of
    from shared.process import DEFAULT_OUTPUT_LIMIT
    from shared.recipe import listed_tools
    from shared.tools import PydanticTool

    script = tmp_path / "loud.py"
    script.write_text("print('x' * 50_000)\n", encoding="utf-8")
    command = ShellArgs(command=python_command(script))

    def shell_output(output_limit: int = DEFAULT_OUTPUT_LIMIT) -> str:
        setup = setup_of(5, workspace=Workspace(tmp_path), output_limit=output_limit)
        shell = listed_tools(setup)["shell"]
        assert isinstance(shell, PydanticTool)
        return shell.run(command).content

    assert "[... output truncated:" in shell_output()  # 20,000 bytes per stream by default
    raised = shell_output(output_limit=100_000)
    assert "[... output truncated:" not in raised
    assert "x" * 50_000 in raised

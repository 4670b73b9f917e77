"""The task tool: what a child gets, what the parent gets back, and what a child may not do.

Each test writes the parent's script and each child's script separately (see
support.py); the agent is the one chapters/ch06/agent.py builds.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chapters.ch03.asking import ScriptedAsker, TerminalAsker
from chapters.ch03.policy import Mode
from chapters.ch03.tests.support import read_audit
from chapters.ch04.hooks import Hook, HookEvent, HookReply
from chapters.ch04.loop_hooks import MAX_STOP_REFUSALS
from chapters.ch06.tests.support import (
    EXPLORE,
    GENERAL,
    PARENT,
    Family,
    call,
    say,
    task,
    tool_names,
    turn,
    write,
)
from shared.console import Console
from shared.decisions import Decision
from shared.errors import AgentLimitError, ProviderError
from shared.messages import ToolMessage
from shared.scripted import response

pytestmark = pytest.mark.usefixtures("isolated")

CHILD_PROMPT = "Find where greet is defined; report file and line."


def test_the_childs_first_request_holds_only_its_system_prompt_and_the_task_prompt(
    tmp_path: Path,
) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", CHILD_PROMPT)), say("done")],
            EXPLORE: [say("greet.py line 1")],
        },
    )
    family.run("the user's question, which the child must not see")
    (child,) = family.requests_of(EXPLORE)
    assert child["messages"] == [
        {"role": "system", "content": EXPLORE},
        {"role": "user", "content": CHILD_PROMPT},
    ]


def test_the_childs_tools_are_its_definitions_and_never_task(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="explore")), turn(task("t2", agent=None)), say("ok")],
            EXPLORE: [say("found")],
            GENERAL: [say("done")],
        },
    )
    family.run()
    parent = family.requests_of(PARENT)[0]
    assert "task" in tool_names(parent)
    assert tool_names(family.requests_of(EXPLORE)[0]) == ["read_file", "glob", "grep"]
    # general is the default: the parent's tools, minus task
    general = tool_names(family.requests_of(GENERAL)[0])
    assert general == [name for name in tool_names(parent) if name != "task"]


def test_the_parent_gets_one_tool_message_per_call_with_the_answer_and_what_it_used(
    tmp_path: Path,
) -> None:
    write(tmp_path / "ws" / "notes.txt", "hello\n")
    family = Family(
        tmp_path,
        {
            PARENT: [
                turn(task("t1"), call("r1", "read_file", path="notes.txt"), task("t2")),
                say("done"),
            ],
            EXPLORE: [
                turn(call("c1", "grep", pattern="hello")),
                turn(call("c2", "read_file", path="notes.txt")),
                say("notes.txt line 1 says hello"),
                say("second answer"),
            ],
        },
    )
    family.run()
    last = family.requests_of(PARENT)[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["t1", "r1", "t2"]
    assert family.result("t1") == (
        "notes.txt line 1 says hello\n\n[sub-agent explore: 3 model requests, 2 tool calls]"
    )
    assert (
        family.result("t2") == "second answer\n\n[sub-agent explore: 1 model request, 0 tool calls]"
    )
    # nothing of the child's history reached the parent: not its calls, not its results
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert "pattern" not in str(last)
    # two children, two fresh histories: the second starts again from its own prompt
    assert [len(r["messages"]) for r in family.requests_of(EXPLORE)] == [2, 4, 6, 2]


def test_an_unknown_agent_is_invalid_arguments_listing_the_agents_and_nothing_runs(
    tmp_path: Path,
) -> None:
    family = Family(tmp_path, {PARENT: [turn(task("t1", agent="reviewer")), say("ok")]})
    family.run()
    assert family.result("t1") == (
        "invalid_arguments: there is no agent named 'reviewer', so nothing ran. "
        "Available agents: general, explore."
    )
    assert len(family.model.requests) == 2  # type: ignore[union-attr]
    assert read_audit(tmp_path / "audit.jsonl") == []  # refused in prepare: nobody was asked


def test_extra_fields_and_a_long_description_are_refused(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {PARENT: [turn(task("t1", model="big"), task("t2", description="x" * 81)), say("ok")]},
    )
    family.run()
    assert family.result("t1").startswith("invalid_arguments: task rejected its arguments")
    assert "model: Extra inputs are not permitted" in family.result("t1")
    assert "description: String should have at most 80 characters" in family.result("t2")
    assert family.requests_of(EXPLORE) == []


@pytest.mark.parametrize(
    ("child", "why"),
    [
        ([turn(call(f"c{n}", "glob", pattern="*")) for n in range(10)], "it used all 10 turns"),
        ([response(None)], "EmptyReplyError: The model returned neither text nor tool calls"),
        ([response("cut", finish_reason="length")], "OutputTruncatedError"),
    ],
    ids=["turn limit", "empty reply", "length"],
)
def test_a_failing_child_is_one_line_of_subagent_failed_and_the_parent_goes_on(
    tmp_path: Path, child: list[dict[str, object]], why: str
) -> None:
    family = Family(
        tmp_path, {PARENT: [turn(task("t1")), say("I will look myself")], EXPLORE: child}
    )
    assert family.run() == "I will look myself"
    result = family.result("t1")
    assert result.startswith("subagent_failed: explore ended without an answer after ")
    assert why in result
    assert "\n" not in result


def test_a_provider_error_in_the_child_is_a_failed_task(tmp_path: Path) -> None:
    def fail(request: object) -> dict[str, object]:
        raise ProviderError("the provider said 503 (server)", 503)

    family = Family(tmp_path, {PARENT: [turn(task("t1")), say("carried on")], EXPLORE: [fail]})
    assert family.run() == "carried on"
    assert family.result("t1") == (
        "subagent_failed: explore ended without an answer after 1 model request, 0 tool calls: "
        "ProviderError: the provider said 503 (server). Nothing else of its work reaches you; "
        "try a narrower prompt or another agent, or do it yourself."
    )


def test_a_stop_hook_that_keeps_refusing_fails_the_child_and_sees_which_agent_stops(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    def refuse_children(event: object) -> HookReply:
        assert isinstance(event, dict)
        seen.append(event["agent"])
        if event["agent"] == "main":
            return HookReply()
        return HookReply(Decision.DENY, "not yet")

    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1")), say("parent done")],
            EXPLORE: [say(f"answer {n}") for n in range(MAX_STOP_REFUSALS + 1)],
        },
        hooks=[Hook(HookEvent.STOP, "refuse children", refuse_children)],
    )
    assert family.run() == "parent done"
    assert family.result("t1").startswith("subagent_failed: explore ended without an answer")
    assert "StopRefusedError: the Stop hook refused 4 times: refuse children: not yet" in (
        family.result("t1")
    )
    assert seen == ["explore"] * (MAX_STOP_REFUSALS + 1) + ["main"]


def test_a_deny_rule_holds_inside_the_child(tmp_path: Path) -> None:
    write(tmp_path / "ws" / "secrets" / "key.txt", "token=s3cret\n")
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="general")), say("ok")],
            GENERAL: [
                turn(
                    call("c1", "read_file", path="secrets/key.txt"),
                    call("c2", "shell", command="rm -rf build"),
                    call("c3", "grep", pattern="token"),
                ),
                say("could not"),
            ],
        },
        deny=["read_file(secrets/**)", "shell(rm:*)"],
    )
    family.run()
    results = [
        m["content"] for m in family.requests_of(GENERAL)[-1]["messages"] if m["role"] == "tool"
    ]
    assert results[0].startswith("denied: read_file(secrets/key.txt) is not allowed")
    assert results[1].startswith("denied: shell(rm -rf build) is not allowed")
    assert (
        results[2] == "ok: no lines match 'token' (1 files not searched: a deny rule covers them)."
    )
    assert family.runner.commands == []
    assert "s3cret" not in str(family.model.requests)  # type: ignore[union-attr]


def test_without_a_terminal_the_childs_side_effects_are_denied_and_the_panel_names_it(
    tmp_path: Path,
) -> None:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="general")), say("ok")],
            GENERAL: [
                turn(
                    call("c1", "write_file", path="new.txt", content="x\n"),
                    call("c2", "shell", command="make"),
                ),
                say("denied"),
            ],
        },
        asker=TerminalAsker(console, stdin=io.StringIO(""), interactive=False),
        console=console,
    )
    family.run()
    assert not (family.root / "new.txt").exists()
    assert family.runner.commands == []
    decisions = [
        (a["tool"], a["decision"], a["source"]) for a in read_audit(tmp_path / "audit.jsonl")
    ]
    assert ("write_file", "deny", "human: no terminal") in decisions
    assert ("shell", "deny", "human: no terminal") in decisions
    assert family.printed().count("智能体 agent: general\n工具 tool:") == 2


def test_the_approval_request_names_a_child_and_not_the_parent(tmp_path: Path) -> None:
    asker = ScriptedAsker(["y", "n"])
    family = Family(
        tmp_path,
        {
            PARENT: [
                turn(task("t1", agent="general")),
                turn(call("p1", "shell", command="ls")),
                say("ok"),
            ],
            GENERAL: [turn(call("c1", "shell", command="make")), say("made")],
        },
        asker=asker,
    )
    family.run()
    assert [(r.tool_name, r.agent) for r in asker.requests] == [
        ("shell", "general"),
        ("shell", None),
    ]
    assert family.runner.commands == ["make"]


def test_plan_mode_allows_delegating_and_still_denies_the_childs_writes(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="general")), say("ok")],
            GENERAL: [turn(call("c1", "write_file", path="a.txt", content="a\n")), say("no")],
        },
        mode=Mode.PLAN,
    )
    family.run()
    assert family.result("t1").startswith("no\n\n[sub-agent general:")
    child_result = family.requests_of(GENERAL)[-1]["messages"][-1]["content"]
    assert child_result.startswith("denied: plan mode is read-only")
    assert not (family.root / "a.txt").exists()


def test_a_rule_on_task_names_the_agent(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="general"), task("t2", agent="explore")), say("ok")],
            EXPLORE: [say("found")],
        },
        deny=["task(general)"],
    )
    family.run()
    assert family.result("t1").startswith("denied: task(general) is not allowed")
    assert family.result("t2").startswith("found")
    assert family.requests_of(GENERAL) == []


def test_a_file_the_child_read_is_not_read_for_the_parent(tmp_path: Path) -> None:
    write(tmp_path / "ws" / "a.txt", "one\n")
    family = Family(
        tmp_path,
        {
            PARENT: [
                turn(task("t1")),
                turn(call("e1", "edit_file", path="a.txt", old_string="one", new_string="two")),
                say("ok"),
            ],
            EXPLORE: [turn(call("c1", "read_file", path="a.txt")), say("a.txt says one")],
        },
        mode=Mode.ACCEPT_EDITS,
    )
    family.run()
    assert family.result("e1").startswith("not_read:")
    assert (family.root / "a.txt").read_text(encoding="utf-8") == "one\n"


# --- the family's budget -------------------------------------------------------------------


def test_every_request_of_the_family_counts_and_running_out_ends_the_whole_run(
    tmp_path: Path,
) -> None:
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1")), say("never")],
            EXPLORE: [turn(call(f"c{n}", "glob", pattern="*")) for n in range(5)],
        },
        max_requests=4,
    )
    with pytest.raises(AgentLimitError) as caught:
        family.run()
    assert caught.value.limit == "max_requests"
    assert str(caught.value).startswith(
        "Agent exceeded max_requests=4: the agent and every agent it started"
    )
    assert len(family.requests_of(PARENT)) == 1
    assert len(family.requests_of(EXPLORE)) == 3  # 1 + 3 = 4: the fifth was never sent
    # the run ended inside the task call: no subagent_failed result was written for it
    assert not [m for m in family.history if isinstance(m, ToolMessage)]


def test_the_budget_counts_the_parent_alone_too(tmp_path: Path) -> None:
    family = Family(
        tmp_path,
        {PARENT: [turn(call(f"g{n}", "glob", pattern="*")) for n in range(5)]},
        max_requests=3,
    )
    with pytest.raises(AgentLimitError, match="max_requests=3"):
        family.run()
    assert len(family.requests_of(PARENT)) == 3


def test_a_childs_own_max_turns_is_not_the_familys_budget(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(
        home / ".tutorial" / "agents" / "quick.md",
        "---\nname: quick\ndescription: Two turns only.\nmax_turns: 2\n---\nBe quick.\n",
    )
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", agent="quick")), say("parent answered")],
            "Be quick.": [turn(call(f"c{n}", "glob", pattern="*")) for n in range(5)],
        },
    )
    assert family.run() == "parent answered"
    assert "it used all 2 turns its max_turns allows" in family.result("t1")
    assert len(family.requests_of("Be quick.")) == 2


# --- what the reader sees ------------------------------------------------------------------


def test_the_childs_lines_are_indented_under_a_header_and_its_trace_is_labelled(
    tmp_path: Path,
) -> None:
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=False, trace=True)
    family = Family(
        tmp_path,
        {
            PARENT: [turn(task("t1", description="Find greet")), say("ok")],
            EXPLORE: [turn(call("c1", "glob", pattern="*.py")), say("none")],
        },
        console=console,
    )
    family.run()
    text = family.printed()
    assert "子智能体 sub-agent explore: Find greet\n" in text
    assert (
        "  │ … explore · 等待模型 waiting for scripted-demo (scripted, no network) (turn 1)\n"
        in text
    )
    assert "  │ [glob → ok]\n  │ ok: no files under '.' match '*.py'.\n" in text
    titles = [line for line in text.splitlines() if line.startswith("---")]
    assert titles == [
        "--- request 1 ---",
        "--- response 1 ---",
        "--- explore · request 1 ---",
        "--- explore · response 1 ---",
        "--- explore · request 2 ---",
        "--- explore · response 2 ---",
        "--- request 2 ---",
        "--- response 2 ---",
    ]
    assert "\n[task → ok]\nnone\n" in text  # the parent's result, not indented


def test_ctrl_c_inside_the_child_stops_the_whole_run(tmp_path: Path) -> None:
    def interrupt(request: object) -> dict[str, object]:
        raise KeyboardInterrupt

    family = Family(tmp_path, {PARENT: [turn(task("t1")), say("never")], EXPLORE: [interrupt]})
    with pytest.raises(KeyboardInterrupt):
        family.run()

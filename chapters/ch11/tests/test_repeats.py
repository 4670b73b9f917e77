"""The repeat guard: the same call with the same result, warned at the third, stopped at the
fifth, in the shapes small models really loop in (issue 19)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch07.parallel import ParallelCallPipeline
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch11.guarded_calls import GuardedCalls
from chapters.ch11.repeats import RepeatedCallError, RepeatGuard, call_key
from chapters.ch11.summary import RecoveryLog
from chapters.ch11.tests.composed import Agent11
from chapters.ch11.tests.support import printed, recording_console
from shared.agent import AgentSpec, Run
from shared.calls import CallPipeline
from shared.messages import FunctionCall, Message, ToolCall, ToolMessage
from shared.scripted import ScriptedModel, Step, response, tool_call
from shared.tools import ToolRegistry, ToolResult

PROMPT = "Go."


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return tool_call(call_id, name, json.dumps(arguments))


class Agent:
    """Chapter 2's real file tools in a folder, behind the guarded pipeline."""

    def __init__(
        self, folder: Path, steps: Sequence[Step], *, parallel: bool = False, max_turns: int = 30
    ) -> None:
        self.model = ScriptedModel(steps)
        self.log = RecoveryLog()
        self.console = recording_console()
        inner = ParallelCallPipeline() if parallel else CallPipeline()
        self.spec = AgentSpec(
            model=self.model,
            tools=make_tools(Workspace(folder), runner=FakeRunner()),
            calls=GuardedCalls(inner=inner, repeats=RepeatGuard(log=self.log)),
            console=self.console,
            system_prompt="test",
            max_turns=max_turns,
        )
        self.history: list[Message] = []

    def run(self) -> str:
        return run_agent("go", self.spec, history=self.history)

    def results(self) -> list[str]:
        return [m.content for m in self.history if isinstance(m, ToolMessage)]


def same_write(n: int) -> dict[str, Any]:
    return response(None, [call(f"w{n}", "write_file", path="answer.txt", content="100\n")])


def test_issue_19_the_same_write_answered_no_change_is_stopped(tmp_path: Path) -> None:
    """write_file, then `no_change: answer.txt already has this content.` again and again:
    a result chapter 2 gives before anyone is asked, which no finisher ever sees."""
    agent = Agent(tmp_path, [same_write(n) for n in range(19)] + [response("done")])
    with pytest.raises(RepeatedCallError) as caught:
        agent.run()
    results = agent.results()
    assert results[0].startswith("ok: created answer.txt")
    assert all(r.startswith("no_change: answer.txt already has this content.") for r in results[1:])
    assert len(agent.model.requests) == 6  # one write, then the same no_change five times
    assert "[harness] repeat" not in results[2]  # the second no_change: not yet
    assert "this is the 3rd time that you called write_file" in results[3]
    assert "with nothing new in between" in results[3]
    assert "this is the 4th time" in results[4] and "ends at the 5th" in results[4]
    assert "this is the 5th time" in results[5] and "the run ends now" in results[5]
    line = str(caught.value)
    assert line.startswith("The model made the same call 5 times with nothing new in between")
    assert 'write_file({"path": "answer.txt", "content": "100\\n"})' in line
    assert "--trace" in line and "\n" not in line


def test_issue_19_a_circle_of_two_calls_is_stopped(tmp_path: Path) -> None:
    """Seen with the real small model: read calc.py, the same edit_file (`no_change`), read
    calc.py, ... until the turn limit. Neither call came twice in a row; nothing new came
    between them either."""
    (tmp_path / "calc.py").write_text("def add(x, y):\n    return x + 5\n", encoding="utf-8")
    read = [call(f"r{n}", "read_file", path="calc.py") for n in range(8)]
    edit = [
        call(f"e{n}", "edit_file", path="calc.py", old_string="x + 5", new_string="x + 5")
        for n in range(8)
    ]
    steps = [response(None, [pair[n]]) for n in range(8) for pair in (read, edit)]
    agent = Agent(tmp_path, [*steps, response("never")], max_turns=12)
    with pytest.raises(RepeatedCallError) as caught:  # not AgentLimitError at turn 12
        agent.run()
    # read (new), edit (new: the counts start here), then each comes again: the edit's 5th
    # since it was new is the 10th call
    assert len(agent.model.requests) == 10
    assert "this is the 3rd time that you called edit_file" in agent.results()[5]
    assert str(caught.value).startswith("The model made the same call 5 times")


def test_something_new_in_a_circle_starts_the_counts_again(tmp_path: Path) -> None:
    """The same read between edits that each change the file is work, not a circle."""
    (tmp_path / "n.txt").write_text("0\n", encoding="utf-8")
    (tmp_path / "log.txt").write_text("log\n", encoding="utf-8")
    steps: list[Step] = [response(None, [call("r0", "read_file", path="n.txt")])]
    for n in range(6):
        steps.append(response(None, [call(f"l{n}", "read_file", path="log.txt")]))
        edit = call(f"e{n}", "edit_file", path="n.txt", old_string=f"{n}", new_string=f"{n + 1}")
        steps.append(response(None, [edit]))
    agent = Agent(tmp_path, [*steps, response("done")], max_turns=30)
    assert agent.run() == "done"
    assert not any("[harness]" in r for r in agent.results())


def test_the_history_is_complete_when_the_run_stops(tmp_path: Path) -> None:
    agent = Agent(tmp_path, [same_write(n) for n in range(6)])
    with pytest.raises(RepeatedCallError):
        agent.run()
    calls = [c.id for m in agent.history if m.role == "assistant" for c in m.tool_calls]
    answered = [m.tool_call_id for m in agent.history if isinstance(m, ToolMessage)]
    assert calls == answered  # every call has its one result, also the last


def test_the_same_call_with_the_same_error_is_stopped(tmp_path: Path) -> None:
    steps = [response(None, [call(f"r{n}", "read_file", path="missing.py")]) for n in range(8)]
    agent = Agent(tmp_path, steps)
    with pytest.raises(RepeatedCallError):
        agent.run()
    assert len(agent.model.requests) == 5
    assert "fails the same way every time" in agent.results()[2]


def test_the_same_invalid_arguments_are_stopped(tmp_path: Path) -> None:
    steps = [response(None, [tool_call(f"x{n}", "write_file", '{"path": ')]) for n in range(8)]
    agent = Agent(tmp_path, steps)
    with pytest.raises(RepeatedCallError):
        agent.run()
    assert agent.results()[0].startswith("invalid_arguments:")


def test_the_note_says_what_to_do_instead(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    steps = [response(None, [call(f"r{n}", "read_file", path="a.txt")]) for n in range(3)]
    agent = Agent(tmp_path, [*steps, response("done")])
    assert agent.run() == "done"
    third = agent.results()[2]
    assert "use this result and take the next step, or answer if the task is done" in third
    assert 'harness: the model made read_file({"path": "a.txt"}) 3 times' in printed(agent.console)
    assert agent.log.line() == "恢复 recovery: 1 repeat warning"


def test_polling_until_something_changes_is_not_a_loop(tmp_path: Path) -> None:
    steps: list[Step] = []
    for n in range(8):
        if n == 4:  # something else happens in between: the count starts again
            steps.append(response(None, [call("other", "glob", pattern="*.md")]))
        steps.append(response(None, [call(f"r{n}", "read_file", path="missing.py")]))
    agent = Agent(tmp_path, [*steps, response("done")])
    assert agent.run() == "done"


def test_a_different_result_starts_the_count_again(tmp_path: Path) -> None:
    """The same read, but the file changes in between (something else is at work)."""
    contents = iter(["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"])

    def read_again(request: Any) -> dict[str, Any]:
        (tmp_path / "state.txt").write_text(next(contents), encoding="utf-8")
        return response(None, [call(f"r{len(request['messages'])}", "read_file",
                                    path="state.txt")])  # fmt: skip

    agent = Agent(tmp_path, [read_again] * 10 + [response("done")])
    assert agent.run() == "done"
    assert not any("[harness]" in r for r in agent.results())


def test_the_same_arguments_in_another_order_are_the_same_call() -> None:
    keys = {
        call_key(ToolCall(id=str(n), function=FunctionCall(name="glob", arguments=text)))
        for n, text in enumerate(['{"a": 1, "b": 2}', '{"b": 2, "a": 1}', '{"b":2,"a":1}'])
    }
    assert len(keys) == 1
    assert call_key(ToolCall(id="x", function=FunctionCall(name="glob", arguments="{oops"))) == (
        "glob",
        "{oops",
    )


def test_the_same_call_five_times_in_one_reply_is_stopped_after_the_reply(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n", encoding="utf-8")
    reads = [call(f"r{n}", "read_file", path="a.txt") for n in range(5)]
    agent = Agent(tmp_path, [response(None, reads), response("never")], parallel=True)
    with pytest.raises(RepeatedCallError):
        agent.run()
    assert len(agent.results()) == 5
    assert len(agent.model.requests) == 1


def test_a_stop_in_the_middle_of_a_reply_still_ends_the_run(tmp_path: Path) -> None:
    """The fifth identical call is followed by another call in the same reply."""
    steps = [same_write(n) for n in range(6)]  # a write, then five times no_change
    steps[-1]["choices"][0]["message"]["tool_calls"].append(call("g", "glob", pattern="*"))
    agent = Agent(tmp_path, [*steps, response("never")])
    with pytest.raises(RepeatedCallError):
        agent.run()
    assert agent.results()[-1].startswith("ok:")  # the glob ran and was answered


def test_the_turn_limit_is_not_where_a_loop_ends(tmp_path: Path) -> None:
    agent = Agent(tmp_path, [same_write(n) for n in range(30)], max_turns=20)
    with pytest.raises(RepeatedCallError):  # not AgentLimitError after 20 turns
        agent.run()
    assert len(agent.model.requests) == 6


def test_each_run_has_its_own_count(tmp_path: Path) -> None:
    """A child agent shares the pipeline; its repeats are not its parent's."""
    guard = RepeatGuard()

    spec = AgentSpec(
        model=ScriptedModel([]),
        tools=ToolRegistry(),
        calls=CallPipeline(),
        console=recording_console(),
        system_prompt="",
    )
    one, two = Run(spec, "a", []), Run(spec, "b", [])
    same = ToolCall(id="1", function=FunctionCall(name="t", arguments="{}"))
    for _ in range(2):  # interleaved, each with its own result: one count would start over
        guard.review(one, same, ToolResult.success("ok: a"))
        guard.review(two, same, ToolResult.success("ok: b"))
    assert "3rd time" in guard.review(one, same, ToolResult.success("ok: a")).content
    assert "3rd time" in guard.review(two, same, ToolResult.success("ok: b")).content


def test_a_result_that_names_its_own_call_is_still_the_same_result() -> None:
    """Chapter 8 saves a big result under its call's id, so each repeat names another file;
    the guard compares the results with the id taken out."""
    guard = RepeatGuard()
    spec = AgentSpec(
        model=ScriptedModel([]),
        tools=ToolRegistry(),
        calls=CallPipeline(),
        console=recording_console(),
        system_prompt="",
    )
    run = Run(spec, "a", [])
    reviewed = []
    for n in range(3):
        same = ToolCall(id=f"call_{n}", function=FunctionCall(name="read_file", arguments="{}"))
        saved = f"ok: 51,859 characters, saved in .tutorial/tool-results/call_{n}.txt"
        reviewed.append(guard.review(run, same, ToolResult.success(saved)).content)
    assert "[harness] repeat" not in reviewed[1]
    assert "3rd time" in reviewed[2]


# --- the same call, spelt another way; a file the harness itself appends to ------------------


def stream_call(call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    return calls_stream((call_id, name, arguments))


def test_the_same_file_spelt_five_ways_is_the_same_call(tmp_path: Path) -> None:
    """`./notes.txt` is `notes.txt`, and so is a default spelt out: the calls are compared as
    the tool runs them (validated, the path resolved by the workspace), not as written."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("a note\n", encoding="utf-8")
    (tmp_path / "ws" / "sub").mkdir()
    spellings = [
        '{"path": "notes.txt"}',
        '{"path": "./notes.txt"}',
        '{"path": "sub/../notes.txt"}',
        '{"path": "notes.txt", "offset": 1}',
        '{"path": ".//notes.txt", "limit": 2000}',
    ]
    steps = [stream_call(f"r{n}", "read_file", text) for n, text in enumerate(spellings)]
    agent = Agent11(tmp_path, {PROMPT: [*steps, text_stream("never")]})
    with pytest.raises(RepeatedCallError, match="same call 5 times"):
        agent.run(PROMPT)
    assert "this is the 3rd time that you called read_file" in agent.results()[2]


def test_a_name_with_spaces_around_it_is_the_same_call(tmp_path: Path) -> None:
    """memory_read strips the name it is given: `"tabs "` reads what `"tabs"` reads."""
    names = ["tabs", "tabs ", " tabs", "tabs  ", "\ttabs"]
    steps = [
        stream_call(f"m{n}", "memory_read", json.dumps({"name": name}))
        for n, name in enumerate(names)
    ]
    agent = Agent11(tmp_path, {PROMPT: [*steps, text_stream("never")]})
    with pytest.raises(RepeatedCallError, match="same call 5 times"):
        agent.run(PROMPT)


def test_reading_the_audit_log_again_and_again_is_a_repeat(tmp_path: Path) -> None:
    """Each read adds its own lines to the audit log, so no two results are the same; but
    what changed is only the harness's record of these very reads: nothing new."""
    steps = [
        stream_call(f"a{n}", "read_file", json.dumps({"path": ".tutorial/audit.jsonl"}))
        for n in range(8)
    ]
    agent = Agent11(tmp_path, {PROMPT: [*steps, text_stream("never")]})
    with pytest.raises(RepeatedCallError, match="same call 5 times"):
        agent.run(PROMPT)
    first, second = agent.results()[:2]
    assert first != second  # the log grew between the reads


def test_polling_a_file_someone_else_changes_is_still_not_a_loop(tmp_path: Path) -> None:
    """Only the harness's own folder is read this way: a file outside it that changes
    between reads is news, as before."""
    state = tmp_path / "ws" / "state.txt"
    state.parent.mkdir()
    contents = iter(str(n) for n in range(100))

    def read_again(request: Any) -> list[dict[str, Any]]:
        state.write_text(next(contents), encoding="utf-8")
        return stream_call(f"s{len(request['messages'])}", "read_file", '{"path": "state.txt"}')

    agent = Agent11(tmp_path, {PROMPT: [read_again] * 8 + [text_stream("Done.")]})
    assert agent.run(PROMPT) == "Done."

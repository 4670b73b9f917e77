"""Chapter 13's recipe (chapters/ch13/agent.py, parts.py): the shell that may run a command in the
background, judged as before; a job's end in the first request after it and in no other; a run
that waits for its jobs, and stops them however it ends; the output limit; `cmd &` in the
foreground; the job tools; chapter 11's repeat guard and chapter 9's resumed session with jobs.

The agent is built as the command line builds it (chapters/testing.py) on scripted streams, in
tmp_path/ws; the commands are real processes. Nothing sleeps to wait: a command and the test
hand each other lines through named pipes, the inbox says when a job's end was posted, the
console when the run starts waiting (tests/support.py); every wait has a bound.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from chapters.ch01.loop import run_agent
from chapters.ch01.parts import OUTPUT_LIMIT
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.tests.support import tutorial
from chapters.ch04.hooks import Hook, HookEvent, HookReply, Hooks
from chapters.ch07.scripted_stream import AgentStreams, calls_stream, text_stream
from chapters.ch09.session_log import SessionLog
from chapters.ch11.tests.support import settings
from chapters.ch13.inbox import Delivery
from chapters.ch13.jobs import JOBS_FOLDER, JobManager, JobStatus
from chapters.ch13.parts import PROVIDER_PROFILE
from chapters.ch13.providers import ProviderProfile, delivery_for
from chapters.ch13.run_jobs import RunJobs, notification_of
from chapters.ch13.tests.support import (
    BOUND,
    LINUX,
    Agent13,
    WatchedInbox,
    fifo,
    group_members,
    no_process_left,
    notifications,
    posix_only,
    ready,
    release,
    restore_subreaper,  # noqa: F401 (a fixture)
)
from chapters.ch13.view import JobsLine, jobs_line, jobs_view
from chapters.testing import quiet_console, setup_of
from shared.decisions import Decision
from shared.errors import ProviderError, ProviderErrorKind
from shared.process import detect_shell
from shared.recipe import CONNECT, build_agent, listed_tools

pytestmark = [posix_only, pytest.mark.usefixtures("isolated", "restore_subreaper")]

PROMPT = "Build it in the background."
PYTHON = shlex.quote(sys.executable)
Step = list[dict[str, Any]] | Callable[[Mapping[str, Any]], list[dict[str, Any]]]


def call(call_id: str, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    return calls_stream((call_id, tool, json.dumps(arguments)))


def background(call_id: str, command: str) -> list[dict[str, Any]]:
    return call(call_id, "shell", command=command, run_in_background=True)


def agent13(tmp_path: Path, *steps: Step, **fields: Any) -> Agent13:
    return Agent13(tmp_path, {PROMPT: list(steps)}, **fields)


def tool_results(request: Mapping[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


# --- the recipe -----------------------------------------------------------------------------------


def test_the_recipe_replaces_the_shell_and_adds_the_background_part() -> None:
    result = tutorial("recipe", "--chapter", "13")
    assert result.exit_code == 0, result.stderr
    listing = result.stdout
    assert "  shell             ch13  shell: run a command in the folder, or in the background" in (
        listing
    )
    tools, children = listing.split("\ntools\n")[1].split("\nchildren\n")
    for name in ("shell", "job_output", "job_stop"):
        assert f"    {name}  " in children.split("\noptions\n")[0]  # a child has them too
    assert "  StopJobsAtEnd               background (ch13)  first" in tools
    assert "  DeliverEvents               background (ch13)  before hooks" in tools
    assert "  jobs_view                   background (ch13)" in tools
    assert "DeliverEvents" not in children  # only the main agent delivers
    assert "  --job-output-limit          background (ch13)" in listing
    assert "  --background-wait           background (ch13)" in listing


def test_the_shell_is_chapter_1s_to_the_policy_with_a_timeout_and_a_background(
    tmp_path: Path,
) -> None:
    agent = agent13(
        tmp_path,
        call("c1", "shell", command="echo hi", cwd="/"),
        call("c2", "shell", command="echo hi", timeout=601),
        call("c3", "shell", command="echo hi", timeout=5),
        text_stream("Done."),
    )
    assert agent.run(PROMPT) == "Done."
    shell = next(t for t in agent.requests[0]["tools"] if t["function"]["name"] == "shell")
    parameters = shell["function"]["parameters"]
    assert list(parameters["properties"]) == ["command", "timeout", "run_in_background"]
    assert parameters["required"] == ["command"]
    assert parameters["properties"]["timeout"]["maximum"] == 600
    extra, too_long_a_wait, fine = agent.results()
    assert extra.startswith("invalid_arguments: shell rejected its arguments")
    assert "cwd" in extra
    assert too_long_a_wait.startswith("invalid_arguments:") and "timeout" in too_long_a_wait
    assert fine.startswith("ok: the command `echo hi` ran; exit code 0.\nstdout:\nhi")
    spec = agent.spec
    assert spec is not None
    before = listed_tools(setup_of(12, workspace=Workspace(tmp_path)))["shell"]
    shell_tool = spec.tools["shell"]
    assert (shell_tool.side_effect, shell_tool.key) == (before.side_effect, before.key)
    assert shell_tool.key is not None and shell_tool.key.name == "command"


# --- judged exactly as in the foreground ----------------------------------------------------------


def started_nothing(agent: Agent13) -> bool:
    return not (agent.root / JOBS_FOLDER).exists() or not list(
        (agent.root / JOBS_FOLDER).glob("bg*.log")
    )


def both_ways(command: str) -> list[Step]:
    """The same command in the foreground and in the background, then an answer (twice: a
    job that ran ends, and the model is told)."""
    return [
        call("c1", "shell", command=command),
        call("c2", "shell", command=command, run_in_background=True),
        text_stream("Done."),
        text_stream("Done."),
    ]


def test_a_rule_that_denies_a_command_denies_it_in_the_background_too(tmp_path: Path) -> None:
    agent = agent13(tmp_path, *both_ways("sleep 5"), deny=["shell(sleep:*)"])
    agent.run(PROMPT)
    foreground, in_background = agent.results()
    assert foreground.startswith("denied:") and "shell(sleep:*)" in foreground
    assert in_background == foreground
    assert started_nothing(agent)


def test_a_command_that_asks_asks_the_same_question_in_the_background(tmp_path: Path) -> None:
    asker = ScriptedAsker(["n", "n"])
    agent = agent13(tmp_path, *both_ways("touch made.txt"), mode=None, asker=asker)
    agent.run(PROMPT)
    first, second = asker.requests
    assert first.arguments["command"] == second.arguments["command"] == "touch made.txt"
    assert (first.tool_name, first.reason) == (second.tool_name, second.reason)
    assert second.arguments["run_in_background"] is True
    assert all(r.startswith("denied: the human refused this call") for r in agent.results())
    assert started_nothing(agent) and not (agent.root / "made.txt").exists()


def test_a_command_a_rule_allows_runs_in_the_background_without_asking(tmp_path: Path) -> None:
    asker = ScriptedAsker([])  # asked: it raises
    agent = agent13(
        tmp_path, *both_ways("echo hi"), mode=None, allow=("shell(echo:*)",), asker=asker
    )
    agent.run(PROMPT)
    foreground, in_background = agent.results()
    assert foreground.startswith("ok: the command `echo hi` ran")
    assert in_background.startswith("started background job bg1 (output: .tutorial/jobs/bg1.log)")
    assert asker.requests == []


def test_a_pre_tool_use_hook_judges_the_background_call_as_the_foreground_one(
    tmp_path: Path,
) -> None:
    seen: list[Mapping[str, Any]] = []

    def guard(payload: Mapping[str, Any]) -> HookReply:
        seen.append(payload["input"])
        return HookReply(Decision.DENY, "no builds today")

    hooks = Hooks([Hook(HookEvent.PRE_TOOL_USE, "guard", guard)])
    agent = agent13(tmp_path, *both_ways("make build"), options={"hooks": hooks})
    agent.run(PROMPT)
    foreground, in_background = agent.results()
    assert "no builds today" in foreground and "no builds today" in in_background
    assert foreground.startswith("denied:") and in_background.startswith("denied:")
    assert [s["command"] for s in seen] == ["make build", "make build"]
    assert seen[1]["run_in_background"] is True
    assert started_nothing(agent)


# --- the notification -----------------------------------------------------------------------------


def test_the_call_answers_at_once_and_the_end_is_in_the_first_request_after_it_and_no_other(
    tmp_path: Path,
) -> None:
    gate = fifo(tmp_path, "gate")
    agent: Agent13

    def end_the_job(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)  # the job waited for this: it was running when its call was answered
        agent.inbox.wait_posted("bg1")
        return call("c2", "read_file", path="notes.txt")

    agent = agent13(
        tmp_path,
        background("c1", f"read x < {gate}; echo built"),
        end_the_job,
        text_stream("It built."),
    )
    (agent.root / "notes.txt").write_text("notes\n", encoding="utf-8")
    assert agent.run(PROMPT) == "It built."
    first, second, third = agent.requests
    assert tool_results(second)[0] == (
        "started background job bg1 (output: .tutorial/jobs/bg1.log)\n"
        "It runs while you go on; a message will tell you when it ends. Meanwhile "
        'job_output {"job_id": "bg1"} shows what it printed, job_stop stops it.'
    )
    assert notifications(first) == notifications(second) == []
    [(at, message)] = notifications(third)
    assert at == len(third["messages"]) - 1  # the newest message, after the tool results
    assert message == {
        "role": "user",
        "content": "<task-notification><task-id>bg1</task-id><status>completed</status>"
        "<exit-code>0</exit-code><output-file>.tutorial/jobs/bg1.log</output-file>"
        '<summary>Background command "read x &lt; '
        f'{gate}; echo built" completed (exit code 0)</summary></task-notification>',
    }
    assert third["messages"][at - 1]["role"] == "tool"
    assert "inbox: job bg1 delivered to the model" in agent.printed()
    assert (agent.root / ".tutorial/jobs/bg1.log").read_text() == "built\n"


def test_the_run_waits_when_the_model_answers_while_a_job_runs(tmp_path: Path) -> None:
    gate = fifo(tmp_path, "gate")
    agent: Agent13

    def answer_while_it_runs(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        import threading

        def end_once_waiting() -> None:
            if agent.watching.waits.wait(BOUND):
                release(gate)

        threading.Thread(target=end_once_waiting, daemon=True).start()
        return text_stream("I will wait for the build.")

    agent = agent13(
        tmp_path,
        background("c1", f"read x < {gate}; echo built; exit 3"),
        answer_while_it_runs,
        text_stream("The build failed with exit code 3."),
    )
    assert agent.run(PROMPT) == "The build failed with exit code 3."
    last = agent.requests[-1]["messages"]
    assert [m["role"] for m in last[-2:]] == ["assistant", "user"]
    assert last[-2]["content"] == "I will wait for the build."
    assert "<status>failed</status><exit-code>3</exit-code>" in last[-1]["content"]
    printed = agent.printed()
    assert "… waiting for a background event (at most 600s)" in printed
    assert "inbox: job bg1 came after the answer; asking again" in printed
    assert "stopped" not in printed  # it had ended: nothing to stop


@pytest.mark.parametrize("wait", [0.0, 0.2])
def test_past_the_wait_the_run_ends_with_its_answer_and_stops_the_job(
    tmp_path: Path, wait: float
) -> None:
    started = fifo(tmp_path, "started")
    group: list[int] = []

    def answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        group.append(int(ready(started)))
        return text_stream("The server runs.")

    agent = agent13(
        tmp_path,
        background("c1", f"echo $$ > {started}; sleep 1000 & sleep 1000"),
        answer,
        options={"background_wait": wait},
    )
    began = time.monotonic()
    assert agent.run(PROMPT) == "The server runs."
    assert time.monotonic() - began < BOUND
    printed = agent.printed()
    assert ("waiting for a background event" in printed) is (wait > 0)
    assert "harness: stopped 1 background job as the run ended" in printed
    no_process_left(group[0])
    state = json.loads((agent.root / ".tutorial/jobs/bg1.json").read_text())
    assert (state["status"], state["exit_code"]) == ("killed", -15)


REFUSED = ProviderError("HTTP 401: bad key", 401, kind=ProviderErrorKind.AUTHENTICATION)


@pytest.mark.parametrize("ending", [REFUSED, KeyboardInterrupt()], ids=["provider-error", "ctrl-c"])
def test_however_the_run_ends_no_process_of_its_jobs_is_left(
    tmp_path: Path, ending: BaseException
) -> None:
    started = fifo(tmp_path, "started")
    groups: list[int] = []

    def fail(request: Mapping[str, Any]) -> list[Any]:
        groups.append(int(ready(started)))
        return [ending]

    agent = agent13(
        tmp_path,
        call("c1", "shell", command=f"echo $$ > {started}; sleep 1000", run_in_background=True),
        fail,
    )
    with pytest.raises(type(ending)):
        agent.run(PROMPT)
    assert "harness: stopped 1 background job as the run ended" in agent.printed()
    no_process_left(groups[0])


def test_a_job_past_the_output_limit_is_killed_and_so_is_a_foreground_command(
    tmp_path: Path,
) -> None:
    flood = f"{PYTHON} -c \"[print('x' * 99) for _ in range(40_000)]\""  # 4 MB in lines
    agent = agent13(
        tmp_path,
        background("c1", f"{flood}; sleep 1000"),
        call("c2", "job_output", job_id="bg1", wait_seconds=BOUND),
        call("c3", "shell", command=f"{flood}; sleep 1000"),
        text_stream("Too much."),
        options={"job_output_limit": 100_000},
    )
    assert agent.run(PROMPT) == "Too much."
    _, output, foreground = agent.results()
    assert output.startswith("new output of bg1 since the last read:\n[... ")  # its tail
    shown, note = output.rsplit("\n", 1)  # chapter 8 saved it whole, and shows its last lines
    assert shown.endswith("\nstatus: output_limit, exit code -9")
    assert note.startswith("[harness: this result is 1,000,")
    assert foreground.startswith("output_limit: the command ")
    assert "more than 100,000 bytes" in foreground
    told = agent.requests[2]["messages"][-1]  # the first request after the job's end
    assert told["role"] == "user" and "<status>output_limit</status>" in told["content"]
    assert "its output passed the limit (--job-output-limit)" in told["content"]


@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_a_foreground_command_with_a_background_child_returns_at_once_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    agent = agent13(
        tmp_path,
        call("c1", "shell", command="sleep 1000 & echo $$"),
        text_stream("Started."),
    )
    began = time.monotonic()
    assert agent.run(PROMPT) == "Started."
    assert time.monotonic() - began < 3  # a pipe would hold the call for 5 s (shared/process.py)
    [result] = agent.results()
    assert result.startswith("ok: the command `sleep 1000 & echo $$` ran; exit code 0.")
    group = int(result.split("stdout:\n")[1].split("\n")[0])
    assert "harness: stopped what 1 foreground command left running" in agent.printed()
    assert group_members(group) == []


# --- the job tools --------------------------------------------------------------------------------


def test_an_unknown_job_is_invalid_arguments_naming_the_jobs_there_are(tmp_path: Path) -> None:
    agent = agent13(
        tmp_path,
        call("c1", "job_output", job_id="bg7"),
        background("c2", "true"),
        call("c3", "job_stop", job_id="bg7"),
        text_stream("Done."),
        text_stream("Done."),  # if bg1's end came after the answer, the model is told
        options={"background_wait": 0},
    )
    agent.run(PROMPT)
    before, _, after = agent.results()
    assert before == (
        "invalid_arguments: there is no background job 'bg7'; no background job has been "
        "started; the call did not run."
    )
    assert after == (
        "invalid_arguments: there is no background job 'bg7'; the jobs are: bg1; "
        "the call did not run."
    )


def test_job_output_reads_what_is_new_then_the_status_and_job_stop_stops_the_group(
    tmp_path: Path,
) -> None:
    gate, said = fifo(tmp_path, "gate"), fifo(tmp_path, "said")
    agent: Agent13

    def after_one_line(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        ready(said)
        return call("c2", "job_output", job_id="bg1")

    agent = agent13(
        tmp_path,
        background("c1", f"echo one; echo x > {said}; read x < {gate}; echo two; sleep 1000"),
        after_one_line,
        call("c3", "job_output", job_id="bg1", wait_seconds=0.1),
        call("c4", "job_stop", job_id="bg1"),
        call("c5", "job_stop", job_id="bg1"),
        text_stream("Stopped."),
    )
    assert agent.run(PROMPT) == "Stopped."
    _, first, second, stopped, again = agent.results()
    assert first == "new output of bg1 since the last read:\none\nstatus: running"
    assert second == (
        "new output of bg1 since the last read:\n(none)\n"
        "status: running (still, after waiting 0.1 s)"
    )
    assert stopped == (
        "stopped job bg1: its process group got TERM, then KILL if still there after 2 s; "
        "status: killed, exit code -15"
    )
    assert again == "job bg1 had already ended (killed, exit code -15); nothing was stopped"
    after_the_stop = agent.requests[4]["messages"]  # the first request after it
    assert after_the_stop[-1]["role"] == "user"
    assert "<status>killed</status><exit-code>-15</exit-code>" in after_the_stop[-1]["content"]
    assert "was stopped" in after_the_stop[-1]["content"]


def test_polling_a_job_whose_output_changes_is_not_a_repeat(tmp_path: Path) -> None:
    gate, said = fifo(tmp_path, "gate"), fifo(tmp_path, "said")
    command = (
        f"for i in 1 2 3 4 5 6; do read x < {gate}; echo line $i; echo $i > {said}; done; "
        f"read x < {gate}"
    )
    agent: Agent13

    def poll(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)
        ready(said)  # the line is in the log
        return call("p", "job_output", job_id="bg1")

    def answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)  # the job ends after this request was sent: the model is told after
        agent.inbox.wait_posted("bg1")
        return text_stream("Six lines.")

    agent = agent13(tmp_path, background("c1", command), *[poll] * 6, answer,
                    text_stream("It ended."))  # fmt: skip
    assert agent.run(PROMPT) == "It ended."
    polled = agent.results()[1:]
    assert [r.split("\n")[1] for r in polled] == [f"line {i}" for i in range(1, 7)]
    assert not any("repeat" in r for r in polled)
    assert "repeating" not in agent.printed()


def test_a_childs_job_ends_in_the_main_agents_history(tmp_path: Path) -> None:
    child, gate = "Start the build.", fifo(tmp_path, "gate")
    agent: Agent13

    def end_the_job(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)
        agent.inbox.wait_posted("bg1")
        return call("c2", "glob", pattern="*.txt")

    scripts: dict[str, list[Step]] = {
        PROMPT: [
            call("t1", "task", description="build", prompt=child, agent="general"),
            end_the_job,
            text_stream("Built."),
        ],
        child: [background("k1", f"read x < {gate}; echo built"), text_stream("Started bg1.")],
    }
    agent = Agent13(tmp_path, scripts)
    assert agent.run(PROMPT) == "Built."
    assert agent.model is not None
    parent = agent.model.requests_of(PROMPT)
    assert [len(notifications(r)) for r in parent] == [0, 0, 1]
    assert all(notifications(r) == [] for r in agent.model.requests_of(child))


# --- where the events go --------------------------------------------------------------------------


def test_a_mistral_endpoint_gets_the_events_appended_to_the_last_tool_result(
    tmp_path: Path,
) -> None:
    inbox, gate = WatchedInbox(), fifo(tmp_path, "gate")

    def end_the_job(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)
        inbox.wait_posted("bg1")
        return call("c2", "glob", pattern="*.txt")

    model = AgentStreams(
        {PROMPT: [background("c1", f"read x < {gate}"), end_the_job, text_stream("Built.")]}
    )
    setup = setup_of(13, workspace=Workspace(tmp_path), home=tmp_path / "home", inbox=inbox,
                     mode="bypass", log=SessionLog.new(tmp_path, 13))  # fmt: skip
    setup.get(CONNECT)(settings("https://api.mistral.ai/v1"))  # no request: a client is made
    assert setup.get(PROVIDER_PROFILE).delivery is Delivery.APPEND_TO_TOOL
    assert run_agent(PROMPT, build_agent(setup, model, quiet_console())) == "Built."
    last = model.requests[-1]["messages"]
    assert [m["role"] for m in last[2:]] == ["assistant", "tool", "assistant", "tool"]
    assert last[-1] == {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "ok: no files under '.' match '*.txt'.\n\n<task-notification><task-id>bg1"
        "</task-id><status>completed</status><exit-code>0</exit-code><output-file>"
        '.tutorial/jobs/bg1.log</output-file><summary>Background command "read x &lt; '
        f'{gate}" completed (exit code 0)</summary></task-notification>',
    }


@pytest.mark.parametrize(
    ("url", "environ", "delivery"),
    [
        ("https://api.mistral.ai/v1", {}, Delivery.APPEND_TO_TOOL),
        ("https://codestral.mistral.ai/v1", {}, Delivery.APPEND_TO_TOOL),
        ("https://API.Mistral.AI/v1", {}, Delivery.APPEND_TO_TOOL),
        ("https://notmistral.ai/v1", {}, Delivery.USER_MESSAGE),
        ("https://api.openai.com/v1", {}, Delivery.USER_MESSAGE),
        ("http://127.0.0.1:8080/v1", {"OPENAI_EVENT_DELIVERY": "append"}, Delivery.APPEND_TO_TOOL),
        ("https://api.mistral.ai/v1", {"OPENAI_EVENT_DELIVERY": " User "}, Delivery.USER_MESSAGE),
        ("https://api.mistral.ai/v1", {"OPENAI_EVENT_DELIVERY": " "}, Delivery.APPEND_TO_TOOL),
    ],
)
def test_the_delivery_is_the_hosts_unless_the_setting_says(
    url: str, environ: dict[str, str], delivery: Delivery
) -> None:
    assert delivery_for(url, environ).delivery is delivery


def test_a_given_profile_is_the_one_used(tmp_path: Path) -> None:
    given = ProviderProfile(Delivery.APPEND_TO_TOOL, "a test")
    setup = setup_of(13, workspace=Workspace(tmp_path), provider_profile=given)
    assert setup.get(PROVIDER_PROFILE).delivery is Delivery.APPEND_TO_TOOL


# --- a resumed session ----------------------------------------------------------------------------


def test_a_resumed_session_delivers_no_end_again_and_the_ends_it_missed_once(
    tmp_path: Path,
) -> None:
    gate = fifo(tmp_path, "gate")
    inbox = WatchedInbox()

    def after_the_first_end(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        release(gate)
        inbox.wait_posted("bg1")
        return background("c2", "sleep 1000")

    first: list[Step] = [
        background("c1", f"read x < {gate}"),
        after_the_first_end,
        text_stream("bg2 runs."),
    ]
    agent = Agent13(tmp_path, {PROMPT: first}, inbox=inbox, options={"background_wait": 0})
    assert agent.run(PROMPT) == "bg2 runs."
    assert [len(notifications(r)) for r in agent.requests] == [0, 0, 1]
    # A new agent on the same history, as --resume builds it: its own model and inbox.
    agent.scripts = {PROMPT: [text_stream("Going on.")]}
    agent.inbox, agent.spec = WatchedInbox(), None
    assert agent.run("Go on.") == "Going on."
    [request] = agent.requests
    held = [m["content"] for _, m in notifications(request)]
    assert len(held) == 2  # bg1's once, from the history; bg2's, which came after the end
    assert "<task-id>bg1</task-id><status>completed</status>" in held[0]
    assert "<task-id>bg2</task-id><status>killed</status>" in held[1]
    assert request["messages"][-1]["content"] == held[1]  # the newest, after the prompt
    assert request["messages"][-2] == {"role": "user", "content": "Go on."}


# --- the view -------------------------------------------------------------------------------------


def test_the_line_under_the_spinner_counts_the_jobs_and_shows_the_newest_line(
    tmp_path: Path,
) -> None:
    jobs = RunJobs(tmp_path, detect_shell(), WatchedInbox())
    assert jobs_view(jobs) is None
    said = fifo(tmp_path, "said")
    try:
        jobs.start("sleep 1000")
        jobs.start(f"echo collecting; echo collected 214 items; echo x > {said}; sleep 1000")
        ready(said)
        line = jobs_view(jobs)
        assert isinstance(line, JobsLine)
        assert line.text() == "后台 jobs: 2 running · bg2: collected 214 items"
        jobs.wait_until = jobs.clock() + 588.5
        assert line.text().endswith(" · 9m48s left")
    finally:
        assert jobs.close()[0] == 2
    assert jobs_line([], "", 5.0) == "后台 jobs: 0 running · 5s left"


def test_a_notification_read_back_from_the_file_is_the_same_text(tmp_path: Path) -> None:
    with JobManager(tmp_path, detect_shell()) as manager:
        job = manager.wait(manager.start("exit 2").id, BOUND)
    assert job.status is JobStatus.FAILED
    from chapters.ch13.jobs import read_saved_jobs

    [saved], _ = read_saved_jobs(tmp_path)
    assert notification_of(saved) == notification_of(job)
    assert notification_of(job).text.endswith(
        '<summary>Background command "exit 2" failed (exit code 2)</summary></task-notification>'
    )


def test_the_shell_keeps_chapter_8s_stream_limit(tmp_path: Path) -> None:
    setup = setup_of(13, workspace=Workspace(tmp_path))
    assert setup.get(OUTPUT_LIMIT) == 1_000_000

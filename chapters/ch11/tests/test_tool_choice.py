"""--tools: the agent gets only the tools named, in the registry, the prompt and the request,
its children too; a misspelt name is exit 2 naming the tools there are (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env, sse
from chapters.ch03.tests.support import tutorial
from chapters.ch06.definitions import load_agents
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch11.agent import RECIPE
from chapters.ch11.tests.composed import Agent11
from chapters.ch11.tests.test_cli_and_wire import chapter11
from chapters.ch11.tool_choice import choose_agents, parse_tool_names


@pytest.fixture(autouse=True)
def no_fallback(isolated: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 3's isolation, and no fallback settings from the machine running the tests."""
    for name in ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY"):
        monkeypatch.delenv(name, raising=False)


KNOWN = ("read_file", "edit_file", "grep", "todo_write", "task")
PROMPT = "Fix calc.py."
CHILD_TASK = "Find add."


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def test_no_list_is_every_tool_and_a_list_is_its_names() -> None:
    assert parse_tool_names(None, KNOWN) is None
    assert parse_tool_names(" read_file, grep ", KNOWN) == frozenset({"read_file", "grep"})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("read_file,read_fle", "no tool named 'read_fle'; the tools are: read_file, edit_file"),
        ("read_file,,grep", "list tool names separated by commas"),
        ("", "list tool names separated by commas"),
    ],
    ids=["misspelt", "empty-name", "empty"],
)
def test_a_name_that_is_no_tool_is_an_error_naming_the_tools(text: str, said: str) -> None:
    with pytest.raises(click.BadParameter) as caught:
        parse_tool_names(text, KNOWN)
    assert said in caught.value.message
    assert "todo_write, task" in caught.value.message


def test_the_agent_offers_and_describes_only_the_chosen_tools(tmp_path: Path) -> None:
    chosen = "read_file,edit_file,shell"
    agent = Agent11(tmp_path, {PROMPT: [text_stream("Done.")]}, options={"tool_names": chosen})
    assert agent.run(PROMPT) == "Done."
    (request,) = agent.requests
    assert tool_names(request) == ["read_file", "edit_file", "shell"]
    system = request["messages"][0]["content"]
    assert "todo_write" not in system and "call task" not in system
    assert "edit_file's old_string" in system  # the guidance of a chosen tool is there


def test_without_a_choice_the_agent_has_every_tool(tmp_path: Path) -> None:
    agent = Agent11(tmp_path, {PROMPT: [text_stream("Done.")]})
    agent.run(PROMPT)
    names = tool_names(agent.requests[0])
    assert {"todo_write", "task", "memory_write", "load_skill"} <= set(names)
    assert "call task" in agent.requests[0]["messages"][0]["content"]


def test_a_child_gets_the_chosen_tools_too(tmp_path: Path) -> None:
    delegate = calls_stream(
        (
            "t1",
            "task",
            json.dumps({"description": "find", "prompt": CHILD_TASK, "agent": "general"}),
        )
    )
    scripts = {PROMPT: [delegate, text_stream("Done.")], CHILD_TASK: [text_stream("Line 1.")]}
    chosen = "read_file,edit_file,task"
    agent = Agent11(tmp_path, scripts, options={"tool_names": chosen})
    assert agent.run(PROMPT) == "Done."
    child = next(r for r in agent.requests if r["messages"][1]["content"] == CHILD_TASK)
    assert tool_names(child) == ["read_file", "edit_file"]  # no todo_write, no task


def test_a_misspelt_name_is_exit_2_before_any_request(tmp_path: Path) -> None:
    with ChatServer([]) as server:
        result = chapter11(
            *("--prompt", "hi", "--workspace", str(tmp_path), "--tools", "read_file,reed"),
            env=model_env(server.base_url),
        )
        assert server.completion_requests() == []
    assert result.exit_code == 2
    assert "Invalid value for --tools: no tool named 'reed'; the tools are: read_file," in (
        result.stderr
    )


def test_over_the_wire_the_request_carries_only_the_chosen_tools(tmp_path: Path) -> None:
    with ChatServer([sse(*text_stream("Done."))]) as server:
        result = chapter11(
            *("--prompt", "hi", "--workspace", str(tmp_path), "--tools", "grep,read_file"),
            env=model_env(server.base_url),
        )
        (body,) = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    assert tool_names(body) == ["read_file", "grep"]  # the registry's order, not the option's
    assert "tools: read_file, grep (--tools)" in result.stderr


# --- sub-agents whose definition lists tools that were not chosen ----------------------------


def explore_task(prompt: str = CHILD_TASK) -> list[dict[str, Any]]:
    """A reply that hands `prompt` to the built-in explore agent (read_file, glob, grep)."""
    arguments = {"description": "find", "prompt": prompt, "agent": "explore"}
    return calls_stream(("t1", "task", json.dumps(arguments)))


def test_a_child_gets_the_chosen_tools_its_definition_lists(tmp_path: Path) -> None:
    scripts = {PROMPT: [explore_task(), text_stream("Done.")], CHILD_TASK: [text_stream("L1.")]}
    agent = Agent11(tmp_path, scripts, options={"tool_names": "read_file,task"})
    assert agent.run(PROMPT) == "Done."
    child = next(r for r in agent.requests if r["messages"][1]["content"] == CHILD_TASK)
    assert tool_names(child) == ["read_file"]  # explore's read_file; glob and grep not chosen
    assert agent.results()[0].startswith("L1.")


def test_an_agent_left_with_no_tools_is_not_offered_and_a_call_for_it_is_a_result(
    tmp_path: Path,
) -> None:
    scripts = {PROMPT: [explore_task(), text_stream("Done.")]}
    agent = Agent11(tmp_path, scripts, options={"tool_names": "edit_file,task"})
    assert agent.run(PROMPT) == "Done."
    (result,) = agent.results()
    assert result.startswith("invalid_arguments: there is no agent named 'explore'")
    assert "Available agents: general." in result
    task = next(t for t in agent.requests[0]["tools"] if t["function"]["name"] == "task")
    assert "- explore:" not in task["function"]["description"]
    assert "- general:" in task["function"]["description"]
    assert [r for r in agent.requests if r["messages"][1]["content"] == CHILD_TASK] == []


def test_with_no_agent_left_there_is_no_task_tool(tmp_path: Path) -> None:
    agent = Agent11(tmp_path, {PROMPT: [text_stream("Done.")]}, options={"tool_names": "task"})
    assert agent.run(PROMPT) == "Done."
    assert tool_names(agent.requests[0]) == []
    assert "call task" not in agent.requests[0]["messages"][0]["content"]


def test_over_the_wire_the_start_says_which_agents_lost_which_tools(tmp_path: Path) -> None:
    arguments = {"description": "find", "prompt": CHILD_TASK, "agent": "explore"}
    replies = [
        sse(*calls_stream(("t1", "task", json.dumps(arguments)))),
        sse(*text_stream("Found it in calc.py.")),
        sse(*text_stream("Done.")),
    ]
    with ChatServer(replies) as server:
        result = chapter11(
            *("--prompt", "hi", "--workspace", str(tmp_path), "--tools", "read_file,task"),
            env=model_env(server.base_url),
        )
        child = server.completion_requests()[1].body
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "Done.\n"
    assert tool_names(child) == ["read_file"]
    assert "tools: read_file, task (--tools) · explore without glob, grep" in result.stderr


@pytest.mark.parametrize(
    ("child_tools", "said"),
    [
        (("read_file", "edit_file", "glob", "grep"), ""),
        (("read_file", "edit_file"), "explore without glob, grep"),
        (("edit_file",), "explore left out (it needs one of read_file, glob, grep)"),
        (
            (),
            "general left out (it needs a tool besides task) · explore left out (it needs one "
            "of read_file, glob, grep) · no agent left: task is not offered",
        ),
    ],
    ids=["all-kept", "some-lost", "one-left-out", "none-left"],
)
def test_the_start_line_says_what_the_choice_took_from_each_agent(
    tmp_path: Path, child_tools: tuple[str, ...], said: str
) -> None:
    agents = load_agents(tmp_path, tmp_path, ("read_file", "edit_file", "glob", "grep"))
    assert choose_agents(agents, child_tools).described() == said


def test_tutorial_prompt_shows_the_prompt_a_run_with_tools_sends(tmp_path: Path) -> None:
    prompt_command = RECIPE.subcommands()["prompt"]
    chosen = ("--tools", "grep,read_file")
    with ChatServer([sse(*text_stream("Done."))]) as server:
        result = chapter11(
            *("--prompt", "hi", "--workspace", str(tmp_path), *chosen),
            env=model_env(server.base_url),
        )
        (body,) = [r.body for r in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    sent = body["messages"][0]["content"]
    shown = CliRunner().invoke(prompt_command, ["--workspace", str(tmp_path), *chosen, "--raw"])
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.rsplit("\n", 1)[0] == sent.rsplit("\n", 1)[0]  # the date: its own clock
    everything = CliRunner().invoke(prompt_command, ["--workspace", str(tmp_path)])
    assert "todo_write" in everything.stdout and "todo_write" not in shown.stdout


def test_the_dispatcher_passes_tools_to_chapter_11s_prompt_and_checks_the_names() -> None:
    shown = tutorial("prompt", "--chapter", "11", "--tools", "read_file,edit_file")
    assert shown.exit_code == 0, shown.stderr
    assert "edit_file's old_string" in shown.stdout and "todo_write" not in shown.stdout
    misspelt = tutorial("prompt", "--chapter", "11", "--tools", "read_file,reed")
    assert misspelt.exit_code == 2
    assert "Invalid value for --tools: no tool named 'reed'; the tools are: read_file," in (
        misspelt.stderr
    )


@pytest.mark.parametrize("words", [["prompt"], ["run", "--prompt", "hi"]])
def test_tools_for_a_chapter_without_it_names_the_chapter_that_has_it(words: list[str]) -> None:
    command, *rest = words
    result = tutorial(command, "--chapter", "10", *rest, "--tools", "read_file")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "Unknown argument: --tools. Chapter 10 has no such option; chapter 11 adds it: "
        f"python -m tutorial {command} --chapter 11 --tools ..."
    ]

"""Agent definitions: the front matter subset, each bad file (exit 2 before any request),
where definitions come from and which one wins, and `python -m tutorial agents`."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env
from chapters.ch02.tests.blocking import (
    bounded,
    link_to_dev_zero,
    needs_dev_zero,
    needs_fifo,
    printed_in_bounds,
)
from chapters.ch03.tests.support import tutorial
from chapters.ch06.definitions import MAX_DEFINITION_BYTES, load_agents
from chapters.ch06.frontmatter import FrontMatterError, parse_front_matter
from chapters.ch06.prompt import EXPLORE_PROMPT
from chapters.ch06.tests.support import write
from shared.errors import ConfigError
from shared.scripted import response

pytestmark = pytest.mark.usefixtures("isolated")

TOOLS = ("read_file", "write_file", "edit_file", "glob", "grep", "shell", "todo_write")
GOOD = "---\nname: reviewer\ndescription: Reviews code.\n---\nYou review code.\n"


# --- the front matter ----------------------------------------------------------------------


def test_the_three_ways_to_write_tools_and_the_rest_of_the_subset() -> None:
    text = (
        "\ufeff---\n"
        "# a comment\n"
        "name: reviewer\n"
        "description: 'Reviews code: it''s read-only'  \n"
        'model_note: "tab\\tand quote \\" kept"\n'
        "tools: read_file, grep\n"
        "flow: [read_file, 'grep']\n"
        "block:\n"
        "  - read_file\n"
        "- grep   # a comment\n"
        "empty:\n"
        "hash: C# files # a comment\n"
        "---\n"
        "\n"
        "The body.\n"
        "---\n"
        "Still the body.\n"
    )
    parsed = parse_front_matter(text)
    assert parsed.fields == {
        "name": "reviewer",
        "description": "Reviews code: it's read-only",
        "model_note": 'tab\tand quote " kept',
        "tools": "read_file, grep",
        "flow": ["read_file", "grep"],
        "block": ["read_file", "grep"],
        "empty": "",
        "hash": "C# files",
    }
    assert parsed.body == "The body.\n---\nStill the body."


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "line 1: the file must start with a --- line"),
        ("---\nname: x\n", "the front matter is not closed"),
        ("---\nname x\n---\n", "line 2: expected key: value, got 'name x'"),
        ("---\nname: a\nname: b\n---\n", "line 3: name is given twice"),
        ("---\n  name: a\n---\n", "line 2: an indented line that is not a list item"),
        ("---\n- a\n---\n", "line 2: a list item with no key above it"),
        ("---\ndescription: |\n  two\n---\n", "line 2: multi-line values (| or >)"),
        ("---\ntools: {a: b}\n---\n", "line 2: nested maps"),
        ("---\ntools: [a, b\n---\n", "line 2: a list that starts with [ must end with ]"),
        ("---\ntools: [a,, b]\n---\n", "line 2: an empty item in the list"),
        ('---\nname: "open\n---\n', 'line 2: a string that starts with " must end with "'),
        ("---\nname: 'it's'\n---\n", "line 2: a string that starts with ' must end with '"),
        ("---\nname: &x a\n---\n", "line 2: anchors (&) are not supported"),
    ],
)
def test_what_the_subset_does_not_read_is_an_error_naming_the_line(text: str, problem: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_front_matter(text)
    assert str(caught.value).startswith(problem)


# --- the definitions -----------------------------------------------------------------------


def project(tmp_path: Path, name: str, text: str) -> Path:
    return write(tmp_path / "ws" / ".tutorial" / "agents" / name, text)


def load(tmp_path: Path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    return load_agents(tmp_path / "ws", tmp_path / "home", TOOLS)


def test_a_definition_file_in_claude_codes_format(tmp_path: Path) -> None:
    project(
        tmp_path,
        "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code for bugs.\ntools: read_file, grep\n"
        "max_turns: 5\n---\nYou review code.\nReport file and line.\n",
    )
    catalog = load(tmp_path)
    assert catalog.names == ("general", "explore", "reviewer")
    reviewer = catalog.agents["reviewer"]
    assert reviewer.tools == ("read_file", "grep")
    assert reviewer.max_turns == 5
    assert reviewer.system_prompt == "You review code.\nReport file and line."
    assert reviewer.source == ".tutorial/agents/reviewer.md"
    assert catalog.agents["explore"].system_prompt == EXPLORE_PROMPT
    assert catalog.agents["general"].tools is None and catalog.agents["general"].max_turns == 10


def test_the_project_wins_over_yours_and_yours_over_a_built_in_one(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".tutorial" / "agents" / "r.md", GOOD.replace("code.", "mine."))
    write(tmp_path / "home" / ".tutorial" / "agents" / "e.md", GOOD.replace("reviewer", "explore"))
    project(tmp_path, "r.md", GOOD.replace("code.", "the project's."))
    catalog = load(tmp_path)
    assert catalog.names == ("general", "explore", "reviewer")
    assert catalog.agents["reviewer"].description == "Reviews the project's."
    assert catalog.agents["explore"].source == "~/.tutorial/agents/e.md"
    assert [(d.name, d.source) for d in catalog.hidden] == [
        ("explore", "built in"),
        ("reviewer", "~/.tutorial/agents/r.md"),
    ]


def test_run_in_your_home_folder_your_agents_are_read_once(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".tutorial" / "agents" / "r.md", GOOD)
    catalog = load_agents(tmp_path / "home", tmp_path / "home", TOOLS)
    assert catalog.names == ("general", "explore", "reviewer")
    assert catalog.hidden == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\ndescription: d\n---\nbody", "name is missing"),
        ("---\nname: r\n---\nbody", "description is missing"),
        ("---\nname:\ndescription: d\n---\nbody", "name has no value"),
        ("---\nname: Big Name\ndescription: d\n---\nbody", "name 'Big Name' must be 1 to 40"),
        ("---\nname: main\ndescription: d\n---\nbody", "the name main is the agent you start"),
        ("---\nname: r\ndescription: [a, b]\n---\nbody", "description must be one line of text"),
        ("---\nname: r\ndescription: d\n---\n\n", "no system prompt"),
        ("---\nname: r\ndescription: d\nmodel: big\n---\nb", "unknown field model; the fields"),
        (
            "---\nname: r\ndescription: d\ntools: read_file, nope\n---\nb",
            "tools: no tool named 'nope'",
        ),
        (
            "---\nname: r\ndescription: d\ntools: [read_file, task]\n---\nb",
            "tools: task is not allowed",
        ),
        ("---\nname: r\ndescription: d\ntools: read_file,,grep\n---\nb", "tools has an empty name"),
        ("---\nname: r\ndescription: d\ntools:\n---\nb", "tools has no value"),
        (
            "---\nname: r\ndescription: d\nmax_turns: 0\n---\nb",
            "max_turns must be a positive whole number, not '0'",
        ),
        ("---\nname: r\ndescription: d\nmax_turns: -3\n---\nb", "not '-3'"),
        ("---\nname: r\ndescription: d\nmax_turns: 2.5\n---\nb", "not '2.5'"),
        ("---\nname: r\ndescription: d\nmax_turns: ten\n---\nb", "not 'ten'"),
        ("---\nname: r\ndescription: d\nmax_turns: [1]\n---\nb", "not '[1]'"),
        ("name: r\n", "line 1: the file must start with a --- line"),
    ],
)
def test_every_bad_definition_names_the_file_and_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    project(tmp_path, "bad.md", text)
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value).startswith(".tutorial/agents/bad.md: ")
    assert problem in str(caught.value)


def test_two_files_that_define_one_name_are_an_error(tmp_path: Path) -> None:
    project(tmp_path, "a.md", GOOD)
    project(tmp_path, "b.md", GOOD)
    with pytest.raises(ConfigError, match=r"b\.md: the name reviewer is taken by .*a\.md"):
        load(tmp_path)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = project(tmp_path, "bad.md", "")
    path.write_bytes(b"---\nname: r\xff\n---\n")
    with pytest.raises(ConfigError, match=r"^\.tutorial/agents/bad\.md: cannot be read"):
        load(tmp_path)


def test_tools_may_be_empty_and_other_files_are_ignored(tmp_path: Path) -> None:
    project(tmp_path, "thinker.md", "---\nname: thinker\ndescription: d\ntools: []\n---\nThink.")
    project(tmp_path, "notes.txt", "not a definition")
    catalog = load(tmp_path)
    assert catalog.agents["thinker"].tools == ()
    assert catalog.names == ("general", "explore", "thinker")


@needs_fifo
def test_a_named_pipe_as_a_definition_is_named_not_waited_on(tmp_path: Path) -> None:
    fifo = project(tmp_path, "piped.md", GOOD)
    fifo.unlink()
    os.mkfifo(fifo)
    caught, hung = bounded(fifo, lambda: _config_error(tmp_path))
    assert not hung, "reading the agent definitions blocked on a named pipe"
    assert str(caught) == (
        ".tutorial/agents/piped.md: cannot be read (it is a named pipe (FIFO), not a regular file)"
    )


def _config_error(tmp_path: Path) -> ConfigError | None:
    try:
        load(tmp_path)
    except ConfigError as error:
        return error
    return None


@needs_dev_zero
def test_a_definition_linked_to_dev_zero_is_named_in_bounded_memory(tmp_path: Path) -> None:
    link_to_dev_zero(project(tmp_path, "zero.md", GOOD))
    printed = printed_in_bounds(
        "from chapters.ch06.definitions import load_agents",
        "from shared.errors import ConfigError",
        "try:",
        f"    load_agents(Path({str(tmp_path / 'ws')!r}), Path({str(tmp_path / 'home')!r}), [])",
        "except ConfigError as error:",
        "    print(error)",
    )
    assert printed.startswith(".tutorial/agents/zero.md: cannot be read ("), printed


def test_a_definition_over_its_bound_is_named_having_read_no_more(tmp_path: Path) -> None:
    project(tmp_path, "huge.md", GOOD + "You review code.\n" * 500_000)  # 8 MB
    tracemalloc.start()
    try:
        caught = _config_error(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_DEFINITION_BYTES, f"{peak:,} bytes read"
    assert str(caught) == (
        f".tutorial/agents/huge.md: cannot be read (it is more than {MAX_DEFINITION_BYTES:,} "
        "bytes, the most a definition may hold)"
    )


def test_a_definition_that_links_outside_the_workspace_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside.md", GOOD.replace("You review code.", "SECRET"))
    link = project(tmp_path, "r.md", GOOD)
    link.unlink()
    try:
        link.symlink_to(outside)
    except OSError:  # Windows without the right to make links: nothing to check
        return
    caught = _config_error(tmp_path)
    assert str(caught) == (".tutorial/agents/r.md: cannot be read (it leads outside the workspace)")
    assert "SECRET" not in str(caught)
    inside = write(tmp_path / "ws" / "docs" / "reviewer.md", GOOD)
    link.unlink()
    link.symlink_to(inside)  # a link that stays inside is read, as read_file would
    assert load(tmp_path).agents["reviewer"].source == ".tutorial/agents/r.md"


# --- on the command line -------------------------------------------------------------------


def test_a_bad_definition_stops_the_run_with_exit_2_before_any_request(tmp_path: Path) -> None:
    project(tmp_path, "bad.md", "---\nname: r\ndescription: d\nmax_turns: 0\n---\nb")
    with ChatServer([(200, response("never"))]) as server:
        env = model_env(server)
        result = tutorial(
            "run", "--chapter", "6", "--prompt", "hi", "--workspace", str(tmp_path / "ws"), env=env
        )
        sent = server.completion_requests()
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "配置错误：.tutorial/agents/bad.md: max_turns must be a positive whole number, not '0'"
    )
    assert sent == []
    assert result.stdout == ""


def test_the_agents_command_lists_name_source_tools_and_max_turns(tmp_path: Path) -> None:
    project(
        tmp_path, "r.md", GOOD.replace("---\nYou", "tools: read_file, grep\nmax_turns: 4\n---\nYou")
    )
    write(tmp_path / "home" / ".tutorial" / "agents" / "r.md", GOOD)
    result = tutorial("agents", "--chapter", "6", "--workspace", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "general",
        "  source: built in",
        "  tools: read_file, write_file, edit_file, glob, grep, shell, todo_write "
        "(the parent's, minus task)",
        "  max_turns: 10",
        "  A general-purpose agent with your tools (except task) for a side task of several steps.",
        "explore",
        "  source: built in",
        "  tools: read_file, glob, grep",
        "  max_turns: 10",
        "  Read-only (read_file, glob, grep): finds where things are in the workspace and "
        "reports file paths and line numbers.",
        "reviewer",
        "  source: .tutorial/agents/r.md",
        "  tools: read_file, grep",
        "  max_turns: 4",
        "  Reviews code.",
        "(not used: reviewer from ~/.tutorial/agents/r.md; .tutorial/agents/r.md has that name)",
    ]


def test_the_agents_command_fails_like_the_run_on_a_bad_file_and_needs_a_chapter(
    tmp_path: Path,
) -> None:
    project(tmp_path, "bad.md", "---\nname: r\n---\nb")
    result = tutorial("agents", "--chapter", "6", "--workspace", str(tmp_path / "ws"))
    assert result.exit_code == 2
    assert "配置错误：.tutorial/agents/bad.md: description is missing" in result.stderr
    early = tutorial("agents", "--chapter", "5")
    assert early.exit_code == 2
    assert "Chapter 5 has no sub-agents; use chapter 6 or later" in early.stderr
    missing = tutorial("agents")
    assert missing.exit_code == 2 and "--chapter is required" in missing.stderr

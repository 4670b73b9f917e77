"""What a search from the root skips, and how to reach it anyway.

glob and grep walk the workspace to answer "where is X?". Two kinds of file are
not the project's: the agent's own folder, `.tutorial/` (logs of its runs, which
quote every search it made, so a grep finds itself), and what the project's
`.gitignore` files ignore (build output, virtual environments). A search from
the root skips both; a folder named as `path` (or at the start of a glob
pattern) is searched, and read_file opens any file in them by its path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch01.tests.cli_support import model_env
from chapters.ch02.tests.helpers import file_tools, run
from chapters.ch02.workspace import HARNESS_FOLDER, Workspace
from shared.scripted import response, tool_call
from tutorial.catalog import CHAPTERS, find_chapter
from tutorial.cli import cli

NEEDLE = "NEEDLE_7"
OWN_FILES = [  # what the agent keeps about itself, each quoting the search
    f"{HARNESS_FOLDER}/audit.jsonl",
    f"{HARNESS_FOLDER}/sessions/20250101-abc.jsonl",
    f"{HARNESS_FOLDER}/transcripts/run-1.jsonl",
    f"{HARNESS_FOLDER}/tool-results/call_1.txt",
]


def make(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def listed(content: str) -> set[str]:
    """The paths a glob or grep result names (grep: the part before `:line:`)."""
    return {line.split(":", 1)[0] for line in content.splitlines()[1:]}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make(tmp_path, {"README.md": f"{NEEDLE}\n", "src/app.txt": f"{NEEDLE}\n"})
    make(tmp_path, {name: f'{{"pattern": "{NEEDLE}"}}\n' for name in OWN_FILES})
    return tmp_path


def test_grep_and_glob_from_the_root_skip_the_agents_own_folder(root: Path) -> None:
    tools = file_tools(root)
    for path in [".", "./", str(root)]:
        grep = run(tools, "grep", pattern=NEEDLE, path=path).content
        assert listed(grep) == {"README.md", "src/app.txt"}, grep
        glob = run(tools, "glob", pattern="**/*", path=path).content
        assert listed(glob) == {"README.md", "src/app.txt"}, glob
    assert HARNESS_FOLDER not in run(tools, "grep", pattern=NEEDLE, glob="*.jsonl").content


def test_the_same_grep_twice_gives_the_same_result_while_the_log_grows(root: Path) -> None:
    tools = file_tools(root)
    first = run(tools, "grep", pattern=NEEDLE).content
    with (root / OWN_FILES[1]).open("a", encoding="utf-8") as log:
        log.write(f'{{"role": "tool", "content": "{first}"}}\n')  # the run logs its result
    assert run(tools, "grep", pattern=NEEDLE).content == first


def test_the_agents_own_folder_named_as_the_path_is_searched(root: Path) -> None:
    tools = file_tools(root)
    grep = run(tools, "grep", pattern=NEEDLE, path=HARNESS_FOLDER).content
    assert listed(grep) == set(OWN_FILES)
    glob = run(tools, "glob", pattern="**/*.jsonl", path=f"{HARNESS_FOLDER}/sessions").content
    assert listed(glob) == {OWN_FILES[1]}
    grep = run(tools, "grep", pattern=NEEDLE, path=OWN_FILES[0]).content
    assert listed(grep) == {OWN_FILES[0]}


def test_a_glob_pattern_that_starts_with_the_folder_names_it(root: Path) -> None:
    tools = file_tools(root)
    glob = run(tools, "glob", pattern=f"{HARNESS_FOLDER}/tool-results/*.txt").content
    assert listed(glob) == {OWN_FILES[3]}
    glob = run(tools, "glob", pattern=f"{HARNESS_FOLDER}/**/*.jsonl").content
    assert listed(glob) == {OWN_FILES[0], OWN_FILES[1], OWN_FILES[2]}


def test_read_file_opens_a_file_in_the_agents_own_folder(root: Path) -> None:
    tools = file_tools(root)
    for name in OWN_FILES:
        result = run(tools, "read_file", path=name)
        assert result.keyword == "ok", result.content
        assert NEEDLE in result.content


def test_the_tool_descriptions_say_what_is_skipped_and_how_to_search_it(tmp_path: Path) -> None:
    tools = file_tools(tmp_path)
    for name in ["glob", "grep"]:
        description = tools.snapshot().get(name).description  # type: ignore[union-attr]
        assert HARNESS_FOLDER in description and ".gitignore" in description
        assert "as path" in description


# --- .gitignore ------------------------------------------------------------------------------


@pytest.fixture
def ignoring(tmp_path: Path) -> Path:
    make(
        tmp_path,
        {
            ".gitignore": "# build output\nbuild/\n*.log\n!keep.log\n/top.txt\n",
            "build/out.txt": "hit\n",
            "src/build/deep.txt": "hit\n",  # build/ matches at any depth
            "run.log": "hit\n",
            "keep.log": "hit\n",
            "top.txt": "hit\n",
            "src/top.txt": "hit\n",  # /top.txt is anchored to the root
            "src/.gitignore": "generated.txt\n",
            "src/generated.txt": "hit\n",
            "generated.txt": "hit\n",  # src/.gitignore rules only below src
            "src/main.txt": "hit\n",
        },
    )
    return tmp_path


KEPT = {".gitignore", "src/.gitignore", "keep.log", "src/top.txt", "generated.txt", "src/main.txt"}


def test_grep_and_glob_skip_what_gitignore_files_ignore(ignoring: Path) -> None:
    tools = file_tools(ignoring)
    assert listed(run(tools, "glob", pattern="**/*").content) == KEPT
    grep = run(tools, "grep", pattern="hit").content
    assert listed(grep) == KEPT - {".gitignore", "src/.gitignore"}
    assert listed(run(tools, "grep", pattern="hit", path="src").content) == {
        "src/top.txt",
        "src/main.txt",
    }


def test_an_ignored_folder_named_as_the_path_is_searched(ignoring: Path) -> None:
    tools = file_tools(ignoring)
    assert listed(run(tools, "grep", pattern="hit", path="build").content) == {"build/out.txt"}
    assert listed(run(tools, "glob", pattern="*", path="build").content) == {"build/out.txt"}
    assert listed(run(tools, "glob", pattern="build/*").content) == {"build/out.txt"}
    assert listed(run(tools, "grep", pattern="hit", path="run.log").content) == {"run.log"}
    assert run(tools, "read_file", path="build/out.txt").keyword == "ok"


def test_a_gitignore_is_read_once_per_search_not_once_per_file(
    ignoring: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(ignoring, {f"src/many/f{n}.txt": "hit\n" for n in range(50)})
    workspace = Workspace(ignoring)
    reads: list[str] = []
    import chapters.ch02.ignore_files as ignore_files

    original = ignore_files.read_ignore_file

    def counting(path: str) -> list[str]:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(ignore_files, "read_ignore_file", counting)
    assert len(list(workspace.walk(workspace.root))) == len(KEPT) + 50
    assert sorted(Path(path).relative_to(ignoring).as_posix() for path in reads) == [
        ".gitignore",
        "src/.gitignore",
    ]


# --- every chapter from this one on ---------------------------------------------------------

LATER = [chapter.number for chapter in CHAPTERS if chapter.ready and chapter.number >= 2]


def calls(*named: tuple[str, str, dict[str, str]]) -> dict[str, Any]:
    return response(None, [tool_call(id_, name, json.dumps(args)) for id_, name, args in named])


@pytest.mark.parametrize("number", LATER)
def test_every_chapters_agent_searches_past_its_own_logs_and_can_still_read_them(
    number: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole run through the command line, over the wire: the chapter writes its own
    logs (audit, transcript, session) as it goes, each quoting the search; a file an earlier
    run saved is in `.tutorial/` too. The same grep twice sees the same project."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    make(workspace, {"README.md": f"{NEEDLE}\n", OWN_FILES[3]: f"{NEEDLE} (an earlier run)\n"})
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    grep = {"pattern": NEEDLE}
    replies = [
        (200, calls(("g1", "grep", grep), ("l1", "glob", {"pattern": "**/*"}))),
        (
            200,
            calls(
                ("g2", "grep", grep),
                ("g3", "grep", {**grep, "path": HARNESS_FOLDER}),
                ("l2", "glob", {"pattern": f"{HARNESS_FOLDER}/tool-results/*"}),
                ("r1", "read_file", {"path": OWN_FILES[3]}),
            ),
        ),
        (200, response("README.md has one line.")),
    ]
    with ChatServer(replies) as server:
        env = model_env(server)
        args = ["run", "--chapter", str(number), "--workspace", str(workspace)]
        args += ["--prompt", f"How many lines have {NEEDLE} in them?"]
        args += ["--no-stream"] if "--no-stream" in _options(number) else []
        result = CliRunner().invoke(cli, args, env=env)
        bodies = [request.body for request in server.completion_requests()]
    assert result.exit_code == 0, result.stderr
    said = {
        message["tool_call_id"]: message["content"]
        for message in bodies[-1]["messages"]
        if message["role"] == "tool"
    }
    assert said["g1"] == said["g2"] == f"ok: 1 matching lines\nREADME.md:1: {NEEDLE}"
    assert HARNESS_FOLDER not in said["l1"] and "README.md" in said["l1"]
    assert f"{OWN_FILES[3]}:1: {NEEDLE}" in said["g3"]
    assert said["l2"].splitlines()[1:] == [OWN_FILES[3]]
    assert said["r1"].startswith(f"ok: {OWN_FILES[3]}, line 1 of 1"), said["r1"]


def _options(number: int) -> set[str]:
    command = find_chapter(number).command()
    assert command is not None
    return {option for parameter in command.params for option in parameter.opts}

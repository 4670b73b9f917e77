"""The command line, through click's test runner: the errors a reader will hit, word for word."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result

import chapters.ch01.loop as loop
from chapters.ch01.agent import RECIPE
from chapters.ch01.tests.cli_support import command_line, tutorial
from shared import approval
from tutorial.catalog import CHAPTERS

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run in an empty folder with no provider settings, like a fresh checkout."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)


chapter = command_line(RECIPE.command(), "python -m chapters.ch01")


def first_line(result: Result) -> str:
    return result.stderr.splitlines()[0]


def assert_no_traceback(result: Result) -> None:
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("args", [[], ["-h"], ["--help"]])
def test_no_subcommand_shows_the_help(args: list[str]) -> None:
    result = tutorial(*args)
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: python -m tutorial")
    assert "python -m tutorial run --chapter 1 --demo" in result.stdout


@pytest.mark.parametrize(
    "args", [["--chapter", "1", "--prompt", "x"], ["--prompt", "x"], ["--demo"]]
)
def test_options_without_a_subcommand_say_run_is_expected(args: list[str]) -> None:
    result = tutorial(*args)
    assert result.exit_code == 2
    assert first_line(result).startswith("Expected command: run")
    assert "python -m tutorial run --chapter 1" in first_line(result)


def test_unknown_subcommand() -> None:
    result = tutorial("rn")
    assert result.exit_code == 2
    assert first_line(result).startswith("Unknown command: rn. Expected command: run")


@pytest.mark.parametrize("args", [["run"], ["run", "--prompt", "hi"], ["run", "--max-turns", "3"]])
def test_chapter_and_prompt_are_both_required(args: list[str]) -> None:
    result = tutorial(*args)
    assert result.exit_code == 2
    assert first_line(result).startswith("Both --chapter and --prompt are required")
    assert "--chapter is missing" in first_line(result)
    assert_no_traceback(result)


def test_a_missing_prompt_is_named_and_demo_is_offered() -> None:
    result = tutorial("run", "--chapter", "1")
    assert result.exit_code == 2
    assert (
        first_line(result)
        == '--prompt is missing: add --prompt "...", or --demo to replay the chapter\'s exchange'
    )
    assert_no_traceback(result)


@pytest.mark.parametrize(
    "args",
    [["run", "-h"], ["run", "--chapter", "1", "-h"], ["list", "-h"], ["diff", "-h"]],
)
def test_dash_h_is_help_at_every_level(args: list[str]) -> None:
    result = tutorial(*args)
    assert result.exit_code == 0, result.stderr
    assert "Usage:" in result.stdout


def test_dash_h_is_help_for_a_chapter_script() -> None:
    result = chapter("-h")
    assert result.exit_code == 0
    assert "--max-turns" in result.stdout


@pytest.mark.parametrize("runner", ["tutorial", "chapter"])
def test_a_mistyped_option_is_named(runner: str) -> None:
    if runner == "tutorial":
        result = tutorial("run", "--chapter", "1", "--promt", "hi")
    else:
        result = chapter("--promt", "hi")
    assert result.exit_code == 2
    assert first_line(result) == "Unknown argument: --promt"
    assert "Did you mean --prompt?" in result.stderr


def test_an_unknown_chapter_is_named() -> None:
    result = tutorial("run", "--chapter", "99", "--prompt", "hi")
    assert result.exit_code == 2
    assert first_line(result).startswith("Unknown chapter: 99.")
    assert "chapters you can run: 1" in first_line(result)


def test_a_planned_chapter_says_it_is_not_written_yet() -> None:
    planned = next(chapter for chapter in CHAPTERS if not chapter.ready)
    result = tutorial("run", "--chapter", str(planned.number), "--prompt", "hi")
    assert result.exit_code == 2
    said = f"Chapter {planned.number} ({planned.title}) is planned but not written yet"
    assert said in result.stderr


def test_max_turns_must_be_positive() -> None:
    result = tutorial("run", "--chapter", "1", "--prompt", "hi", "--max-turns", "0")
    assert result.exit_code == 2
    assert "--max-turns" in first_line(result)


def test_missing_settings_are_a_config_error_with_exit_2() -> None:
    result = tutorial("run", "--chapter", "1", "--prompt", "hi")
    assert result.exit_code == 2
    assert result.stderr.startswith("配置错误：Missing required settings: OPENAI_BASE_URL,")
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
    assert_no_traceback(result)


def test_demo_without_a_terminal_denies_and_still_answers() -> None:
    result = tutorial("run", "--chapter", "1", "--demo")
    assert result.exit_code == 0
    assert "无交互输入，默认拒绝。" in result.stderr
    assert result.stdout.startswith("[scripted] ")  # labelled as scripted where it speaks
    assert "denied" in result.stdout
    assert "scripted" in result.stderr  # and in the status line naming the model


def test_demo_approved_runs_the_real_command_and_quotes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approval, "is_terminal", lambda stream: True)
    result = tutorial("run", "--chapter", "1", "--demo", stdin="y\n")
    assert result.exit_code == 0, result.stderr
    assert "允许本次调用？[y/N]" in result.stderr
    assert result.stdout.startswith("[scripted] ")
    assert "exit code 0" in result.stdout and "\n42\n" in result.stdout


def test_both_entry_points_run_the_same_agent() -> None:
    via_dispatcher = tutorial("run", "--chapter", "1", "--demo")
    via_chapter = chapter("--demo")
    assert via_dispatcher.exit_code == via_chapter.exit_code == 0
    assert via_dispatcher.stdout == via_chapter.stdout


def test_an_agent_failure_exits_1_with_one_line() -> None:
    result = tutorial("run", "--chapter", "1", "--demo", "--max-turns", "1")
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("AgentLimitError: Agent exceeded max_turns=1: ")
    assert "Raise --max-turns" in last  # the fix is in the line
    assert_no_traceback(result)


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "run_agent", interrupted)
    result = tutorial("run", "--chapter", "1", "--demo")
    assert result.exit_code == 130
    assert "interrupted" in result.stderr
    assert_no_traceback(result)


def test_trace_prints_each_request_and_response_as_json() -> None:
    result = tutorial("run", "--chapter", "1", "--demo", "--trace")
    assert result.exit_code == 0
    blocks = {}
    for title in ("request 1", "response 1", "request 2", "response 2"):
        after = result.stderr.split(f"--- {title} ---\n", 1)[1]
        decoder = json.JSONDecoder()
        blocks[title], _ = decoder.raw_decode(after)
    assert [m["role"] for m in blocks["request 2"]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert blocks["response 1"]["choices"][0]["message"]["content"] is None
    assert "--- " not in result.stdout  # the trace stays off stdout


def test_list_shows_every_chapter() -> None:
    result = tutorial("list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 20
    assert lines[0].split() == ["1", "ready", "the", "agent", "loop", "·", "智能体循环"]
    assert "planned" in lines[-1]


def test_diff_of_chapter_1_shows_its_own_files_as_added() -> None:
    result = tutorial("diff", "--chapter", "1")
    assert result.exit_code == 0
    assert "--- /dev/null\n+++ chapters/ch01/loop.py" in result.stdout
    assert "+def run_agent(" in result.stdout
    assert "+++ chapters/ch01/tests" not in result.stdout  # tests are listed, not shown
    assert "test_loop.py" in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "tutorial", "--help"],
        ["-m", "tutorial", "run", "--chapter", "1", "--prompt", "hi"],
        ["-m", "chapters.ch01", "--prompt", "hi"],
    ],
)
def test_help_and_config_errors_do_not_import_openai(argv: list[str], tmp_path: Path) -> None:
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['x', *{argv[2:]!r}]\n"
        "try:\n"
        f"    runpy.run_module({argv[1]!r}, run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    print('RESULT', exit.code, 'openai' in sys.modules)\n"
    )
    env = {"PATH": "", "PYTHONPATH": str(REPO), "PYTHONUTF8": "1"}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    marker, exit_code, imported = done.stdout.splitlines()[-1].split()
    assert marker == "RESULT", done.stdout + done.stderr
    assert exit_code in ("0", "2")  # help, or the config error
    assert imported == "False"


def test_ctrl_c_at_the_approval_prompt_exits_130_without_another_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(approval, "is_terminal", lambda stream: True)

    def interrupted(self: object, prompt: str, stdin: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("shared.console.Console.ask", interrupted)
    result = tutorial("run", "--chapter", "1", "--demo", "--trace")
    assert result.exit_code == 130
    assert "interrupted" in result.stderr
    assert "--- request 2 ---" not in result.stderr  # it stopped; it did not ask the model again
    assert_no_traceback(result)


def test_a_very_long_output_line_is_cut_on_the_console_but_reaches_the_model_whole() -> None:
    from chapters.ch01.tests.harness import Harness
    from shared.process import CommandOutcome
    from shared.scripted import response, tool_call

    line = "x" * 10_000_000
    h = Harness(
        steps=[
            response(None, [tool_call("c1", "shell", '{"command": "cat big"}')]),
            response("ok"),
        ],
        answers=[True],
        outcomes=[CommandOutcome(0, line + "\n", "")],
    )
    h.run()
    assert line in h.tool_messages()[0].content
    shown = h.console_text()
    assert len(shown) < 5_000
    assert "more characters sent to the model" in shown


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "1", "--demo"], "Unknown argument: 1. The chapter is an option: --chapter 1"),
        (
            ["run", "-chapter", "1"],
            "Unknown argument: -chapter. Options have two dashes: --chapter 1",
        ),
        (
            ["run", "--chapter", "1", "-demo"],
            "Unknown argument: -demo. Options have two dashes: --demo",
        ),
    ],
    ids=["bare-number", "one-dash-chapter", "one-dash-demo"],
)
def test_a_stray_word_is_named_with_its_fix_in_one_line(args: list[str], said: str) -> None:
    result = tutorial(*args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [said]
    assert_no_traceback(result)


def test_a_one_dash_option_is_named_by_a_chapter_script_too() -> None:
    result = chapter("-demo")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "Unknown argument: -demo. Options have two dashes: --demo"
    ]


def test_a_dotenv_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes("OPENAI_MODEL=qwen # 模型\n".encode("gbk"))
    result = tutorial("run", "--chapter", "1", "--prompt", "hi")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("配置错误：") and "is not UTF-8 text" in line
    assert_no_traceback(result)

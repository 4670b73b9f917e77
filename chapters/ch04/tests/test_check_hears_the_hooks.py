"""`permissions check` from this chapter on hears the PreToolUse hooks a run would hear.

A check that asked only the policy said `allow` (or `ask`) where a run's PreToolUse
hook denies. The hooks are the user's own programs, so the check says that it ran
them, and `--no-hooks` leaves them out (and says so). Chapter 3's check, which has no
hooks, prints what it always printed. The same holds for every later chapter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch03.tests.support import tutorial, write_json
from chapters.ch04.demo import python_command
from tutorial.catalog import CHAPTERS

pytestmark = pytest.mark.usefixtures("isolated")

WITH_HOOKS = [chapter.number for chapter in CHAPTERS if chapter.ready and chapter.number >= 4]
NO_RULE = "no rule matched, and mode default does not allow execute calls"
SAID = "no shell in this workspace"


def check(*args: str) -> Result:
    return tutorial("permissions", "check", *args)


def deny_shell_hook(tmp_path: Path, answer: str = "") -> Path:
    """A workspace whose PreToolUse hook `no-shell` denies every shell call (exit 2).

    The hook writes the event it read to `seen.json` beside the workspace."""
    workspace = tmp_path / "ws"
    seen = tmp_path / "seen.json"
    script = tmp_path / "no_shell.py"
    script.write_text(
        "import sys\n"
        f"open({str(seen)!r}, 'w', encoding='utf-8').write(sys.stdin.read())\n"
        + (f"print({answer!r})\n" if answer else f"sys.stderr.write({SAID!r}); sys.exit(2)\n"),
        encoding="utf-8",
    )
    hook = {"name": "no-shell", "matcher": "shell", "command": python_command(script)}
    write_json(workspace / PROJECT_SETTINGS, {"hooks": {"PreToolUse": [hook]}})
    return workspace


def seen_event(tmp_path: Path) -> dict[str, Any] | None:
    seen = tmp_path / "seen.json"
    return json.loads(seen.read_text(encoding="utf-8")) if seen.exists() else None


@pytest.mark.parametrize("chapter", WITH_HOOKS)
def test_check_reports_the_deny_of_a_pre_tool_use_hook_and_names_it(
    tmp_path: Path, chapter: int
) -> None:
    workspace = deny_shell_hook(tmp_path)
    result = check("--chapter", str(chapter), "--workspace", str(workspace), "shell(ls -la)")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "deny: shell(ls -la)",
        f"  because: PreToolUse hook no-shell: {SAID}",
        "  mode: default",
        "  PreToolUse hooks consulted: no-shell (your own programs: they ran now, with the "
        'input {"command": "ls -la"}; --no-hooks leaves them out)',
    ]
    event = seen_event(tmp_path)
    assert event is not None
    assert (event["event"], event["tool"], event["input"]) == (
        "PreToolUse",
        "shell",
        {"command": "ls -la"},
    )


@pytest.mark.parametrize("chapter", WITH_HOOKS)
def test_with_no_hooks_check_reports_the_policy_and_says_the_hooks_were_not_consulted(
    tmp_path: Path, chapter: int
) -> None:
    workspace = deny_shell_hook(tmp_path)
    result = check(
        "--chapter", str(chapter), "--workspace", str(workspace), "shell(ls -la)", "--no-hooks"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ask: shell(ls -la)",
        f"  because: {NO_RULE}",
        "  mode: default",
        "  PreToolUse hooks: not consulted (--no-hooks); a run would hear no-shell before "
        "this decision",
    ]
    assert seen_event(tmp_path) is None  # the hook did not run


def test_a_hook_that_does_not_match_the_tool_is_not_run(tmp_path: Path) -> None:
    workspace = deny_shell_hook(tmp_path)
    result = check("--chapter", "4", "--workspace", str(workspace), "read_file(a.txt)")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "allow: read_file(a.txt)",
        "  because: mode default allows read calls",
        "  mode: default",
        "  PreToolUse hooks consulted: none matches read_file",
    ]
    assert seen_event(tmp_path) is None


def test_a_hooks_allow_enters_the_policy_where_a_run_hears_it(tmp_path: Path) -> None:
    workspace = deny_shell_hook(tmp_path, answer='{"decision": "allow", "reason": "fine"}')
    allowed = check("--chapter", "4", "--workspace", str(workspace), "shell(ls)")
    assert allowed.stdout.splitlines()[:2] == [
        "allow: shell(ls)",
        "  because: PreToolUse hook no-shell: fine",
    ]
    denied = check(
        "--chapter", "4", "--workspace", str(workspace), "shell(ls)", "--deny", "shell(ls)"
    )
    assert denied.stdout.splitlines()[:2] == [
        "deny: shell(ls)",
        "  because: rule shell(ls) from --deny",
    ]


def test_chapter_3_has_no_hooks_and_prints_what_it_always_printed(tmp_path: Path) -> None:
    workspace = deny_shell_hook(tmp_path)
    result = check("--chapter", "3", "--workspace", str(workspace), "shell(ls -la)")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "ask: shell(ls -la)",
        f"  because: {NO_RULE}",
        "  mode: default",
    ]
    assert seen_event(tmp_path) is None
    refused = check("--chapter", "3", "shell(ls)", "--no-hooks")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        "Unknown argument: --no-hooks. Chapter 3 has no such option; chapter 4 adds it: "
        "python -m tutorial permissions check --chapter 4 --no-hooks ..."
    ]


def test_malformed_hooks_are_a_settings_error_in_the_check_too(tmp_path: Path) -> None:
    write_json(
        tmp_path / PROJECT_SETTINGS,
        {"hooks": {"PreToolUse": [{"matcher": "(shell", "command": "x"}]}},
    )
    for extra in ([], ["--no-hooks"]):
        result = check("--chapter", "4", "shell(ls)", *extra)
        assert result.exit_code == 2
        assert result.stderr.startswith(
            "配置错误：.tutorial/settings.json: hooks.PreToolUse.0.matcher: "
        )


def test_the_check_help_offers_no_hooks_from_chapter_4_on() -> None:
    result = check("--chapter", "4", "--help")
    assert result.exit_code == 0, result.stderr
    assert "--no-hooks" in result.stdout

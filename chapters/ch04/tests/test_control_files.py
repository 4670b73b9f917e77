"""The programs a hook runs are control files too, and `hooks` is a key the settings may hold.

A hook runs unasked, in every mode: an agent that could rewrite `hooks/guard.py`
would choose what the next run's guard lets through. So a file a hook's command
names is asked about like the settings themselves (chapters/ch03/control.py),
in this chapter and every later one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch03.audit import AUDIT_FILE
from chapters.ch03.settings import PROJECT_SETTINGS
from chapters.ch03.tests.support import (
    RunChapter,
    TaskModel,
    call,
    read_audit,
    ready_from,
    task,
    tutorial,
    write_json,
)
from chapters.ch03.tests.test_control_files import told_why

pytestmark = pytest.mark.usefixtures("isolated")

GUARD = "hooks/guard.py"
SETTINGS = {
    "hooks": {
        "PreToolUse": [{"matcher": "no_such_tool", "command": f"python {GUARD} --strict"}],
    }
}


@pytest.mark.parametrize("chapter", ready_from(4))
def test_the_program_a_hook_names_is_written_only_with_a_human_yes(
    run_chapter: RunChapter, workspace: Path, chapter: int
) -> None:
    write_json(workspace / PROJECT_SETTINGS, SETTINGS)
    write_json(workspace / GUARD, "print('guarding')\n")
    calls = [
        call("c0", "read_file", path=GUARD),  # a file is read before it is overwritten
        call("c1", "write_file", path=GUARD, content="print('let it all through')\n"),
        call("c2", "shell", command=f"echo 'import os' >> {GUARD}"),
        call("c3", "write_file", path="notes.md", content="a note\n"),
    ]
    result = run_chapter(chapter, workspace, task(*calls), "--mode", "bypass")
    assert result.exit_code == 0, result.stderr  # `hooks` is a key this chapter reads
    assert (workspace / GUARD).read_text(encoding="utf-8") == "print('guarding')\n"
    assert (workspace / "notes.md").is_file()  # any other write goes on as the mode says
    decisions = [(r["tool_call_id"], r["decision"]) for r in read_audit(workspace / AUDIT_FILE)]
    assert decisions[1:] == [
        ("c1", "ask"),
        ("c1", "deny"),
        ("c2", "ask"),
        ("c2", "deny"),
        ("c3", "allow"),
    ]
    assert told_why(GUARD) in result.stdout


@pytest.mark.parametrize(
    ("call_text", "how"),
    [(f"write_file({GUARD})", "writes"), (f"shell(echo 'import os' >> {GUARD})", "names")],
)
@pytest.mark.parametrize("chapter", ready_from(4))
def test_the_check_asks_about_the_program_a_hook_names_as_a_run_does(
    tmp_path: Path, chapter: int, call_text: str, how: str
) -> None:
    workspace = tmp_path / "ws"
    write_json(workspace / PROJECT_SETTINGS, SETTINGS)
    write_json(workspace / GUARD, "print('guarding')\n")
    options = ("--chapter", str(chapter), "--workspace", str(workspace), "--mode", "bypass")
    result = tutorial("permissions", "check", *options, call_text)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"ask: {call_text}",
        f"  because: {how} the harness control file {GUARD}: asked every time, whatever the "
        "mode or rules",
    ]


@pytest.mark.parametrize("chapter", ready_from(4))
def test_a_misspelt_hooks_key_stops_the_run_and_names_hooks(
    run_chapter: RunChapter, workspace: Path, chapter: int
) -> None:
    write_json(workspace / PROJECT_SETTINGS, {"hoks": SETTINGS["hooks"]})
    result = run_chapter(chapter, workspace, TaskModel({}))
    assert result.exit_code == 2
    assert 'unknown key "hoks"; did you mean "hooks"?' in result.stderr


def test_a_program_a_hook_names_is_protected_before_it_exists(tmp_path: Path) -> None:
    """A hook whose program is not written yet: in accept-edits mode the agent could write
    it, and the hook would run the agent's code unasked. A word with a folder in it is
    taken as a file even when nothing is there; a bare word (`python`) only if it is one."""
    from chapters.ch02.workspace import Workspace
    from chapters.ch04.settings import hook_programs

    write_json(tmp_path / PROJECT_SETTINGS, SETTINGS)  # no hooks/guard.py
    shown = [file.shown for file in hook_programs(Workspace(tmp_path), tmp_path / "home")]
    assert shown == [GUARD]

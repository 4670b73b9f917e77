"""Chapter 10's composition (chapters/ch10/agent.py): the assembled prompt and load_skill inside
chapter 9's agent.

What only the composed agent can show: that the first request carries exactly
the prompt `tutorial prompt` prints, the same bytes in every request of a run
and in every run in one folder on one day, even when a file it was read from
changes during the run; that the memory section is chapter 9's real index; that
load_skill serves the skills the index lists, asks nobody, and lists files
read_file then opens (or, for a skill of yours, says it cannot); and that a broken
skill costs one warning, not the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.tests.support import read_audit
from chapters.ch06.prompt import EXPLORE_PROMPT
from chapters.ch07.scripted_stream import calls_stream
from chapters.ch08.tests.composed import answer, args, reads
from chapters.ch08.tests.composed import write_files as write
from chapters.ch09.tests.support import memory_file, memory_text
from chapters.ch10.prompt import ORDER
from chapters.ch10.skills import SKILLS_FOLDER
from chapters.ch10.tests.composed import Agent10, call
from chapters.ch10.tests.support import skill_text

pytestmark = pytest.mark.usefixtures("isolated")

PROMPT = "Review the change in a.py."
REVIEW = skill_text(
    "review", "Review a Python change. Use when asked to review.", "Read checklist.md first."
)


def furnish(tmp_path: Path) -> None:
    """A workspace with something for every section: AGENTS.md, a skill, a memory."""
    write(
        tmp_path / "ws",
        {
            "AGENTS.md": "Run the tests with `make test`.\n",
            "a.py": "def f(items=[]):\n    return items\n",
            f"{SKILLS_FOLDER.as_posix()}/review/SKILL.md": REVIEW,
            f"{SKILLS_FOLDER.as_posix()}/review/checklist.md": "- mutable defaults\n",
        },
    )
    write(tmp_path / "home", {".tutorial/AGENTS.md": "Answer briefly.\n"})
    memory_file(tmp_path / "ws", "tabs", memory_text("tabs", "Python here uses tabs"))


# --- one prompt per run, the one `tutorial prompt` shows ----------------------------------------


def test_the_first_request_carries_the_prompt_that_tutorial_prompt_shows(tmp_path: Path) -> None:
    furnish(tmp_path)
    agent = Agent10(tmp_path, {PROMPT: [reads("a.py"), answer()]})
    agent.run(PROMPT)
    shown = agent.prompt_command_prompt()
    assert agent.requests[0]["messages"][0] == {"role": "system", "content": shown.text}
    assert [s.name for s in shown.sections if s.text] == list(ORDER)  # every section has text
    for part in [
        "## AGENTS.md (this project's)\nRun the tests with `make test`.",
        "## ~/.tutorial/AGENTS.md (yours, for every project)\nAnswer briefly.",
        "- review: Review a Python change. Use when asked to review.",
        "- tabs [feedback]: Python here uses tabs",  # chapter 9's real index
        f"- Today's date: {agent.today.isoformat()}",
    ]:
        assert part in shown.text
    assert "Read checklist.md first." not in shown.text  # a skill's body waits for load_skill
    assert f"system prompt: {len(shown.text):,} characters" in agent.printed()


def test_nothing_in_the_prompt_changes_between_requests_even_when_its_files_do(
    tmp_path: Path,
) -> None:
    """Read once: AGENTS.md, a skill and a memory changed during the run reach the next run."""
    furnish(tmp_path)

    def change_the_files(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        write(
            tmp_path / "ws",
            {
                "AGENTS.md": "Use tabs.\n",
                f"{SKILLS_FOLDER.as_posix()}/late/SKILL.md": skill_text("late"),
            },
        )
        memory_file(tmp_path / "ws", "late", memory_text("late", "Written mid-run"))
        return reads("a.py")

    agent = Agent10(tmp_path, {PROMPT: [change_the_files, reads("a.py", first=2), answer()]})
    agent.run(PROMPT)
    first, *others = agent.systems()
    assert len(others) == 2 and all(other == first for other in others)
    assert "Use tabs." not in first and "- late" not in first

    later = Agent10(tmp_path, {"Again.": [answer()]})
    later.run("Again.")
    (next_run,) = later.systems()
    assert "Use tabs." in next_run
    assert (
        "- late: Does one thing." in next_run and "- late [feedback]: Written mid-run" in next_run
    )


def test_two_runs_in_one_folder_on_one_day_send_the_same_bytes(tmp_path: Path) -> None:
    furnish(tmp_path)
    one = Agent10(tmp_path, {PROMPT: [answer()]})
    one.run(PROMPT)
    two = Agent10(tmp_path, {PROMPT: [answer()]}, now=one.now + timedelta(hours=1))
    two.run(PROMPT)
    assert one.systems()[0].encode("utf-8") == two.systems()[0].encode("utf-8")
    tomorrow = Agent10(tmp_path, {PROMPT: [answer()]}, today=one.today + timedelta(days=1))
    tomorrow.run(PROMPT)
    before, after = one.systems()[0], tomorrow.systems()[0]
    assert before != after and before.rsplit("\n", 1)[0] == after.rsplit("\n", 1)[0]


# --- load_skill ----------------------------------------------------------------------------------


def test_load_skill_returns_the_instructions_and_a_listed_file_is_then_read(
    tmp_path: Path,
) -> None:
    """A read: nobody is asked (the asker has no answers), the audit log says allow."""
    furnish(tmp_path)
    checklist = f"{SKILLS_FOLDER.as_posix()}/review/checklist.md"
    script = {
        PROMPT: [call("call_1", "load_skill", name="review"), reads(checklist, first=2), answer()]
    }
    agent = Agent10(tmp_path, script, asker=ScriptedAsker([]))
    assert agent.run(PROMPT) == "done"
    loaded = agent.result("call_1")
    assert loaded.startswith(
        "ok: skill review (.tutorial/skills/review/SKILL.md). Follow these instructions:\n\n"
        "Read checklist.md first.\n\n"
    )
    assert loaded.endswith(f"\n- {checklist}")
    assert agent.result("call_2") == (
        f"ok: {checklist}, line 1 of 1 (the whole file)\n     1\t- mutable defaults"
    )
    decisions = [
        (r["tool"], r["decision"]) for r in read_audit(agent.root / ".tutorial/audit.jsonl")
    ]
    assert ("load_skill", "allow") in decisions


def test_an_unknown_skill_is_a_failed_result_that_lists_the_skills(tmp_path: Path) -> None:
    furnish(tmp_path)
    script = {PROMPT: [call("call_1", "load_skill", name="reveiw"), answer()]}
    agent = Agent10(tmp_path, script)
    agent.run(PROMPT)
    assert agent.result("call_1") == (
        "unknown_skill: there is no skill named 'reveiw'. The skills are: review."
    )


def test_a_skill_of_yours_lists_its_files_but_read_file_stays_in_the_workspace(
    tmp_path: Path,
) -> None:
    """What the text's troubleshooting says: your skills' other files are outside the workspace,
    and read_file's boundary refuses them like any path outside it."""
    write(
        tmp_path / "home",
        {
            ".tutorial/skills/mine/SKILL.md": skill_text("mine", body="Read notes.md."),
            ".tutorial/skills/mine/notes.md": "secret-ish notes\n",
        },
    )
    outside = str(tmp_path / "home" / ".tutorial" / "skills" / "mine" / "notes.md")
    script = {
        PROMPT: [
            call("call_1", "load_skill", name="mine"),
            call("call_2", "read_file", path=outside),
            answer(),
        ]
    }
    agent = Agent10(tmp_path, script)
    agent.run(PROMPT)
    assert agent.result("call_1").endswith(
        "which is outside the workspace: read_file cannot open them, so ask the user if the "
        "instructions need one:\n- notes.md"
    )
    refused = agent.result("call_2")
    assert "path_outside_workspace" in refused and "secret-ish" not in refused


def test_a_child_has_no_load_skill_since_its_prompt_has_no_skills_index(tmp_path: Path) -> None:
    furnish(tmp_path)
    task = ("call_1", "task", args(description="Look", prompt="Find f.", agent="explore"))
    scripts = {PROMPT: [calls_stream(task), answer()], "Find f.": [answer("a.py:1")]}
    agent = Agent10(tmp_path, scripts)
    agent.run(PROMPT)
    parent_tools = {t["function"]["name"] for t in agent.requests[0]["tools"]}
    (child,) = [r for r in agent.requests if r["messages"][1]["content"] == "Find f."]
    assert "load_skill" in parent_tools
    assert "load_skill" not in {t["function"]["name"] for t in child["tools"]}
    assert child["messages"][0]["content"] == EXPLORE_PROMPT


# --- what cannot be read costs a warning, not the run -------------------------------------------


def test_a_broken_skill_warns_once_and_the_run_goes_on(tmp_path: Path) -> None:
    furnish(tmp_path)
    write(tmp_path / "ws", {f"{SKILLS_FOLDER.as_posix()}/Bad/SKILL.md": skill_text("Bad")})
    script = {PROMPT: [reads("a.py"), reads("a.py", first=2), answer("reviewed")]}
    agent = Agent10(tmp_path, script)
    assert agent.run(PROMPT) == "reviewed"
    warning = (
        "harness: .tutorial/skills/Bad/SKILL.md: name 'Bad' may hold only lowercase letters, "
        "digits and hyphens; the skill is left out"
    )
    assert agent.printed().count(warning) == 1  # once per run, not once per request
    assert len(agent.requests) == 3
    assert all("- review:" in system and "Bad" not in system for system in agent.systems())


def test_a_broken_memory_file_and_an_unreadable_agents_md_warn_once_each(tmp_path: Path) -> None:
    furnish(tmp_path)
    memory_file(tmp_path / "ws", "broken", "no front matter\n")
    (tmp_path / "ws" / "AGENTS.md").write_bytes(b"caf\xe9\n")  # not UTF-8
    agent = Agent10(tmp_path, {PROMPT: [reads("a.py"), answer()]})
    agent.run(PROMPT)
    printed = agent.printed()
    assert printed.count("harness: .tutorial/memory/broken.md:") == 1
    assert printed.count("harness: AGENTS.md cannot be read (") == 1
    assert "Run the tests" not in agent.systems()[0]

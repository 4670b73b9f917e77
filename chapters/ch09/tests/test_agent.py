"""Chapter 9's composition (chapters/ch09/agent.py): sessions and memory inside chapter 8's agent.

What only the composed agent can show: that a resumed run appends to the same
log and its first request carries the old history and the new prompt; that the
memory index is in the system prompt, names and descriptions only, the same
bytes in every request of a run; that memory_write goes through the permission
gate and the audit log like any write; that a child's run is not in the session
log; and that a resumed history longer than the window is compacted before the
first request, or not sent at all.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chapters.ch03.asking import ScriptedAsker, TerminalAsker
from chapters.ch03.policy import Mode
from chapters.ch03.tests.support import read_audit, read_outcomes
from chapters.ch06.prompt import EXPLORE_PROMPT
from chapters.ch07.scripted_stream import calls_stream
from chapters.ch07.tests.support import recording_console
from chapters.ch08.compaction import SUMMARY_MARK
from chapters.ch08.tests.composed import answer, args, is_compaction, lines_of, reads, summary
from chapters.ch08.tests.composed import write_files as write
from chapters.ch09.memory import MEMORY_FOLDER
from chapters.ch09.prompt import SYSTEM_PROMPT, with_memory_index
from chapters.ch09.resume import ResumedTooLong
from chapters.ch09.sessions import read_session
from chapters.ch09.tests.composed import Agent9
from chapters.ch09.tests.support import memory_file, memory_text

pytestmark = pytest.mark.usefixtures("isolated")

PROMPT = "Read a.txt and tell me what it says."
NEXT = "Now read b.txt too."


# --- resuming -----------------------------------------------------------------------------------


def test_a_resumed_run_appends_to_the_same_log_and_sends_the_old_history_and_the_new_prompt(
    tmp_path: Path,
) -> None:
    write(tmp_path / "ws", {"a.txt": "alpha\n", "b.txt": "beta\n"})
    first = Agent9(tmp_path, {PROMPT: [reads("a.txt"), answer("It says alpha.")]})
    assert first.run(PROMPT) == "It says alpha."
    assert first.log is not None
    path, before = first.log.path, first.log.path.read_bytes()
    old = [*first.requests[-1]["messages"], {"role": "assistant", "content": "It says alpha."}]

    script = {PROMPT: [reads("b.txt", first=2), answer("And b says beta.")]}
    resumed = Agent9(tmp_path, script, resume="")
    assert resumed.run(NEXT) == "And b says beta."
    assert resumed.log is not None and resumed.log.path == path
    assert list(path.parent.iterdir()) == [path]
    assert path.read_bytes().startswith(before)  # appended, nothing rewritten
    assert resumed.requests[0]["messages"] == [*old, {"role": "user", "content": NEXT}]
    added = resumed.lines[len(before.splitlines()) :]
    assert added[0]["resumed"]["prompt"] == NEXT
    assert added[-1] == {"turn": 2, "end": "answered"}
    stored = read_session(path)
    assert (stored.runs, stored.turns, stored.prompt) == (2, 4, PROMPT)
    assert [m.role for m in stored.history][-3:] == ["assistant", "tool", "assistant"]


# --- the memory index in the system prompt -------------------------------------------------------


def test_the_memory_index_is_in_the_system_prompt_names_and_descriptions_only(
    tmp_path: Path,
) -> None:
    memory_file(tmp_path / "ws", "tabs", memory_text("tabs", "Python here uses tabs"))
    memory_file(tmp_path / "home", "role", memory_text("role", "A backend engineer", "user"))
    memory_file(tmp_path / "ws", "broken", "no front matter\n")
    write(tmp_path / "ws", {"a.txt": "alpha\n"})
    agent = Agent9(tmp_path, {PROMPT: [reads("a.txt"), answer()]})
    agent.run(PROMPT)

    system = agent.requests[0]["messages"][0]["content"]
    assert system.startswith(SYSTEM_PROMPT)
    assert "- tabs [feedback]: Python here uses tabs" in system
    assert "- role [user]: A backend engineer" in system
    assert "The body." not in system  # bodies are read on demand
    assert "broken" not in system
    assert agent.requests[1]["messages"][0]["content"] == system
    assert agent.printed().count(".tutorial/memory/broken.md:") == 1  # one warning, naming it


def test_with_no_memories_the_prompt_still_says_when_to_save_one(tmp_path: Path) -> None:
    agent = Agent9(tmp_path, {PROMPT: [answer()]})
    agent.run(PROMPT)
    system = agent.requests[0]["messages"][0]["content"]
    assert system == with_memory_index("") == SYSTEM_PROMPT
    assert "memory_write" in system


def test_a_memory_written_during_a_run_is_in_the_next_runs_index_not_this_ones(
    tmp_path: Path,
) -> None:
    """The index is read once per run: the prompt stays the same bytes, the prefix cacheable."""
    memory = {"name": "tabs", "description": "Tabs", "type": "feedback", "body": "Tabs."}
    script = {PROMPT: [calls_stream(("call_1", "memory_write", args(**memory))), answer()]}
    agent = Agent9(tmp_path, script, mode=Mode.ACCEPT_EDITS)
    agent.run(PROMPT)
    first, second = (request["messages"][0]["content"] for request in agent.requests)
    assert first == second == SYSTEM_PROMPT
    later = Agent9(tmp_path, {"Again.": [answer()]})
    later.run("Again.")
    assert "- tabs [feedback]: Tabs" in later.requests[0]["messages"][0]["content"]


# --- memory_write is a write ---------------------------------------------------------------------

TABS = {
    "name": "tabs",
    "description": "Python here uses tabs",
    "type": "feedback",
    "body": "The user asked for tabs.",
}


def test_memory_write_goes_through_the_gate_and_the_audit_log_with_the_memory_shown(
    tmp_path: Path,
) -> None:
    console = recording_console()
    human = TerminalAsker(console, stdin=io.StringIO("y\n"), interactive=True)
    script = {PROMPT: [calls_stream(("call_1", "memory_write", args(**TABS))), answer()]}
    agent = Agent9(tmp_path, script, asker=human, console=console)
    agent.run(PROMPT)

    printed = agent.printed()
    assert "工具 tool: memory_write" in printed
    assert "+++ b/.tutorial/memory/tabs.md\n" in printed  # the memory as it will be written
    assert "+description: Python here uses tabs\n" in printed
    assert (tmp_path / "ws" / MEMORY_FOLDER / "tabs.md").is_file()
    audit = tmp_path / "ws" / ".tutorial" / "audit.jsonl"
    assert [(a["tool"], a["key"], a["decision"]) for a in read_audit(audit)] == [
        ("memory_write", "tabs", "ask"),
        ("memory_write", "tabs", "allow"),
    ]
    assert [o["outcome"] for o in read_outcomes(audit)] == ["ok"]


def test_in_plan_mode_memory_write_is_denied_without_asking(tmp_path: Path) -> None:
    script = {PROMPT: [calls_stream(("call_1", "memory_write", args(**TABS))), answer()]}
    agent = Agent9(tmp_path, script, asker=ScriptedAsker([]), mode=Mode.PLAN)
    agent.run(PROMPT)
    result = agent.requests[1]["messages"][-1]["content"]
    assert result.startswith("denied: plan mode is read-only")
    assert not (tmp_path / "ws" / MEMORY_FOLDER).exists()


# --- children -----------------------------------------------------------------------------------

CHILD = "Read a.txt and report its first word."


def test_a_childs_run_is_not_written_to_the_session_log(tmp_path: Path) -> None:
    write(tmp_path / "ws", {"a.txt": "alpha\n"})
    task = ("call_1", "task", args(description="Read a.txt", prompt=CHILD, agent="explore"))
    scripts = {
        PROMPT: [calls_stream(task), answer("It says alpha.")],
        CHILD: [reads("a.txt", first=5), answer("alpha")],
    }
    agent = Agent9(tmp_path, scripts)
    assert agent.run(PROMPT) == "It says alpha."
    roles = [line["message"]["role"] for line in agent.lines if "message" in line]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert EXPLORE_PROMPT not in str(agent.lines)  # the child's system prompt
    assert all(line.get("message", {}).get("content") != CHILD for line in agent.lines)
    assert "call_5" not in str(agent.lines)  # the child's own call


# --- a resumed history longer than the window ----------------------------------------------------

BIG = {f"{n}.txt": lines_of(6_000, f"file{n}") for n in range(1, 5)}


def long_session(tmp_path: Path, prompt: str = PROMPT) -> Agent9:
    """Four reads of 6,000 characters each: about 6,500 tokens of history, in a 32,000 window."""
    write(tmp_path / "ws", BIG)
    steps = [reads(name, first=n) for n, name in enumerate(BIG, 1)]
    first = Agent9(tmp_path, {prompt: [*steps, answer("read")]})
    first.run(prompt)
    return first


def test_a_resumed_history_longer_than_the_window_is_compacted_before_the_first_request(
    tmp_path: Path,
) -> None:
    long_session(tmp_path)
    script = {PROMPT: [summary("SUMMARY: four files read."), answer("done")]}
    resumed = Agent9(tmp_path, script, resume="", options={"context_window": 4_000})
    assert resumed.run(NEXT) == "done"

    compaction, first = resumed.requests
    assert is_compaction(compaction)
    assert first["messages"][2]["content"].startswith(SUMMARY_MARK)
    assert first["messages"][-1] == {"role": "user", "content": NEXT}
    assert "over the 4,000-token window: compacting it before the first request" in (
        resumed.printed()
    )
    notes = [line.get("note") for line in resumed.lines]
    assert "summary" in notes  # the summary is in the log, and the compacted history too
    assert resumed.log is not None
    assert read_session(resumed.log.path).history[2].content == first["messages"][2]["content"]


def test_a_resumed_history_that_cannot_fit_the_window_is_never_sent(tmp_path: Path) -> None:
    """A first prompt bigger than the window: compaction keeps it verbatim, so it cannot fit."""
    huge = "Read these notes first. " + lines_of(20_000, "note")
    long_session(tmp_path, huge)
    script = {huge: [summary("SUMMARY: four files read."), answer("done")]}
    resumed = Agent9(tmp_path, script, resume="", options={"context_window": 4_000})
    with pytest.raises(ResumedTooLong, match="more than the 4,000-token context window"):
        resumed.run(NEXT)
    assert not any(request["messages"][-1]["content"] == NEXT for request in resumed.requests)
    assert resumed.lines[-1]["end"] == "failed"

"""`--demo`: a preference saved in one session and used in the next; then that session resumed.

The workspace is a new temporary folder holding chapter 6's small shop. The
demo is three runs of chapter 9's agent, one after the other, as a person
would type them:

    run 1   a new session. The user states a preference for later sessions; the
            model saves it with memory_write, the human approves the memory as it
            will be written (a diff of .tutorial/memory/path-line.md), the audit
            log records it
    run 2   a new session: an empty history, but the memory index is in the
            system prompt. The model reads the memory beside its search and
            answers as the memory asks (path:line)
    run 3   `--resume` run 2's session with a new prompt: the first request
            carries run 2's whole history and the new prompt; the model goes on
            from it

The scripted model reads what it is sent, as chapter 8's demo does: it reads
the memory only if the index lists it, answers in path:line only if it read
the memory, and takes its line numbers from the grep results. So with the
memory folder emptied between the runs, run 2 answers without line numbers.
Only the model is scripted: the tools, the gate, the logs and the memory files
are the real ones.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chapters.ch06.demo import write_demo_files
from chapters.ch07.scripted_stream import (
    AgentStep,
    AgentStreams,
    call_result,
    calls_stream,
    said,
    tool_call,
)
from shared.console import Console
from shared.scripted import scripted_text

DEMO_MODEL = "scripted-demo"
PREFERENCE = (
    "Please remember this for later sessions: when you tell me where something is in the "
    "code, give the file and the line as path:line."
)
QUESTION = "Where is the sales tax rate set, and what is it?"
FOLLOW_UP = "And which function adds it to what a customer pays?"
DEMO_PROMPT = PREFERENCE
MEMORY = {
    "name": "path-line",
    "description": "When saying where code is, give it as path:line",
    "type": "feedback",
    "body": (
        "The user asked: when you tell them where something is in the code, give the file "
        "and the line as path:line (shop/pricing.py:5), so that they can open it from the "
        "answer."
    ),
}
LISTED = f"- {MEMORY['name']} [{MEMORY['type']}]: {MEMORY['description']}"  # its index line
_MATCH = re.compile(r"^(?P<path>[\w./-]+):(?P<line>\d+): (?P<text>.*)$", re.M)

# One run of chapter 9's agent: (prompt, the session to resume or None) -> (answer, session id).
RunInSession = Callable[[str, str | None], tuple[str, str]]


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch09-demo-"))
    write_demo_files(folder)
    return folder


def run_demo(run: RunInSession, console: Console) -> str:
    """The demo's three runs; the answers of the first two are printed, the last returned.

    The caller has already shown the first prompt (it is `DEMO_PROMPT`).
    """
    saved, _ = run(PREFERENCE, None)
    console.answer(saved)
    _next(console, 2, "a new session: an empty history, the memory index in the system prompt")
    console.info(f'   python -m tutorial run --chapter 9 --prompt "{QUESTION}"')
    console.info(f"user: {QUESTION}")
    answer, session = run(QUESTION, None)
    console.answer(answer)
    _next(console, 3, "the same session resumed: its history, then the new prompt")
    console.info(f'   python -m tutorial run --chapter 9 --resume {session} --prompt "{FOLLOW_UP}"')
    console.info(f"user: {FOLLOW_UP}")
    followed, _ = run(FOLLOW_UP, session)
    return followed


def _next(console: Console, number: int, what: str) -> None:
    console.info(f"\n── 第 {number} 次运行 run {number} of 3: {what} ──")


def demo_model(*, stream: bool = True) -> AgentStreams:
    """Each run's script, chosen by the first prompt of its history: run 3 resumes run 2's
    session, so its requests start with run 2's prompt and take that script's next steps."""
    scripts: Mapping[str, list[AgentStep]] = {
        PREFERENCE: [_save_the_preference, _say_it_was_saved],
        QUESTION: [_look_it_up, _answer_where, _find_the_caller, _answer_who],
    }
    return AgentStreams(scripts, name=DEMO_MODEL, stream=stream)


def _save_the_preference(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("A preference for later sessions: I save it as a feedback memory.")
    return calls_stream(tool_call(1, "memory_write", MEMORY), text=text)


def _say_it_was_saved(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    result = call_result(request, "call_1")
    if not result.startswith("ok:"):
        return said(f"The memory was not saved: {result.splitlines()[0]}")
    return said(
        f"Saved as the memory {MEMORY['name']} (.tutorial/memory/{MEMORY['name']}.md). From "
        "the next session on, my system prompt lists it, and I read it when it bears on a task."
    )


def _look_it_up(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    search = tool_call(3, "grep", {"pattern": "TAX_RATE =", "path": "shop"})
    if LISTED not in request["messages"][0]["content"]:
        return calls_stream(search)
    text = scripted_text("My memory index lists a note on how to say where code is: I read it.")
    return calls_stream(tool_call(2, "memory_read", {"name": MEMORY["name"]}), search, text=text)


def _answer_where(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = _matches(call_result(request, "call_3"))
    if not found:
        return said("I found no TAX_RATE in shop/.")
    path, line, text = found[0]
    rate = re.search(r'"(0\.\d+)"', text)
    percent = f"{float(rate[1]) * 100:g} percent" if rate else "as set there"
    where = f"{path}:{line}" if _followed(request) else path
    return said(f"The sales tax rate is {percent}: `{text.strip()}`, at {where}.")


def _find_the_caller(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("Going on from the tax rate: who calls with_tax?")
    return calls_stream(tool_call(4, "grep", {"pattern": r"with_tax\(", "path": "shop"}), text=text)


def _answer_who(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    lines = _matches(call_result(request, "call_4"))
    found = {text.split()[0]: (path, line) for path, line, text in lines}  # "def", "return"
    defined, called = found.get("def"), found.get("return")
    if defined is None or called is None:
        return said("I could not find where with_tax is defined and called.")
    if _followed(request):
        where = f"with_tax ({defined[0]}:{defined[1]}) adds it; amount_due calls it at "
        where += f"{called[0]}:{called[1]}"
    else:
        where = f"with_tax in {defined[0]} adds it; amount_due in {called[0]} calls it"
    return said(f"{where}, on the cart's total, so the customer pays the total with tax.")


# --- helpers ----------------------------------------------------------------------------------


def _followed(request: Mapping[str, Any]) -> bool:
    """Whether the model has read the memory in this history (then it does what it says)."""
    return call_result(request, "call_2").startswith(f"ok: memory {MEMORY['name']} ")


def _matches(result: str) -> list[tuple[str, int, str]]:
    """grep's `path:line: text` lines."""
    return [(m["path"], int(m["line"]), m["text"]) for m in _MATCH.finditer(result)]

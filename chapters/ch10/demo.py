"""`--demo`: a review that needs a skill, loaded on demand, with one of its extra files.

The workspace is a new temporary folder holding chapter 6's small shop and what
chapter 10 reads into the system prompt:

    AGENTS.md                        the project's instructions
    .tutorial/skills/                the two skills the chapter ships (chapters/ch10/skills/)
    .tutorial/memory/                one memory, through chapter 9's store
    changes/once-per-code.diff       a proposed change to shop/cart.py, to review

The change lets each discount code be used once, and remembers the codes in
a default argument `used: list[str] = []`: one list, made once, shared by every
call. The first item of the skill's checklist. Three replies:

    reply 1   the task is a review of a Python change, and the index under Skills
              lists python-diff-review for that: load_skill python-diff-review
    reply 2   the instructions send the model to checklist.md, which load_skill
              listed among the skill's files: read it, the patch and the file it
              changes, side by side
    reply 3   the findings, one per line, as the skill asks, and the verdict

Every reply is a scripted stream in OpenAI's shape that says how many tokens
the request was (chapter 8's `provider_count`), and every text the model
writes starts with [scripted]. Only the model is scripted: the prompt, the
skills, load_skill and the reads are the real ones.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chapters.ch06.demo import DEMO_FILES, line_of, write_demo_files
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, chunk, text_stream
from chapters.ch08.demo import provider_count
from chapters.ch09.memory import Memory, MemoryStore, MemoryType
from chapters.ch10.skill_tool import LOAD_SKILL
from chapters.ch10.skills import SKILLS_FOLDER
from shared.scripted import scripted_text

DEMO_PROMPT = "Review my change in changes/once-per-code.diff before I merge it."
DEMO_MODEL = "scripted-demo"
SKILL = "python-diff-review"
EXTRA_FILE = "checklist.md"  # the skill's other file that its instructions send the model to
SHIPPED_SKILLS = Path(__file__).resolve().parent / "skills"
PATCH = "changes/once-per-code.diff"
CHANGED = "shop/cart.py"
AGENTS_MD = """\
# shop

- Money is `Decimal`, never `float`.
- Run the tests with `python -m pytest -q`.
- Name files and functions as they are named in the code; do not rename in a fix.
"""
MEMORY = Memory(
    "review-tests",
    "In a review, say whether a test covers the change",
    MemoryType.FEEDBACK,
    "The user asked that every review say whether a test covers the changed behaviour, "
    "and which test to add when none does.",
)
CART = DEMO_FILES[CHANGED]
CHANGED_CART = CART.replace(
    """def total(lines: list[tuple[str, Decimal, int]], code: str | None = None) -> Decimal:
""",
    """def total(
    lines: list[tuple[str, Decimal, int]], code: str | None = None, used: list[str] = []
) -> Decimal:
    if code in used:
        code = None  # each code once
    elif code:
        used.append(code)
""",
)


def patch_text() -> str:
    """The change as `git diff` would show it."""
    lines = difflib.unified_diff(
        CART.splitlines(keepends=True),
        CHANGED_CART.splitlines(keepends=True),
        fromfile=f"a/{CHANGED}",
        tofile=f"b/{CHANGED}",
    )
    return f"diff --git a/{CHANGED} b/{CHANGED}\n" + "".join(lines)


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch10-demo-"))
    write_demo_workspace(folder)
    return folder


def write_demo_workspace(folder: Path, home: Path | None = None) -> None:
    """The shop, AGENTS.md, the shipped skills as the project's, a memory and the patch.

    `home` is only where chapter 9's store would put a memory of the user's; the
    demo writes the project's, in `folder`.
    """
    write_demo_files(folder)
    for name, text in {"AGENTS.md": AGENTS_MD, PATCH: patch_text()}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    for skill in sorted(SHIPPED_SKILLS.iterdir()):
        if (skill / "SKILL.md").is_file():
            shutil.copytree(skill, folder / SKILLS_FOLDER / skill.name)
    MemoryStore(folder, home or folder).save(MEMORY)


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The three replies, each made from the request it answers."""
    replies: Sequence[Callable[[Mapping[str, Any]], list[dict[str, Any]]]] = [
        _load_the_skill,
        _read_the_checklist_and_the_change,
        _answer,
    ]
    steps: Sequence[AgentStep] = list(replies)
    return AgentStreams({DEMO_PROMPT: steps}, name=DEMO_MODEL, stream=stream)


def _load_the_skill(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text(
        f"This is a review of a Python change, and the {SKILL} skill is for that. "
        "I load its instructions first."
    )
    return _reply(request, calls_stream(_call(1, LOAD_SKILL, name=SKILL), text=text))


def _read_the_checklist_and_the_change(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = [
        _call(2, "read_file", path=checklist_path(request)),
        _call(3, "read_file", path=PATCH),
        _call(4, "read_file", path=CHANGED),
    ]
    text = scripted_text(
        f"The instructions say to go through {EXTRA_FILE}; I read it with the patch and "
        "the file it changes."
    )
    return _reply(request, calls_stream(*calls, text=text))


def checklist_path(request: Mapping[str, Any]) -> str:
    """The checklist's path as load_skill listed it; the project's folder if it did not."""
    found = re.search(rf"^- (\S*{re.escape(EXTRA_FILE)})$", _result(request, "call_1"), re.M)
    return found[1] if found else f"{SKILLS_FOLDER.as_posix()}/{SKILL}/{EXTRA_FILE}"


def _answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    default = line_of(CHANGED_CART, "used: list[str] = []")
    rule = line_of(CHANGED_CART, "if code in used:")
    appended = line_of(CHANGED_CART, "used.append(code)")
    answer = scripted_text(
        f"Review of {PATCH} ({SKILL}, {EXTRA_FILE}):\n"
        f"bug  {CHANGED}:{default}  `used: list[str] = []` is made once and shared by every "
        f"call: after line {appended} a code used in one cart counts as used in every later "
        "cart, for every customer. Fix: `used: list[str] | None = None`, then "
        "`used = [] if used is None else used`.\n"
        f"risk  {CHANGED}:{rule}  no test covers the new rule (tests/ has only "
        "test_pricing.py): add one that totals two new carts with the same code; with this "
        "change the second loses its discount.\n"
        "changes needed: the shared default list."
    )
    return _reply(request, text_stream(*_pieces(answer)))


# --- helpers ----------------------------------------------------------------------------------


def _call(number: int, tool: str, /, **arguments: Any) -> tuple[str, str, str]:
    return f"call_{number}", tool, json.dumps(arguments)


def _reply(request: Mapping[str, Any], chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks as the demo's model sends them, then the usage chunk with its count."""
    usage = {"prompt_tokens": provider_count(request), "completion_tokens": 60}
    named = [{**piece, "id": "chatcmpl-demo", "model": DEMO_MODEL} for piece in chunks]
    return [*named, chunk(None, usage=usage, chunk_id="chatcmpl-demo", model=DEMO_MODEL)]


def _result(request: Mapping[str, Any], call_id: str) -> str:
    return next(
        (str(m["content"]) for m in request["messages"] if m.get("tool_call_id") == call_id), ""
    )


def _pieces(text: str) -> list[str]:
    """A text in pieces of a few words, as a stream brings it."""
    words = text.split(" ")
    pieces = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    return [piece if n == 0 else " " + piece for n, piece in enumerate(pieces)]

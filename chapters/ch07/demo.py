"""`--demo`: a streamed reply, two sub-agents side by side, three reads side by side, a barrier.

The workspace is a new temporary folder holding chapter 6's small shop. Every
reply is a scripted stream in OpenAI's shape (chapters/ch07/scripted_stream.py),
so the text appears piece by piece and `--trace` shows each chunk:

    parent, reply 1   a sentence, then task(explore) twice: two separate searches,
                      so both children run side by side, each printing into a block
    explore × 2       grep, then a streamed one-line report
    parent, reply 2   read cart, read checkout, read the tests (side by side), then
                      write NOTES.md (a barrier: it runs alone, after the reads, and
                      asks you first), then read NOTES.md back (after the write)
    parent, reply 3   the answer, streamed, from the reports and the reads

Only the model is scripted: the tools, the policy, the pipeline and the
threads are the real ones. `demo_model(stream=False)` answers the plain
request of `--no-stream` with the same replies, whole.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from chapters.ch06.demo import DEMO_FILES, PRICING, line_of, write_demo_files
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, chunk
from shared.scripted import SCRIPTED_MARK, scripted_text

DEMO_PROMPT = (
    "Where are apply_discount and with_tax defined, and who calls them? "
    "Note where they are defined in NOTES.md."
)
DEMO_MODEL = "scripted-demo"
NOTES = "NOTES.md"


def _task(function: str) -> dict[str, str]:
    return {
        "description": f"Find {function}",
        "prompt": f"Find where the function {function} is defined. Report the file and line.",
        "agent": "explore",
    }


TASKS = (_task("apply_discount"), _task("with_tax"))
DEFINED = {
    "apply_discount": line_of(PRICING, "def apply_discount"),
    "with_tax": line_of(PRICING, "def with_tax"),
}
CALLED = {
    "apply_discount": (
        "shop/cart.py",
        line_of(DEMO_FILES["shop/cart.py"], "return apply_discount"),
    ),
    "with_tax": (
        "shop/checkout.py",
        line_of(DEMO_FILES["shop/checkout.py"], "return with_tax"),
    ),
}
USAGE = {"prompt_tokens": 1843, "completion_tokens": 96, "total_tokens": 1939}


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch07-demo-"))
    write_demo_files(folder)
    return folder


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The parent's script and each child's, by the prompt each run starts with."""
    scripts: dict[str, Sequence[AgentStep]] = {
        DEMO_PROMPT: [_delegate(), _read_and_note(), _answer],
        **{
            task["prompt"]: _explore(function)
            for task, function in zip(TASKS, DEFINED, strict=True)
        },
    }
    return AgentStreams(scripts, name=DEMO_MODEL, stream=stream)


def _delegate() -> list[dict[str, Any]]:
    """Text in two pieces, then two task calls whose arguments arrive in pieces."""
    return [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": f"{SCRIPTED_MARK} Two searches that do not depend on each other"}),
        _chunk({"content": ": explore can do both at once."}),
        *_call(0, "call_1", "task", TASKS[0]),
        *_call(1, "call_2", "task", TASKS[1]),
        _chunk({}, "tool_calls"),
        _chunk(None, usage=USAGE),
    ]


def _explore(function: str) -> list[list[dict[str, Any]]]:
    call_id = "call_3" if function == "apply_discount" else "call_4"
    found = f"{function}: shop/pricing.py, line {DEFINED[function]}."
    return [
        [
            _chunk({"role": "assistant", "content": None}),
            *_call(0, call_id, "grep", {"pattern": f"def {function}"}),
            _chunk({}, "tool_calls"),
        ],
        _text(scripted_text(found)),
    ]


def _read_and_note() -> list[dict[str, Any]]:
    notes = "# Notes\n\n" + "".join(
        f"- {function}: shop/pricing.py, line {line}\n" for function, line in DEFINED.items()
    )
    calls = [
        ("read_file", {"path": "shop/cart.py"}),
        ("read_file", {"path": "shop/checkout.py"}),
        ("read_file", {"path": "tests/test_pricing.py"}),
        ("write_file", {"path": NOTES, "content": notes}),
        ("read_file", {"path": NOTES}),
    ]
    return [
        _chunk({"role": "assistant", "content": None}),
        *(
            piece
            for index, (name, arguments) in enumerate(calls)
            for piece in _call(index, f"call_{5 + index}", name, arguments)
        ),
        _chunk({}, "tool_calls"),
    ]


def _answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer, from the reports and the reads; it says whether NOTES.md was written."""
    results = {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}
    written = results.get("call_8", "").startswith("ok")
    where = [
        f"{function} is defined in shop/pricing.py, line {DEFINED[function]}, "
        f"and called from {CALLED[function][0]}, line {CALLED[function][1]}"
        for function in DEFINED
    ]
    noted = (
        f"Both are noted in {NOTES}."
        if written
        else f"{NOTES} was not written: {results.get('call_8', 'no result').split(';')[0]}."
    )
    return _text(scripted_text(f"{where[0]}; {where[1]}. {noted}"))


def _text(text: str) -> list[dict[str, Any]]:
    """A text reply streamed a few words at a time, then the usage chunk."""
    words = text.split(" ")
    pieces = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    return [
        _chunk({"role": "assistant", "content": ""}),
        *(_chunk({"content": piece if n == 0 else " " + piece}) for n, piece in enumerate(pieces)),
        _chunk({}, "stop"),
        _chunk(None, usage=USAGE),
    ]


def _call(
    index: int, call_id: str, name: str, arguments: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One tool call as OpenAI streams it: id and name first, then the arguments in pieces."""
    text = json.dumps(arguments)
    cut = [0, len(text) // 3, 2 * len(text) // 3, len(text)]
    head = {"index": index, "id": call_id, "type": "function"}
    return [
        _chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}),
        *(
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": text[a:b]}}]})
            for a, b in pairwise(cut)
        ),
    ]


def _chunk(
    delta: Mapping[str, Any] | None,
    finish_reason: str | None = None,
    *,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return chunk(delta, finish_reason, usage=usage, chunk_id="chatcmpl-demo", model=DEMO_MODEL)

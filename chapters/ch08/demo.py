"""`--demo`: a log too long to send, read from disk in pages; an old result stubbed; a compaction.

The workspace is a new temporary folder holding chapter 6's small shop and a
600-line log of last night's checkouts, one line of which is an error. The
demo runs in a small context window and stubs results after 2 requests
(`DEMO_CONTEXT_WINDOW`, `DEMO_KEEP_RESULTS`), so that all of chapter 8 happens
in five turns:

    reply 1   read_file the whole log: 60,000 characters, over the 20,000 the
              model may read at once, so the harness saves it whole to
              .tutorial/tool-results/call_1.txt and the model reads its two ends
    reply 2   grep ERROR in the saved file: one line
    reply 3   read_file a page of the saved file around that line, and
              shop/pricing.py beside it (side by side)
    request 4 the log's view is 2 requests old: it is sent as a stub
    reply 4   read_file shop/cart.py and grep who calls apply_discount
    request 5 the context is above 80% of the window: compacted first. The
              summary request is answered with a streamed summary
    reply 5   the answer, from the summary and the kept messages

A summary request is answered wherever it comes: with other options the
compaction falls elsewhere, or nowhere, and the replies are the same.

Every reply is a scripted stream in OpenAI's shape that says how many tokens
the request was, counted the way a provider would (its own rule, not the
harness's estimate), so the gauge and the compaction work from a measurement.
Only the model is scripted: the tools, the offloading, the stubs, the
compaction and the transcript are the real ones.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chapters.ch06.demo import DEMO_FILES, PRICING, line_of, write_demo_files
from chapters.ch07.scripted_stream import AgentStep, AgentStreams, calls_stream, chunk, text_stream
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from shared.scripted import scripted_text

DEMO_PROMPT = (
    "Checkout failed for some orders last night. Find the error in logs/checkout.log "
    "and tell me what caused it."
)
DEMO_MODEL = "scripted-demo"
DEMO_CONTEXT_WINDOW = 4_500  # tokens: small, so that the demo compacts in five turns
DEMO_KEEP_RESULTS = 2  # requests: small, so that the demo shows a stub before it compacts
LOG = "logs/checkout.log"
LOG_LINES = 600
ERROR_LINE = 412
CHARS_PER_TOKEN = 3.6  # the scripted provider's count: not the harness's 4


def log_text() -> str:
    """Last night's checkouts: one line per order, one of them an error."""
    lines = []
    for number in range(1, LOG_LINES + 1):
        minute, second = divmod(number * 7, 60)
        stamp = f"2026-01-05T02:{minute % 60:02d}:{second:02d}Z"
        order = 10_000 + number
        if number == ERROR_LINE:
            lines.append(
                f"{stamp} ERROR checkout order={order} code=VIP130 failed: ValueError: "
                "a discount must be 0 to 100 percent, not 130"
            )
            continue
        code = ("WELCOME10", "STAFF", "-")[number % 3]
        cents = (number * 7_919) % 20_000 + 500
        lines.append(
            f"{stamp} INFO  checkout order={order} items={number % 5 + 1} code={code:<9} "
            f"total={cents // 100}.{cents % 100:02d} status=paid"
        )
    return "\n".join(lines) + "\n"


def make_demo_workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tutorial-ch08-demo-"))
    write_demo_workspace(folder)
    return folder


def write_demo_workspace(folder: Path) -> None:
    write_demo_files(folder)
    log = folder / LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(log_text(), encoding="utf-8", newline="\n")


def demo_model(*, stream: bool = True) -> AgentStreams:
    """The parent's script: the next of its five replies, or a summary when one is asked for.

    Where the compaction falls depends on the options (`--context-window`,
    `--keep-results`), so a summary request is answered wherever it comes and the
    replies go on after it; without a compaction there is simply none.
    """
    replies: list[Callable[[Mapping[str, Any]], list[dict[str, Any]]]] = [
        _read_the_log,
        _grep_the_saved_log,
        _read_around_the_error,
        _read_the_caller,
        _answer,
    ]
    given = 0

    def next_reply(request: Mapping[str, Any]) -> list[dict[str, Any]]:
        nonlocal given
        if str(request["messages"][-1].get("content") or "").startswith(COMPACT_MARK):
            return _summary(request)
        given += 1
        return replies[min(given, len(replies)) - 1](request)

    steps: Sequence[AgentStep] = [next_reply] * (2 * len(replies))  # room for a summary each
    return AgentStreams({DEMO_PROMPT: steps}, name=DEMO_MODEL, stream=stream)


def _read_the_log(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = scripted_text("The log is long; I read it once, and read on in whatever was saved.")
    return _reply(request, calls_stream(_call(1, "read_file", path=LOG), text=text))


def _grep_the_saved_log(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _reply(request, calls_stream(_call(2, "grep", pattern="ERROR", path=_saved(request))))


def _read_around_the_error(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = re.search(r":(\d+):\s+(\d+)\t", _result(request, "call_2"))
    number = int(found[2]) if found else ERROR_LINE  # the log's own line number, in the saved view
    calls = [
        _call(3, "read_file", path=LOG, offset=max(number - 3, 1), limit=7),
        _call(4, "read_file", path="shop/pricing.py"),
    ]
    return _reply(request, calls_stream(*calls))


def _read_the_caller(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = [
        _call(5, "read_file", path="shop/cart.py"),
        _call(6, "read_file", path="shop/checkout.py"),
        _call(7, "read_file", path="tests/test_pricing.py"),
        _call(8, "grep", pattern="apply_discount\\(", path="shop"),
    ]
    return _reply(request, calls_stream(*calls))


def _summary(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The compaction request's answer: what a good summary keeps."""
    summary = scripted_text(
        f"Task: find why checkout failed for some orders last night, from {LOG}. "
        f"Done: read the log ({LOG_LINES} lines, saved whole in {_saved(request)}); "
        f"grep found one ERROR, line {ERROR_LINE}: order {10_000 + ERROR_LINE}, "
        "code VIP130, ValueError: a discount must be 0 to 100 percent, not 130. "
        f"apply_discount (shop/pricing.py, line {_line('def apply_discount')}) raises it for "
        f"a percent over 100; shop/cart.py, line {_called()} passes a code's percent to it. "
        "Left: answer the user."
    )
    return _reply(request, text_stream(*_pieces(summary)))


def _answer(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer; it says whether it was written from a summary."""
    messages = request["messages"]
    compacted = any(str(m.get("content") or "").startswith(SUMMARY_MARK) for m in messages)
    called = _called()
    source = "from the summary and the last reads" if compacted else "nothing was compacted"
    answer = scripted_text(
        f"Order {10_000 + ERROR_LINE} failed ({LOG}, line {ERROR_LINE}): its code VIP130 asked "
        f"for 130 percent off, and apply_discount (shop/pricing.py, line "
        f"{_line('def apply_discount')}) refuses any discount over 100 with ValueError; "
        f"shop/cart.py, line {called} passes a code's percent to it unchecked. Every other "
        f"order in the log was paid ({source})."
    )
    return _reply(request, text_stream(*_pieces(answer)))


# --- helpers ----------------------------------------------------------------------------------


def _call(number: int, name: str, **arguments: Any) -> tuple[str, str, str]:
    return f"call_{number}", name, json.dumps(arguments)


def _reply(request: Mapping[str, Any], chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks as the demo's model sends them, then the usage chunk with its count."""
    usage = {"prompt_tokens": provider_count(request), "completion_tokens": 60}
    named = [{**piece, "id": "chatcmpl-demo", "model": DEMO_MODEL} for piece in chunks]
    return [*named, chunk(None, usage=usage, chunk_id="chatcmpl-demo", model=DEMO_MODEL)]


def provider_count(request: Mapping[str, Any]) -> int:
    """How many tokens the scripted provider says a request was: its own rule of thumb."""
    sent = json.dumps(request["messages"], ensure_ascii=False)
    sent += json.dumps(request.get("tools", []), ensure_ascii=False)
    return math.ceil(len(sent) / CHARS_PER_TOKEN)


def _result(request: Mapping[str, Any], call_id: str) -> str:
    return next(
        (str(m["content"]) for m in request["messages"] if m.get("tool_call_id") == call_id), ""
    )


def _saved(request: Mapping[str, Any]) -> str:
    """Where the harness said it saved the log (the view of call_1 names the file)."""
    found = re.search(r"(?:saved in|text is in) (\S+?): ", _result(request, "call_1"))
    return found[1] if found else LOG


def _called() -> int:
    """The line of shop/cart.py that calls apply_discount."""
    return line_of(DEMO_FILES["shop/cart.py"], "return apply_discount")


def _line(needle: str) -> int:
    return line_of(PRICING, needle)


def _pieces(text: str) -> list[str]:
    """A text in pieces of a few words, as a stream brings it."""
    words = text.split(" ")
    pieces = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    return [piece if n == 0 else " " + piece for n, piece in enumerate(pieces)]

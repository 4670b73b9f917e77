"""A lone surrogate from the provider is cleaned where the reply is parsed, over the real wire.

JSON may carry `"\\ud800"`, half of a UTF-16 pair with no other half; Python
decodes it into a `str` that UTF-8 cannot encode, so the next request (and
everything that writes the history down) used to fail with a
`UnicodeEncodeError` traceback. The parser replaces each lone surrogate with
U+FFFD wherever it is: the text beside a call, the arguments, the call's id,
its name, the reasoning sent back. A name that becomes unknown that way is
answered like any unknown name: the model reads `unknown_tool`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from chapters.ch01.tests.chat_server import ChatServer, ScriptedReply
from chapters.ch01.tests.harness import FakeRunner
from chapters.ch01.tests.test_wire import run_over_wire
from shared.completion import parse_completion
from shared.scripted import response, tool_call

LONE = "\ud800"  # sent as the JSON escape "\ud800": the server writes ASCII JSON
ECHO = '{"command": "echo 1"}'


def placed(where: str) -> dict[str, Any]:
    """A reply with one shell call and a lone surrogate in the named place."""
    if where == "text":
        return response(f"Let me look {LONE}", [tool_call("c1", "shell", ECHO)])
    if where == "arguments":
        return response(None, [tool_call("c1", "shell", '{"command": "echo ' + LONE + '"}')])
    if where == "id":
        return response(None, [tool_call("c" + LONE, "shell", ECHO)])
    if where == "name":
        return response(None, [tool_call("c1", "shell" + LONE, ECHO)])
    assert where == "reasoning"
    reasoning = {"reasoning_content": f"thinking {LONE}"}
    return response(None, [tool_call("c1", "shell", ECHO)], message_extras=reasoning)


PLACES = ["text", "arguments", "id", "name", "reasoning"]


def cleaned(where: str) -> Callable[[dict[str, Any]], str]:
    """Where to find the cleaned value in the next request's assistant message."""
    return {
        "text": lambda m: m["content"],
        "arguments": lambda m: m["tool_calls"][0]["function"]["arguments"],
        "id": lambda m: m["tool_calls"][0]["id"],
        "name": lambda m: m["tool_calls"][0]["function"]["name"],
        "reasoning": lambda m: m["reasoning_content"],
    }[where]


def check_cleaned_over_the_wire(
    where: str, replies: Sequence[ScriptedReply], run: Callable[[str, FakeRunner], str]
) -> None:
    """Serve `replies` (the first with a lone surrogate in `where`, then "done") to `run`, a
    run of one shell call against the server's URL: the run ends, and the next request went
    out as valid UTF-8 with U+FFFD in that place. Later chapters' replies (streamed ones, say)
    make the same promise through their own `run`."""
    runner = FakeRunner()
    with ChatServer(replies) as server:
        answer = run(server.base_url, runner)
        requests = server.completion_requests()

    assert answer == "done"
    assert len(requests) == 2
    requests[1].raw.decode("utf-8")  # strict: what went out is valid UTF-8
    assistant, result = requests[1].body["messages"][2:4]
    assert "\ufffd" in cleaned(where)(assistant)
    assert result["tool_call_id"] == assistant["tool_calls"][0]["id"]
    if where == "name":  # no tool has that name: the model reads so, nothing ran
        assert result["content"].startswith("unknown_tool")
        assert runner.commands == []
    elif where == "arguments":
        assert runner.commands == ["echo \ufffd"]
    else:
        assert runner.commands == ["echo 1"]


@pytest.mark.parametrize("where", PLACES)
def test_a_lone_surrogate_in_a_reply_is_replaced_and_the_next_request_goes_out(
    where: str,
) -> None:
    replies = [(200, placed(where)), (200, response("done"))]
    check_cleaned_over_the_wire(where, replies, run_over_wire)


def test_a_pair_split_by_the_escapes_stays_one_character() -> None:
    """`"\\ud83d\\ude00"` is one emoji written as two escapes, not two lone halves."""
    body = json.loads('{"choices": [{"message": {"content": "ok \\ud83d\\ude00 \\ude00"}}]}')
    reply = parse_completion(body)
    assert reply.message.content == "ok \U0001f600 \ufffd"

"""Chapter 1 through the real `openai` SDK and real HTTP, against a local server.

The scripted-model tests prove the loop; these prove the wire: what the SDK
really sends for our history (null content, arguments byte-for-byte, tool
schemas, the key), that provider quirks survive a real round trip, and that
every way the endpoint can fail becomes one `ProviderError` line naming the
HTTP status and the fix. Everything runs on 127.0.0.1 (see conftest.py).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from chapters.ch01.loop import run_agent
from chapters.ch01.tests.chat_server import ChatServer, ScriptedReply, openai_error
from chapters.ch01.tests.harness import BASH, FakeRunner, ScriptedApprover, plain_console, printed
from chapters.testing import agent_of
from shared.config import Settings
from shared.errors import ProviderError
from shared.openai_client import OpenAIChatModel
from shared.process import CommandOutcome
from shared.scripted import response, tool_call
from tutorial.cli import cli

API_KEY = "test-key"
MODEL = "test-model"
COMPLETIONS_PATH = "/v1/chat/completions"
SHELL_PARAMETERS = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "minLength": 1,
            "description": "The command line to run.",
        }
    },
    "required": ["command"],
    "additionalProperties": False,
}


def real_model(base_url: str, **settings: str) -> OpenAIChatModel:
    """The real client for `base_url`; `settings` adds optional ones, OPENAI_MAX_TOKENS="500"."""
    required = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": MODEL}
    return OpenAIChatModel(  # a hang fails fast instead of in 600 s
        Settings.model_validate({**required, **settings}), timeout=10.0
    )


def run_over_wire(
    base_url: str, runner: FakeRunner | None = None, approvals: int = 1, prompt: str = "hi"
) -> str:
    runner = runner if runner is not None else FakeRunner()
    agent = agent_of(
        1,
        model=real_model(base_url),
        console=plain_console(),
        approver=ScriptedApprover([True] * approvals),
        cwd=Path.cwd(),
        runner=runner,
        shell=BASH,
    )
    return run_agent(prompt, agent)


def roles(body: dict[str, Any]) -> list[str]:
    return [message["role"] for message in body["messages"]]


@pytest.mark.parametrize(
    "arguments",
    [
        '{"command": "echo 42"}',
        # json.dumps would not write this spacing: a re-serialised string fails the check.
        '{ "command":"echo 42" }',
    ],
    ids=["as-openai-writes-it", "odd-spacing"],
)
def test_two_rounds_over_the_wire(arguments: str) -> None:
    runner = FakeRunner([CommandOutcome(0, "42\n", "")])
    replies: list[ScriptedReply] = [
        (200, response(None, [tool_call("call_1", "shell", arguments)])),
        (200, response("It printed 42.")),
    ]
    with ChatServer(replies) as server:
        answer = run_over_wire(server.base_url, runner, prompt="What does echo 42 print?")

    assert answer == "It printed 42."
    assert runner.commands == ["echo 42"]
    requests = server.requests
    assert [r.path for r in requests] == [COMPLETIONS_PATH, COMPLETIONS_PATH]
    assert all(r.method == "POST" for r in requests)
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in requests)
    assert all(r.body["model"] == MODEL for r in requests)

    first, second = requests[0].body, requests[1].body
    assert roles(first) == ["system", "user"]
    assert first["messages"][1]["content"] == "What does echo 42 print?"
    assert len(first["tools"]) == 1
    assert first["tools"][0]["type"] == "function"
    assert first["tools"][0]["function"]["name"] == "shell"
    assert first["tools"][0]["function"]["parameters"] == SHELL_PARAMETERS

    assert roles(second) == ["system", "user", "assistant", "tool"]
    assistant, tool = second["messages"][2], second["messages"][3]
    assert "content" in assistant
    assert assistant["content"] is None  # JSON null, not "" and not missing
    assert b'"content":null' in requests[1].raw.replace(b" ", b"")
    [call] = assistant["tool_calls"]
    assert call["id"] == "call_1"
    assert call["type"] == "function"
    assert call["function"]["name"] == "shell"
    assert call["function"]["arguments"] == arguments  # byte-for-byte, not re-serialised
    assert tool["tool_call_id"] == "call_1"
    assert "exit code 0" in tool["content"]
    assert "42" in tool["content"]


def test_provider_quirks_survive_the_wire() -> None:
    """finish_reason "stop" with tool calls, content "", object arguments, extra fields, no id."""
    runner = FakeRunner()
    quirky = response(
        "",
        [tool_call("", "shell", {"command": "echo hi"})],
        finish_reason="stop",
        message_extras={"refusal": None, "annotations": []},
    )
    with ChatServer([(200, quirky), (200, response("done"))]) as server:
        answer = run_over_wire(server.base_url, runner)

    assert answer == "done"
    assert runner.commands == ["echo hi"]
    requests = server.completion_requests()
    assert len(requests) == 2
    messages = requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assistant, tool = messages[2], messages[3]
    assert assistant["content"] is None
    assert "refusal" not in assistant and "annotations" not in assistant
    [call] = assistant["tool_calls"]
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"command": "echo hi"}
    assert isinstance(call["id"], str) and call["id"]
    assert tool["tool_call_id"] == call["id"]


@pytest.mark.parametrize(
    ("status", "error_message", "expected"),
    [
        (401, "Incorrect API key provided", ["HTTP 401", "OPENAI_API_KEY"]),
        (403, "Project does not have access", ["HTTP 403", "OPENAI_API_KEY"]),
        (404, "The model `test-model` does not exist", ["HTTP 404", "/v1", "OPENAI_BASE_URL"]),
        (429, "Rate limit reached", ["HTTP 429", "busy"]),
        (500, "The server had an error", ["HTTP 500", "server error", "Wait and run again"]),
        (503, "The engine is currently overloaded", ["HTTP 503", "Wait and run again"]),
    ],
    ids=["401", "403", "404", "429", "500", "503"],
)
def test_http_errors_name_the_status_and_the_fix(
    status: int, error_message: str, expected: list[str]
) -> None:
    with (
        ChatServer([(status, openai_error(error_message))]) as server,
        pytest.raises(ProviderError) as caught,
    ):
        run_over_wire(server.base_url)

    message = str(caught.value)
    for fragment in expected:
        assert fragment in message
    assert message.startswith(f"HTTP {status}:")
    assert f"(provider said: {error_message})" in message
    assert "\n" not in message
    assert caught.value.status == status
    assert len(server.requests) == 1  # the SDK's own retries are off


def test_a_404_at_a_url_without_v1_suggests_adding_it() -> None:
    with ChatServer([(404, openai_error("Invalid URL (POST /chat/completions)"))]) as server:
        root = server.base_url.removesuffix("/v1")
        with pytest.raises(ProviderError) as caught:
            run_over_wire(root)
    message = str(caught.value)
    assert f"Check OPENAI_BASE_URL (usually a missing /v1: {root}/v1)" in message
    assert message.index("OPENAI_BASE_URL") < message.index("OPENAI_MODEL")


@pytest.mark.parametrize("slash", ["", "/"], ids=["v1", "v1-slash"])
def test_a_404_at_a_url_that_ends_in_v1_points_at_the_model_first(slash: str) -> None:
    """The URL already has its /v1: the likelier mistake is the model's name."""
    missing = openai_error("The model `test-model` does not exist")
    with ChatServer([(404, missing)]) as server, pytest.raises(ProviderError) as caught:
        run_over_wire(server.base_url + slash)
    message = str(caught.value)
    assert "missing /v1" not in message
    assert "Check OPENAI_MODEL first: 'test-model' may not be a model this provider" in message
    assert message.index("OPENAI_MODEL") < message.index("OPENAI_BASE_URL")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"error": {"message": "model overloaded", "code": 503}}, "model overloaded"),
        ({"id": "chatcmpl-1", "object": "chat.completion", "choices": []}, "no choices"),
        ("<html><body>Welcome to nginx!</body></html>", "not JSON"),
        ("[" * 30_000 + "]" * 30_000, "nested too deeply"),  # json.loads: RecursionError
    ],
    ids=["error-in-200", "no-choices", "not-json", "nested-too-deeply"],
)
def test_bad_200_bodies_are_provider_errors(body: dict[str, Any] | str, expected: str) -> None:
    with ChatServer([(200, body)]) as server, pytest.raises(ProviderError) as caught:
        run_over_wire(server.base_url)

    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.status is None  # HTTP said 200; the body is what is wrong
    assert len(server.requests) == 1


MULTI_LINE = "1 validation error for ChatCompletionRequest\nmessages.2.content\n  Field required"


@pytest.mark.parametrize(
    ("status", "body"),
    [(400, openai_error(MULTI_LINE)), (200, {"error": {"message": MULTI_LINE}})],
    ids=["http-400", "error-in-200"],
)
def test_multi_line_provider_message_stays_one_line(status: int, body: dict[str, Any]) -> None:
    with ChatServer([(status, body)]) as server, pytest.raises(ProviderError) as caught:
        run_over_wire(server.base_url)

    assert "1 validation error" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_connection_refused_names_the_setting() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on that port now (the kernel does not hand it out again at once).
    base_url = f"http://127.0.0.1:{port}/v1"

    with pytest.raises(ProviderError) as caught:
        real_model(base_url).complete({"model": MODEL, "messages": []})

    message = str(caught.value)
    assert "cannot connect" in message
    assert base_url in message
    assert "OPENAI_BASE_URL" in message
    assert caught.value.status is None


def test_dns_failure_is_cannot_connect() -> None:
    base_url = "http://no-such-host.invalid/v1"
    with pytest.raises(ProviderError) as caught:
        run_over_wire(base_url)

    message = str(caught.value)
    assert "cannot connect" in message
    assert base_url in message
    assert "OPENAI_BASE_URL" in message
    assert caught.value.status is None


def failed_cli_run(base_url: str, **settings: str) -> Result:
    """`tutorial run --chapter 1` against `base_url` (`settings` added to its environment),
    which must fail as a clean exit 1: no escaped error, no traceback. Run it in an empty
    folder, so that no .env of the repository is read."""
    required = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": MODEL}
    result = CliRunner().invoke(
        cli,
        ["run", "--chapter", "1", "--prompt", "hi"],
        env={**required, **settings, "NO_COLOR": "1"},
    )
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an escaped error
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_cli_prints_one_line_for_a_provider_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env from the repo
    with ChatServer([(401, openai_error("Incorrect API key provided"))]) as server:
        result = failed_cli_run(server.base_url)

    assert result.stdout == ""  # no answer
    # The progress lines (chapter, user, waiting) are on stderr too; the error is one line, last.
    error_lines = [line for line in result.stderr.splitlines() if "Error" in line]
    assert error_lines == [result.stderr.splitlines()[-1]]
    assert error_lines[0].startswith("ProviderError: HTTP 401")
    assert "OPENAI_API_KEY" in error_lines[0]
    assert len(server.requests) == 1
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_every_request_bounds_the_reply_and_the_trace_shows_it() -> None:
    """A runaway reply ends at the output limit instead of using up the request's time."""
    console = plain_console()
    console.tracing = True
    with ChatServer([(200, response("hi"))]) as server:
        agent = agent_of(
            1,
            model=real_model(server.base_url, OPENAI_MAX_TOKENS="500"),
            console=console,
            approver=ScriptedApprover([]),
            cwd=Path.cwd(),
            runner=FakeRunner(),
            shell=BASH,
        )
        assert run_agent("hi", agent) == "hi"
        (sent,) = server.completion_requests()
    assert sent.body["max_tokens"] == 500
    assert '"max_tokens": 500' in printed(console)  # what --trace shows is what was sent
    assert "temperature" not in sent.body  # unset: the provider's default


def test_a_temperature_that_is_set_is_sent_with_every_request() -> None:
    with ChatServer([(200, response("hi"))]) as server:
        model = real_model(server.base_url, OPENAI_TEMPERATURE="0.2")
        model.complete({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
        (sent,) = server.completion_requests()
    assert sent.body["temperature"] == 0.2

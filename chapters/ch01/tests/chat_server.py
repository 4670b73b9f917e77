"""A tiny Chat Completions server on 127.0.0.1, for tests that go over the real wire.

The other chapter-1 tests use `ScriptedModel`, which hands the loop a response
*dict*: it proves the loop, but it assumes the wire format. This server lets a
test drive the real `openai` SDK (`OpenAIChatModel`) over real HTTP instead, so
what the SDK actually sends (headers, the JSON of every message, the tool
schemas) and how it reacts to real status codes and odd bodies are checked, not
assumed.

It is stdlib only. It answers POSTs to any path ending in `/chat/completions`
from a script of replies, in order; any other path gets a 404 shaped like
OpenAI's. Every request is recorded (path, headers, parsed JSON body) so a test
can assert on exactly what went over the wire:

    with ChatServer([(200, response("hi"))]) as server:
        ...  # point OPENAI_BASE_URL at server.base_url
    assert server.requests[0].body["model"] == "test-model"

A reply may also be a `StreamReply`: server-sent events, written one at a time
as a streaming provider sends them (`data:` events, `:` comments, a stream
that stops half-way, or one that never ends: `endless(...)`), with a hook that
runs before each event; or `HangUp()`,
which closes the connection without a word (a dropped connection).

Requests past the end of the script get a 500 naming the mistake, unless the
server was given `respond`: a function that answers each of them from what it
asked (a server that fails at random, say, for a benchmark).
"""

from __future__ import annotations

import itertools
import json
import socketserver
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

HOST = "127.0.0.1"
COMPLETIONS_SUFFIX = "/chat/completions"
HANDLER_SOCKET_TIMEOUT_SECONDS = 10.0  # a stuck client cannot keep a handler (or close) forever
# How often serve_forever checks for shutdown(); the stdlib default (0.5 s) would add
# half a second to every test that uses the server.
POLL_INTERVAL_SECONDS = 0.01

Body = Mapping[str, Any] | str  # a mapping is sent as JSON, a str is sent as it is


@dataclass(frozen=True)
class Reply:
    """One scripted answer: status, body and any extra headers."""

    status: int
    body: Body
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamReply:
    """An answer sent as server-sent events, each written and flushed on its own.

    `events` are sent exactly as given (see `sse_data`, `sse_comment`,
    `SSE_DONE`); the connection closes after the last one, as HTTP/1.0 does.
    They may never run out (`endless`): the server then writes as fast as the
    client reads, until the client hangs up.
    `before_event(i)` runs before event `i` is written: a test can pause
    there, or record when each event left.
    """

    events: Iterable[str]
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    before_event: Callable[[int], None] | None = None


@dataclass(frozen=True)
class HangUp:
    """No answer at all: the server reads the request and closes the connection."""


SSE_DONE = "data: [DONE]\n\n"


def endless(*events: str) -> StreamReply:
    """A stream that repeats `events` for ever: only the client can end it (by hanging up)."""
    return StreamReply(itertools.cycle(events))


def sse_data(payload: Mapping[str, Any] | str) -> str:
    """One `data:` event; a mapping is sent as JSON on one line, a str as it is."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n"


def sse_comment(text: str) -> str:
    """A comment line, which a client must ignore (a keep-alive, say)."""
    return f": {text}\n\n"


ScriptedReply = (
    Reply | StreamReply | HangUp | tuple[int, Body] | tuple[int, Body, Mapping[str, str]]
)


@dataclass(frozen=True)
class RecordedRequest:
    """What the server received. Header names are lower-cased (HTTP ignores their case);
    `body` is the parsed JSON, or None when the body was empty or not JSON (see `raw`)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any


Responder = Callable[[RecordedRequest], ScriptedReply]  # answers a request past the script


def as_reply(reply: ScriptedReply) -> Reply | StreamReply | HangUp:
    if isinstance(reply, Reply | StreamReply | HangUp):
        return reply
    if len(reply) == 2:
        return Reply(reply[0], reply[1])
    return Reply(reply[0], reply[1], reply[2])


def openai_error(message: str, type_: str = "invalid_request_error") -> dict[str, Any]:
    """An error body in the shape OpenAI sends."""
    return {"error": {"message": message, "type": type_, "param": None, "code": None}}


class _Server(ThreadingHTTPServer):
    # Handler threads are joined by server_close(), so nothing outlives the `with` block.
    daemon_threads = False
    block_on_close = True

    def __init__(
        self, replies: Sequence[Reply | StreamReply | HangUp], respond: Responder | None
    ) -> None:
        self.replies = list(replies)
        self.respond = respond
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        super().__init__((HOST, 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN; skip it: no name lookups in tests.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)

    def next_reply(self, request: RecordedRequest) -> Reply | StreamReply | HangUp:
        with self.lock:
            answered = sum(1 for r in self.requests if r.path.endswith(COMPLETIONS_SUFFIX))
            if answered > len(self.replies) and self.respond is not None:
                return as_reply(self.respond(request))
            if answered > len(self.replies):
                return Reply(
                    500,
                    openai_error(
                        f"chat_server: request {answered} but only "
                        f"{len(self.replies)} replies are scripted",
                        "server_error",
                    ),
                )
            return self.replies[answered - 1]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = HANDLER_SOCKET_TIMEOUT_SECONDS
    # HTTP/1.0: one request per connection, so every handler thread ends after its reply.
    protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean; tests read `server.requests` instead

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        request = RecordedRequest(
            method=self.command,
            path=path,
            headers={name.lower(): value for name, value in self.headers.items()},
            raw=raw,
            body=body,
        )
        self.server.record(request)
        reply: Reply | StreamReply | HangUp
        if self.command == "POST" and path.endswith(COMPLETIONS_SUFFIX):
            reply = self.server.next_reply(request)
        else:
            reply = Reply(404, openai_error(f"Invalid URL ({self.command} {path})"))
        if isinstance(reply, HangUp):
            self.close_connection = True  # nothing written: the client sees the connection drop
        elif isinstance(reply, StreamReply):
            self._stream(reply)
        else:
            self._send(reply)

    def _stream(self, reply: StreamReply) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        for name, value in {**headers, **reply.headers}.items():
            self.send_header(name, value)
        self.end_headers()
        for number, event in enumerate(reply.events):
            if reply.before_event is not None:
                reply.before_event(number)
            try:
                self.wfile.write(event.encode("utf-8"))
                self.wfile.flush()
            except OSError:  # the client went away (it stopped reading): nothing more to send
                return

    def _send(self, reply: Reply) -> None:
        if isinstance(reply.body, str):
            payload = reply.body.encode("utf-8")
            content_type = "text/plain; charset=utf-8"
        else:
            payload = json.dumps(reply.body).encode("utf-8")
            content_type = "application/json"
        self.send_response(reply.status)
        headers = {"Content-Type": content_type, **reply.headers}
        headers["Content-Length"] = str(len(payload))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class ChatServer:
    """Serves scripted Chat Completions replies from a daemon thread while in a `with` block."""

    def __init__(
        self, replies: Sequence[ScriptedReply] = (), *, respond: Responder | None = None
    ) -> None:
        self._replies = [as_reply(reply) for reply in replies]
        self._respond = respond
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ChatServer:
        self._server = _Server(self._replies, self._respond)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(POLL_INTERVAL_SECONDS,),
            name="chat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()  # stops serve_forever
            self._server.server_close()  # closes the socket, joins handler threads
        if self._thread is not None:
            self._thread.join()

    @property
    def port(self) -> int:
        return self._running().server_port

    @property
    def base_url(self) -> str:
        """The API root to use as OPENAI_BASE_URL, e.g. http://127.0.0.1:54321/v1."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy)."""
        server = self._running()
        with server.lock:
            return list(server.requests)

    def completion_requests(self) -> list[RecordedRequest]:
        """The requests that reached the completions endpoint."""
        return [r for r in self.requests if r.path.endswith(COMPLETIONS_SUFFIX)]

    def _running(self) -> _Server:
        if self._server is None:
            raise RuntimeError("ChatServer is not running: use it in a `with` block")
        return self._server

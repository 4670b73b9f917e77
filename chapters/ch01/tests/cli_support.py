"""What every chapter's command-line tests do: run a command, point it at a local server,
read what `--trace` printed.

One copy here, so a later chapter's CLI test says only what is new in its chapter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

import click
from click.testing import CliRunner, Result

from chapters.ch01.tests.chat_server import SSE_DONE, ChatServer, StreamReply, sse_data
from tutorial.cli import cli

# One block `--trace` prints: a `--- title ---` line, then the JSON it shows.
TRACED = re.compile(r"^--- (?P<title>[^\n]+?) ---\n(?P<body>\{\n.*?\n\})\n", re.M | re.S)


class CommandLine(Protocol):
    def __call__(
        self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
    ) -> Result: ...


def command_line(command: click.Command, prog_name: str) -> CommandLine:
    """`command` run in this process as `prog_name ARGS`, with `stdin` and `env` if given."""

    def run(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None) -> Result:
        return CliRunner().invoke(command, list(args), input=stdin, env=env, prog_name=prog_name)

    return run


def tutorial(*args: str, stdin: str | None = None, env: Mapping[str, str] | None = None) -> Result:
    """`python -m tutorial ARGS`, in this process."""
    return command_line(cli, "python -m tutorial")(*args, stdin=stdin, env=env)


def model_env(server: ChatServer | str) -> dict[str, str]:
    """The provider settings of a run against `server` (or the URL given)."""
    url = server if isinstance(server, str) else server.base_url
    return {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}


def traced(stderr: str) -> list[tuple[str, dict[str, Any]]]:
    """Every block `--trace` printed (plain mode), in order: its title and its JSON."""
    return [(m["title"], json.loads(m["body"])) for m in TRACED.finditer(stderr)]


def traced_by_title(stderr: str) -> dict[str, dict[str, Any]]:
    """The blocks `--trace` printed by title (a title printed twice: its last block)."""
    return dict(traced(stderr))


def traced_requests(stderr: str, *, one_run: bool = True) -> list[dict[str, Any]]:
    """The request bodies `--trace` printed, in order. With `one_run`, checked to be numbered
    1, 2, ...; without, each run may number its own from 1."""
    found = [(title, body) for title, body in traced(stderr) if re.fullmatch(r"request \d+", title)]
    if one_run:
        numbers = [int(title.split()[1]) for title, _ in found]
        assert numbers == list(range(1, len(found) + 1))
    return [body for _, body in found]


def sse(*chunks: Mapping[str, Any], finished: bool = True) -> StreamReply:
    """A streamed reply of `chunks`; unless `finished` is false, ended by `data: [DONE]`."""
    events = [sse_data(c) for c in chunks]
    return StreamReply([*events, SSE_DONE] if finished else events)


def in_order(text: str, *parts: str) -> list[int]:
    """Where each part is found, each after the one before; fails on a part out of order."""
    found, start = [], 0
    for part in parts:
        start = text.index(part, start)
        found.append(start)
    return found

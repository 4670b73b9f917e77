"""A session log holding a lone surrogate resumes: it is cleaned as the log is read.

The log writes a lone surrogate as its JSON escape (`"\\ud800"`), so the line
stays JSON; reading it back used to put the surrogate into the resumed history,
and the first request failed with a `UnicodeEncodeError` traceback. Replaying
the log replaces each lone surrogate with U+FFFD, as the reply parser does.
Over the real `openai` SDK, streamed, against the local server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chapters.ch01.tests.chat_server import ChatServer
from chapters.ch08.tests.composed import write_files
from chapters.ch09.sessions import read_session
from chapters.ch09.tests.test_cli_and_wire import NEXT, bodies, read, run_on, said, the_log

pytestmark = pytest.mark.usefixtures("isolated")


def test_a_log_holding_a_lone_surrogate_is_resumed_and_the_next_request_goes_out(
    tmp_path: Path,
) -> None:
    write_files(tmp_path / "ws", {"a.txt": "alpha\n"})
    with ChatServer([read("call_1", "a.txt"), said("It says alpha.")]) as server:
        assert run_on(tmp_path, server).exit_code == 0
    log = the_log(tmp_path)
    text = log.read_text(encoding="utf-8")
    assert text.count("It says alpha.") == 1
    log.write_text(text.replace("It says alpha.", "It says \\ud800alpha."), encoding="utf-8")
    assert read_session(log).history[-1].content == "It says \ufffdalpha."

    with ChatServer([said("It says beta.")]) as server:
        resumed = run_on(tmp_path, server, "--resume", prompt=NEXT)
        (sent,) = bodies(server)
    assert resumed.exit_code == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    assert sent["messages"][-2] == {"role": "assistant", "content": "It says \ufffdalpha."}

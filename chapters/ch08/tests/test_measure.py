"""The context's size: the provider's count of the last request, plus an estimate of what
changed since; and the gauge that shows it under the spinner."""

from __future__ import annotations

import io
import re
from pathlib import Path

from chapters.ch08.measure import ContextMeter, estimate_tokens, message_tokens, messages_tokens
from chapters.ch08.tests.support import Rig, answering, assistant, calling, emit, start, tool
from chapters.ch08.view import context_gauge, gauge_line
from shared.completion import Usage
from shared.console import Console
from shared.messages import UserMessage

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_cjk_is_one_token_a_character_and_other_text_four_characters_a_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 100) == 100
    assert estimate_tokens("abcde") == 2  # rounded up
    assert estimate_tokens("上下文压缩") == 5
    assert estimate_tokens("こんにちは、世界。한국어") == 12
    assert estimate_tokens("压缩 the context") == 2 + 3  # 2 CJK, 12 others


def test_a_message_is_counted_on_the_json_it_is_sent_as() -> None:
    message = UserMessage(content="x" * 400)
    assert message_tokens(message) == estimate_tokens(
        '{"role": "user", "content": "' + "x" * 400 + '"}'
    )


def test_without_a_measurement_everything_is_estimated() -> None:
    meter = ContextMeter()
    history = start()
    assert meter.size(history, tools=50) == messages_tokens(history) + 50
    assert not meter.measured


def test_with_a_measurement_only_what_changed_since_is_estimated() -> None:
    meter = ContextMeter()
    history = [*start(), assistant("c1"), tool("c1", "y" * 4_000)]
    meter.measure(history, tools=50, usage=Usage(prompt_tokens=3_000))
    assert meter.size(history, tools=50) == 3_000 and meter.measured  # nothing changed

    reply = assistant(text="more")
    grown = [*history, reply, UserMessage(content="z" * 400)]
    assert meter.size(grown, tools=50) == 3_000 + messages_tokens(grown[-2:])

    stubbed = [*history[:3], tool("c1", "stub"), *grown[4:]]  # the big result replaced
    assert meter.size(stubbed, tools=80) == (
        3_000
        + messages_tokens(stubbed[3:])
        - message_tokens(history[3])
        + 30  # 30 more tokens of tool schemas
    )


def test_a_reply_without_usage_keeps_the_older_measurement() -> None:
    meter = ContextMeter()
    history = start()
    meter.measure(history, tools=0, usage=Usage(prompt_tokens=700))
    meter.measure([*history, assistant(text="x")], tools=0, usage=None)
    assert meter.size(history, tools=0) == 700


def test_the_loop_feeds_the_meter_from_each_responses_usage(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [calling(emit("c1", 400), tokens=1_234), answering()])
    rig.run()
    meter = rig.compactor.meter
    assert meter.measured
    # the second request: 1,234 measured, plus the reply and the result added since
    assert meter.last == 1_234 + messages_tokens(rig.history[2:4])


def test_the_gauge_shows_tokens_of_the_window_and_where_the_number_comes_from() -> None:
    assert gauge_line(8_000, 32_000, measured=True) == (
        "上下文 context █████░░░░░░░░░░░░░░░ 8,000 / 32,000 tokens (25%), measured"
    )
    assert gauge_line(40_000, 32_000, measured=False).endswith("(125%), estimated")
    assert "░" not in gauge_line(40_000, 32_000, measured=False)


def test_the_gauge_is_drawn_under_the_spinner(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [calling(emit("c1", 400), tokens=9_000), answering()])
    console = Console(out=io.StringIO(), err=io.StringIO(), fancy=True)
    console.keep_in_view(lambda: context_gauge(rig.compactor.meter, rig.compactor.window))
    assert context_gauge(rig.compactor.meter, 32_000) is None  # nothing sized yet
    rig.run()
    with console.waiting("waiting for the model"):
        pass
    assert isinstance(console.err, io.StringIO)
    drawn = ANSI.sub("", console.err.getvalue())
    assert f"{rig.compactor.meter.last:,} / 32,000 tokens" in drawn
    assert "measured" in drawn

"""The boundary rule: the kept recent messages never split a call from its results, for every
shape a recent history can have, and for hundreds of random histories driven through the
loop; and what happens to the next request when the rule is switched off."""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from chapters.ch08 import boundary
from chapters.ch08.boundary import head_end, kept_start, without_oldest_turn
from chapters.ch08.compaction import COMPACT_MARK, SUMMARY_MARK
from chapters.ch08.measure import estimate_tokens, message_tokens
from chapters.ch08.tests.support import (
    PROMPT,
    SYSTEM,
    DenyFill,
    EveryMessage,
    Rig,
    answering,
    assistant,
    calling,
    emit,
    is_compaction,
    start,
    summary,
    tool,
)
from shared.agent import Feature, KeepGoing, Run
from shared.contract import ContractChecker
from shared.errors import MessageContractError, ProviderError, ProviderErrorKind
from shared.messages import Message, SystemMessage, UserMessage
from shared.scripted import response, tool_call

WIRE = TypeAdapter(Message)

# Recent histories of every shape, as they stand before a request (every call answered):
# (name, messages after the system prompt and the prompt).
SHAPES: list[tuple[str, list[Message]]] = [
    (
        "several calls per reply",
        [assistant("a1", "a2", "a3"), tool("a1"), tool("a2"), tool("a3")],
    ),
    (
        "results in another order than the calls",
        [assistant("b1", "b2"), tool("b2"), tool("b1"), assistant("b3"), tool("b3")],
    ),
    (
        "failed calls",
        [
            assistant("f1", "f2"),
            tool("f1", "emit_failed: " + "x" * 300),
            tool("f2", "shell_failed: exit code 2"),
        ],
    ),
    (
        "denied calls",
        [assistant("d1", "d2"), tool("d1", "denied: not allowed"), tool("d2", "ok: ran")],
    ),
    (
        "calls that did not validate",
        [
            assistant("v1", "v2"),
            tool("v1", "unknown_tool: no tool named nope"),
            tool("v2", "invalid: size: field required"),
        ],
    ),
    (
        "text, then a harness message",
        [
            assistant(text="I am done"),
            UserMessage(content="[harness] not yet"),
            assistant("t1"),
            tool("t1"),
        ],
    ),
    (
        "a reminder after results",
        [assistant("r1"), tool("r1", "ok " * 200), UserMessage(content="[harness reminder]")],
    ),
    (
        "a call with text beside it",
        [assistant("s1", text="reading it now"), tool("s1", "ok: " + "y" * 900)],
    ),
]


def recent(shape: list[Message]) -> list[Message]:
    """Some older turns, then the shape: the kept part must be found inside the shape."""
    older: list[Message] = [
        assistant("o1"),
        tool("o1", "ok: " + "o" * 500),
        assistant("o2"),
        tool("o2"),
    ]
    return [*start(), *older, *shape]


@pytest.mark.parametrize(("name", "shape"), SHAPES, ids=[name for name, _ in SHAPES])
def test_the_kept_part_starts_at_a_clean_boundary_for_every_budget(
    name: str, shape: list[Message]
) -> None:
    history = recent(shape)
    head = head_end(history)
    total = sum(message_tokens(m) for m in history[head:])
    for budget in range(0, total + 2):
        kept = kept_start(history, budget, message_tokens, after=head)
        assert head <= kept <= len(history)
        assert kept == len(history) or history[kept].role != "tool", (name, budget)
        assert sum(message_tokens(m) for m in history[kept:]) <= budget
        earlier = [
            i
            for i in range(head, kept)
            if history[i].role != "tool" and sum(message_tokens(m) for m in history[i:]) <= budget
        ]
        assert earlier == [], (name, budget)  # the most that fits is kept
        compacted = [*history[:head], UserMessage(content=SUMMARY_MARK), *history[kept:]]
        ContractChecker().check(compacted)


def test_the_system_prompt_and_the_prompt_are_the_head() -> None:
    history = recent(SHAPES[0][1])
    assert head_end(history) == 2
    assert head_end([SystemMessage(content="s")]) == 1


def test_dropping_the_oldest_turn_keeps_whole_turns_and_never_the_last_one() -> None:
    history = recent(SHAPES[0][1])
    shorter = without_oldest_turn(history, after=2)
    assert shorter is not None
    assert shorter == [*history[:2], *history[4:]]  # o1 and its result
    ContractChecker().check(shorter)
    last_turn = [*start(), assistant("x1", "x2"), tool("x1"), tool("x2")]
    assert without_oldest_turn(last_turn, after=2) is None


# --- through the loop: several calls per reply, failed, denied and invalid calls ---------------


def test_a_run_with_failed_denied_and_invalid_calls_is_compacted_at_a_clean_boundary(
    tmp_path: Path,
) -> None:
    steps = [
        calling(emit("c1", 500), emit("c2", -300), emit("c3", 400, "d")),
        calling(tool_call("c4", "nope", "{}"), emit("c5", 600)),
        calling(emit("c6", 300, "d"), emit("c7", -200)),
        calling(emit("c8", 700), emit("c9", 700), emit("c10", 700), tokens=9_000),
        summary(),
        answering(),
    ]
    rig = Rig(tmp_path, steps, window=10_000, keep_tokens=700, authorize=[DenyFill("d")])
    assert rig.run() == "done"
    assert rig.compactor.compactions == 1
    sent = rig.requests[-1]["messages"]
    assert sent[2]["content"].startswith(SUMMARY_MARK)
    assert sent[3:] == [] or sent[3]["role"] != "tool"
    ContractChecker().check([WIRE.validate_python(m) for m in sent])


# --- the experiment: switch the rule off --------------------------------------------------------


def test_without_the_boundary_rule_a_split_pair_breaks_the_next_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chapter's experiment. With `clean_start` always True, the kept part may begin at a
    tool message whose call was summarised away; the next request then breaks the message
    contract: our checker stops it, where a provider would answer with a 400."""
    monkeypatch.setattr(boundary, "clean_start", lambda history, index: True)
    steps = [
        calling(emit("c1", 500)),
        calling(emit("c2", 500)),
        calling(emit("c3", 1_000), emit("c4", 1_000), emit("c5", 1_000), tokens=9_000),
        summary(),
        answering("never"),
    ]
    rig = Rig(tmp_path, steps, window=10_000, keep_tokens=350)  # room for one result
    with pytest.raises(MessageContractError, match=r'without a matching tool call: \["c5"\]'):
        rig.run()
    assert rig.compactor.compactions == 1
    assert len(rig.requests) == 4  # the broken request was never sent
    assert rig.history[3].role == "tool"  # the kept part starts at c5's result, cut off


# --- hundreds of random histories --------------------------------------------------------------

KINDS = ("ok", "failed", "denied", "invalid")


@dataclass
class Turn:
    calls: list[tuple[int, str]]  # (size, kind) per call; none: a text reply the harness refuses
    tokens_factor: float | None  # the provider's count is the estimate times this; None: no usage
    remind: bool  # a harness message enters the history before the next request


class Nudge(Feature):
    """Refuses a text answer until the script is over, and adds a reminder on some turns:
    the user-role messages a harness puts between turns."""

    def __init__(self, model: StrictModel) -> None:
        self.model = model

    def before_request(self, run: Run) -> None:
        if self.model.remind_now():
            run.add(UserMessage(content="[harness reminder, not from the user] keep going"))

    def on_stop(self, run: Run, answer: str) -> str | KeepGoing:
        if answer != "done":  # a text reply in the middle of the script
            return KeepGoing(UserMessage(content="[harness] not done yet"))
        return answer


@dataclass
class StrictModel:
    """A provider that refuses (raises) any request breaking the message contract, and counts
    tokens a little differently from the harness's estimate, as a real tokenizer does."""

    turns: list[Turn]
    overflow_first: list[bool]  # per compaction request: answer it with a context-length error
    name: str = "strict-model"
    label: str = "strict-model (scripted, no network)"
    requests: list[dict[str, Any]] = field(default_factory=list)
    played: int = 0
    compaction_requests: int = 0
    calls: int = 0

    def turns_left(self) -> bool:
        return self.played < len(self.turns)

    def remind_now(self) -> bool:
        return 0 < self.played <= len(self.turns) and self.turns[self.played - 1].remind

    def complete(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        self.requests.append(copy.deepcopy(dict(request)))
        messages = [WIRE.validate_python(m) for m in request["messages"]]
        ContractChecker().check(messages)  # a provider's 400, raised where the test sees it
        assert messages[0] == SystemMessage(content=SYSTEM)
        assert messages[1] == UserMessage(content=PROMPT)
        if is_compaction(request):
            assert request["tool_choice"] == "none"
            assert messages[-1].content.startswith(COMPACT_MARK)  # type: ignore[union-attr]
            number = self.compaction_requests
            self.compaction_requests += 1
            if number < len(self.overflow_first) and self.overflow_first[number]:
                raise ProviderError(
                    "too long",
                    400,
                    kind=ProviderErrorKind.BAD_REQUEST,
                    body='{"error": {"message": "maximum context length exceeded"}}',
                )
            return summary(f"summary {number}")
        if not self.turns_left():
            return answering("done")
        turn = self.turns[self.played]
        self.played += 1
        calls = []
        for size, kind in turn.calls:
            self.calls += 1
            call_id = f"call_{self.calls}"
            if kind == "invalid":
                calls.append(tool_call(call_id, "nope", "{}"))
            else:
                fill = {"ok": "x", "denied": "d", "failed": "x"}[kind]
                calls.append(emit(call_id, -size if kind == "failed" else size, fill))
        body = response(None, calls) if calls else response("some text, not done")
        if turn.tokens_factor is not None:
            text = "".join(str(m) for m in request["messages"]) + str(request.get("tools"))
            tokens = math.ceil(estimate_tokens(text) * turn.tokens_factor)
            body["usage"] = {"prompt_tokens": tokens, "completion_tokens": 5}
        return body


turn_strategy = st.builds(
    Turn,
    calls=st.lists(
        st.tuples(st.integers(1, 6_000), st.sampled_from(KINDS)), min_size=0, max_size=4
    ),
    tokens_factor=st.one_of(st.none(), st.floats(0.6, 1.6)),
    remind=st.booleans(),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(turn_strategy, min_size=3, max_size=40),
    overflow_first=st.lists(st.booleans(), max_size=6),
    window=st.integers(1_000, 12_000),  # small beside the results: most runs compact
    compact_at=st.floats(0.3, 1.0),
    keep_share=st.floats(0.0, 0.6),
    keep_results=st.integers(1, 8),
    offload_over=st.integers(2_000, 8_000),
)
def test_every_request_sent_passes_the_contract_whatever_was_compacted(
    turns: Sequence[Turn],
    overflow_first: list[bool],
    window: int,
    compact_at: float,
    keep_share: float,
    keep_results: int,
    offload_over: int,
) -> None:
    model = StrictModel(list(turns), overflow_first)
    with tempfile.TemporaryDirectory() as folder:
        rig = Rig(
            Path(folder),
            [],
            model=model,
            window=window,
            compact_at=compact_at,
            keep_tokens=int(window * keep_share),
            keep_results=keep_results,
            offload_over=offload_over,
            authorize=[DenyFill("d")],
            more_features=[Nudge(model), every := EveryMessage()],
            max_turns=len(turns) * 2 + 5,
        )
        assert rig.run() == "done"
        written = [line["message"] for line in rig.transcript_lines() if "note" not in line]
    event(f"compactions: {min(rig.compactor.compactions, 3)}")
    event(f"summary requests refused: {min(sum(overflow_first[: model.compaction_requests]), 2)}")
    assert written == [wire for _, wire in every.seen]  # nothing lost
    assert model.compaction_requests >= rig.compactor.compactions
    ContractChecker().check(rig.history)

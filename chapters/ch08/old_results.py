"""Old tool results: after `keep` more requests, a long result is sent as a short stub.

A result the model read six requests ago has mostly done its work, but every
request still carries all of it. So before each request this feature looks for
tool messages that

    have been sent in `keep` requests already (that many replies came after them), and
    are longer than `over` characters,

and puts a stub in their place, in the history itself:

    [harness: old tool result, replaced to keep the context small] read_file
    {"path": "app.log"} (call_7) returned 48,213 characters, starting "ok: app.log, lines 1-2000 of
    9000". The whole text is in .tutorial/tool-results/call_7.txt: read it with read_file
    (path, offset, limit) or grep.

The full text is kept first: a result that was offloaded already has its file;
any other is saved the same way now (chapters/ch08/offload.py); if that fails,
it is in the run's transcript (chapters/ch08/transcript.py); if that failed
too, the result stays as it is. A stub is made once and then stays the same
message, so every later request carries the same bytes where the result was:
the request's prefix stays byte-identical from one request to the next, which
is what a provider's prefix cache needs. The history changes with
`Run.replace_history`, so the contract checker sees the new message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chapters.ch08.offload import Offloader
from chapters.ch08.transcript import Transcript
from shared.agent import Feature, Run
from shared.messages import AssistantMessage, Message, ToolCall, ToolMessage

DEFAULT_KEEP_RESULTS = 6  # requests that carry a result whole: `--keep-results`
STUB_OVER = 2_000  # characters: a result this long or shorter is never replaced
STUB_MARK = "[harness: old tool result, replaced to keep the context small]"
QUOTED_CHARS = 80  # of the call's arguments, and of the result's first line


@dataclass
class OldResults(Feature):
    offloader: Offloader
    transcript: Transcript
    keep: int = DEFAULT_KEEP_RESULTS
    over: int = STUB_OVER
    _kept: set[str] = field(default_factory=set)  # ids whose text could be saved nowhere

    def before_request(self, run: Run) -> None:
        replies_after = sum(1 for message in run.history if message.role == "assistant")
        calls: dict[str, ToolCall] = {}
        rewritten: list[Message] | None = None
        saved = 0
        for index, message in enumerate(run.history):
            if isinstance(message, AssistantMessage):
                replies_after -= 1
                calls.update((call.id, call) for call in message.tool_calls)
            elif (
                isinstance(message, ToolMessage)
                and replies_after >= self.keep
                and len(message.content) > self.over
                and not message.content.startswith(STUB_MARK)
                and message.tool_call_id not in self._kept
            ):
                stub = self.stub(message, calls.get(message.tool_call_id))
                if stub is None:
                    self._kept.add(message.tool_call_id)
                    continue
                rewritten = rewritten or list(run.history)
                rewritten[index] = stub
                saved += len(message.content) - len(stub.content)
        if rewritten is not None:
            run.replace_history(rewritten)
            run.agent.console.info(
                f"harness: old tool results replaced by stubs ({saved:,} characters less to send)"
            )

    def stub(self, message: ToolMessage, call: ToolCall | None) -> ToolMessage | None:
        """The stub for `message`, once its full text is safe; None if it is nowhere else."""
        call_id, size = message.tool_call_id, len(message.content)
        where = self.offloader.saved_for(call_id, message.content)
        if where is None:
            try:
                where = self.offloader.save(call_id, message.content)
            except OSError:
                where = None
        if where is not None:
            size = where.characters  # of the whole result, not of the view the model read
            found = (
                f"The whole text is in {where.path}: "
                "read it with read_file (path, offset, limit) or grep."
            )
        elif self.transcript.intact:
            found = (
                f"The whole text is in the run's transcript {self.transcript.shown}, "
                f'on the line whose "tool_call_id" is "{call_id}".'
            )
        else:
            return None
        what = f"{call.function.name} {_quoted(call.function.arguments)}" if call else "a call"
        first_line = _quoted(message.content.split("\n", 1)[0])
        said = f'returned {size:,} characters, starting "{first_line}"'
        return ToolMessage(
            tool_call_id=call_id, content=f"{STUB_MARK} {what} ({call_id}) {said}. {found}"
        )


def _quoted(text: str) -> str:
    return text if len(text) <= QUOTED_CHARS else f"{text[:QUOTED_CHARS]}…"

"""What chapter 11's tests share: a clock that never sleeps, real models on a local server,
consoles that record, and one exchange through `ask_model` as the loop makes it."""

from __future__ import annotations

import io
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

from chapters.ch07.streaming import StreamingChatModel
from chapters.ch11.recovery_console import RecoveryConsole
from shared.completion import ModelClient, ModelReply, ask_model
from shared.config import Settings
from shared.console import Console
from shared.messages import Message, SystemMessage, UserMessage
from shared.openai_client import OpenAIChatModel
from shared.tools import ToolRegistry

HISTORY: list[Message] = [SystemMessage(content="You are a test agent."), UserMessage(content="hi")]


@dataclass
class FakeClock:
    """Time that moves only when something waits: every wait is recorded, none is slept."""

    time: float = 1000.0
    sleeps: list[float] = field(default_factory=list)
    during_sleep: Callable[[float], None] | None = None  # called at the start of each wait

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        if self.during_sleep is not None:
            self.during_sleep(seconds)
        self.sleeps.append(seconds)
        self.time += seconds


def settings(base_url: str, model: str = "test-model") -> Settings:
    return Settings.model_validate(
        {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "OPENAI_MODEL": model}
    )


def plain_model(base_url: str, model: str = "test-model") -> OpenAIChatModel:
    return OpenAIChatModel(settings(base_url, model), timeout=10.0)


def streaming_model(base_url: str, model: str = "test-model") -> StreamingChatModel:
    return StreamingChatModel(settings(base_url, model), timeout=10.0)


def recording_console(*, trace: bool = False, clock: FakeClock | None = None) -> RecoveryConsole:
    return RecoveryConsole(
        out=io.StringIO(), err=io.StringIO(), fancy=False, trace=trace, clock=clock
    )


def printed(console: Console) -> str:
    assert isinstance(console.err, io.StringIO)
    return console.err.getvalue()


def ask(
    model: ModelClient, console: Console | None = None, history: list[Message] | None = None
) -> ModelReply:
    """One request, exactly as the loop's step 2 sends it."""
    observer = console or recording_console()
    return ask_model(model, history or HISTORY, ToolRegistry().snapshot(), observer, 1)


def closed_port_url() -> str:
    """The URL of a loopback port nothing listens on: a connection there is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # the kernel does not hand the port out again at once

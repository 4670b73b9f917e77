"""Streams in the shapes real providers send, one per quirk the assembler has to absorb.

Each stream is written here from the provider's documented or published chunks
(its API docs, or chunks quoted in public bug reports against it), cut down to
what shows the quirk; ids, text and numbers are made up. A `str` in `events`
is an SSE comment line, which only the wire tests can send.

    OPENAI       the reference: parallel calls by `index`, usage in a chunk with `choices: []`
    DEEPSEEK     `reasoning_content` before the call; `: keep-alive` comments; usage with
                 the finish
    QWEN         (DashScope) continuations with `"id": ""`, no name, and `"function": {}`
    KIMI         usage inside `choices[0]`, not at the top
    GLM          the whole call and `finish_reason` in one chunk
    GEMINI       no `index`; arguments split over indexless deltas; `extra_content` with the
                 thought signature, also alone; a second call at the same position with a
                 new id; `finish_reason: "stop"` with calls
    OLLAMA       every call at `index: 0`, each with its own id; `reasoning` for thinking
    VLLM         the last delta repeats id, type and name with the rest of the arguments,
                 in the chunk that finishes; usage on every chunk
    VLLM_NO_ID   streamed calls with no id at all
    LLAMA_CPP    the name repeated in every delta; the id inside `function`
    OPENROUTER   `: OPENROUTER PROCESSING` comments; reasoning as `reasoning`
    AZURE        a first chunk with `choices: []` and `prompt_filter_results`; a trailing
                 chunk whose choice has no delta
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chapters.ch01.tests.chat_server import SSE_DONE, sse_comment, sse_data

Event = Mapping[str, Any] | str


@dataclass(frozen=True)
class ProviderStream:
    provider: str
    events: tuple[Event, ...]
    done: bool = True  # ends with `data: [DONE]`

    def chunks(self) -> list[Mapping[str, Any]]:
        """The JSON chunks, as a client gets them once the SSE framing is read."""
        return [event for event in self.events if not isinstance(event, str)]

    def sse(self) -> list[str]:
        """The events as they go over the wire."""
        events = [sse_comment(e) if isinstance(e, str) else sse_data(e) for e in self.events]
        return [*events, SSE_DONE] if self.done else events


def args(**values: Any) -> str:
    return json.dumps(values)


def _chunk(choices: list[Mapping[str, Any]], **top: Any) -> dict[str, Any]:
    return {
        "id": top.pop("id", "chatcmpl-1"),
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": top.pop("model", "some-model"),
        "choices": choices,
        **top,
    }


def _delta(delta: Mapping[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    return {"index": 0, "delta": dict(delta), "finish_reason": finish, **more}


OPENAI = ProviderStream(
    "openai",
    (
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_A",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": ""},
                            }
                        ],
                    }
                )
            ],
            usage=None,
        ),
        _chunk(
            [_delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]})], usage=None
        ),
        _chunk(
            [_delta({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.py"}'}}]})],
            usage=None,
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_B",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": ""},
                            }
                        ]
                    }
                )
            ],
            usage=None,
        ),
        _chunk(
            [_delta({"tool_calls": [{"index": 1, "function": {"arguments": '{"path": "b.py"}'}}]})],
            usage=None,
        ),
        _chunk([_delta({}, "tool_calls")], usage=None),
        _chunk([], usage={"prompt_tokens": 80, "completion_tokens": 30, "total_tokens": 110}),
    ),
)

DEEPSEEK = ProviderStream(
    "deepseek",
    (
        "keep-alive",
        _chunk([_delta({"role": "assistant", "content": None, "reasoning_content": ""})]),
        _chunk([_delta({"content": None, "reasoning_content": "The user wants "})]),
        "keep-alive",
        _chunk([_delta({"content": None, "reasoning_content": "the file read."})]),
        _chunk(
            [
                _delta(
                    {
                        "content": None,
                        "reasoning_content": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_00_ds",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": ""},
                            }
                        ],
                    }
                )
            ]
        ),
        _chunk(
            [
                _delta(
                    {
                        "content": None,
                        "tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a.py"}'}}],
                    }
                )
            ]
        ),
        _chunk(
            [_delta({"content": ""}, "tool_calls")],
            usage={
                "prompt_tokens": 50,
                "completion_tokens": 20,
                "total_tokens": 70,
                "completion_tokens_details": {"reasoning_tokens": 8},
            },
        ),
    ),
)

QWEN = ProviderStream(
    "qwen",
    (
        _chunk(
            [
                _delta(
                    {
                        "content": None,
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_0bdc",
                                "type": "function",
                                "function": {"name": "glob", "arguments": ""},
                            }
                        ],
                    },
                    logprobs=None,
                )
            ],
            usage=None,
        ),
        _chunk(
            [
                _delta(
                    {
                        "content": None,
                        "tool_calls": [{"function": {}, "index": 0, "id": "", "type": "function"}],
                    }
                )
            ],
            usage=None,
        ),
        _chunk(
            [
                _delta(
                    {
                        "content": None,
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_1f2e",
                                "type": "function",
                                "function": {"name": "grep", "arguments": '{"pattern":'},
                            }
                        ],
                    }
                )
            ],
            usage=None,
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "function": {"arguments": ' "TODO"}'},
                                "index": 1,
                                "id": "",
                                "type": "function",
                            }
                        ]
                    }
                )
            ],
            usage=None,
        ),
        _chunk([_delta({}, "tool_calls")], usage=None),
        _chunk([], usage={"prompt_tokens": 300, "completion_tokens": 24, "total_tokens": 324}),
    ),
)

KIMI = ProviderStream(
    "kimi",
    (
        _chunk([_delta({"role": "assistant", "content": ""})], model="kimi-k2"),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "functions.read_file:0",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": ""},
                            }
                        ]
                    }
                )
            ],
            model="kimi-k2",
        ),
        _chunk(
            [_delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a.py"}'}}]})],
            model="kimi-k2",
        ),
        _chunk(
            [
                _delta(
                    {},
                    "tool_calls",
                    usage={"prompt_tokens": 19, "completion_tokens": 13, "total_tokens": 32},
                )
            ],
            model="kimi-k2",
        ),
    ),
)

GLM = ProviderStream(
    "glm",
    (
        _chunk([_delta({"role": "assistant", "content": "Let me look."})], model="glm-4.6"),
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "call_-8946",
                                "index": 0,
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                            }
                        ],
                    },
                    "tool_calls",
                )
            ],
            model="glm-4.6",
            usage={"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
        ),
    ),
)

GEMINI_SIGNATURE = {"google": {"thought_signature": "CiQB0e2Kb2signature"}}
GEMINI = ProviderStream(
    "gemini",
    (
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "function-call-1",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path": '},
                            }
                        ],
                    }
                )
            ],
            model="gemini-3-flash",
        ),
        _chunk(
            [_delta({"tool_calls": [{"function": {"arguments": '"a.py"}'}}]})],
            model="gemini-3-flash",
        ),
        _chunk(
            [_delta({"tool_calls": [{"extra_content": GEMINI_SIGNATURE}]})], model="gemini-3-flash"
        ),
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "function-call-2",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path": "b.py"}'},
                            }
                        ],
                    }
                )
            ],
            model="gemini-3-flash",
        ),
        _chunk(
            [_delta({}, "stop")],
            model="gemini-3-flash",
            usage={"prompt_tokens": 90, "completion_tokens": 40, "total_tokens": 130},
        ),
    ),
)

OLLAMA = ProviderStream(
    "ollama",
    (
        _chunk(
            [_delta({"role": "assistant", "content": "", "reasoning": "Two files. "})],
            model="qwen3:8b",
        ),
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "call_pnk3",
                                "index": 0,
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
                            }
                        ],
                    }
                )
            ],
            model="qwen3:8b",
        ),
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "call_x7q1",
                                "index": 0,
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path":"b.py"}'},
                            }
                        ],
                    }
                )
            ],
            model="qwen3:8b",
        ),
        _chunk([_delta({"role": "assistant", "content": ""}, "tool_calls")], model="qwen3:8b"),
        _chunk(
            [],
            model="qwen3:8b",
            usage={"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
        ),
    ),
)

VLLM = ProviderStream(
    "vllm",
    (
        _chunk(
            [_delta({"role": "assistant", "content": ""})],
            usage={"prompt_tokens": 60, "completion_tokens": 0, "total_tokens": 60},
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "chatcmpl-tool-9e3c",
                                "type": "function",
                                "function": {"name": "grep", "arguments": ""},
                            }
                        ]
                    }
                )
            ],
            usage={"prompt_tokens": 60, "completion_tokens": 5, "total_tokens": 65},
        ),
        _chunk(
            [_delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"pattern": '}}]})],
            usage={"prompt_tokens": 60, "completion_tokens": 9, "total_tokens": 69},
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "chatcmpl-tool-9e3c",
                                "type": "function",
                                "function": {"name": "grep", "arguments": '"def main"}'},
                            }
                        ]
                    },
                    "tool_calls",
                )
            ],
            usage={"prompt_tokens": 60, "completion_tokens": 14, "total_tokens": 74},
        ),
    ),
)

VLLM_NO_ID = ProviderStream(
    "vllm-no-id",
    (
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "type": "function",
                                "function": {"name": "glob", "arguments": ""},
                            }
                        ],
                    }
                )
            ]
        ),
        _chunk(
            [
                _delta(
                    {"tool_calls": [{"index": 0, "function": {"arguments": '{"pattern": "*.py"}'}}]}
                )
            ]
        ),
        _chunk([_delta({}, "tool_calls")]),
    ),
)

LLAMA_CPP = ProviderStream(
    "llama.cpp",
    (
        _chunk([_delta({"role": "assistant", "content": None})]),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "function": {
                                    "name": "read_file",
                                    "id": "a1b2",
                                    "arguments": '{"pa',
                                },
                            }
                        ]
                    }
                )
            ]
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "function": {"name": "read_file", "arguments": 'th": "a.py"}'},
                            }
                        ]
                    }
                )
            ]
        ),
        _chunk(
            [_delta({}, "tool_calls")],
            usage={"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
            timings={"predicted_per_second": 31.2},
        ),
    ),
)

OPENROUTER = ProviderStream(
    "openrouter",
    (
        "OPENROUTER PROCESSING",
        "OPENROUTER PROCESSING",
        _chunk(
            [_delta({"role": "assistant", "content": "", "reasoning": "Short answer."})],
            provider="SomeHost",
        ),
        _chunk([_delta({"role": "assistant", "content": "It is "})], provider="SomeHost"),
        _chunk(
            [_delta({"role": "assistant", "content": "42."}, "stop", native_finish_reason="stop")],
            provider="SomeHost",
        ),
        _chunk(
            [_delta({"role": "assistant", "content": ""})],
            provider="SomeHost",
            usage={"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
        ),
    ),
)

_SAFE = {"filtered": False, "severity": "safe"}
_FILTERS = {"hate": _SAFE, "self_harm": _SAFE, "sexual": _SAFE, "violence": _SAFE}
AZURE = ProviderStream(
    "azure",
    (
        {
            "id": "",
            "object": "",
            "created": 0,
            "model": "",
            "choices": [],
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _FILTERS}],
        },
        _chunk(
            [_delta({"role": "assistant", "content": ""}, content_filter_results={})],
            id="chatcmpl-az1",
            model="gpt-4o",
        ),
        _chunk(
            [_delta({"content": "Hello"}, content_filter_results=_FILTERS)],
            id="chatcmpl-az1",
            model="gpt-4o",
        ),
        _chunk([_delta({}, "stop", content_filter_results={})], id="chatcmpl-az1", model="gpt-4o"),
        {
            "id": "",
            "object": "",
            "created": 0,
            "model": "",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": None,
                    "content_filter_results": _FILTERS,
                    "content_filter_offsets": {
                        "check_offset": 0,
                        "start_offset": 0,
                        "end_offset": 5,
                    },
                }
            ],
        },
    ),
)

EVERY_PROVIDER = (
    OPENAI,
    DEEPSEEK,
    QWEN,
    KIMI,
    GLM,
    GEMINI,
    OLLAMA,
    VLLM,
    VLLM_NO_ID,
    LLAMA_CPP,
    OPENROUTER,
    AZURE,
)

# --- streams that are failed turns ------------------------------------------------------------

CUT_OFF = ProviderStream(  # the connection closed before any finish_reason, and no [DONE]
    "cut-off",
    (
        _chunk([_delta({"role": "assistant", "content": "The answer is"})]),
        _chunk([_delta({"content": " probably"})]),
    ),
    done=False,
)

OPENAI_ERROR = ProviderStream(  # OpenAI's error event after some text
    "openai-error",
    (
        _chunk([_delta({"role": "assistant", "content": ""})]),
        _chunk([_delta({"content": "The"})]),
        {
            "error": {
                "message": "The server had an error while processing your request. Sorry "
                "about that!",
                "type": "server_error",
            }
        },
    ),
    done=False,
)

OPENROUTER_ERROR = ProviderStream(  # an error with finish_reason "error", in a chunk
    "openrouter-error",
    (
        _chunk([_delta({"role": "assistant", "content": "Partial"})]),
        _chunk(
            [_delta({"content": ""}, "error")],
            error={"code": "server_error", "message": "Provider disconnected unexpectedly"},
        ),
    ),
)

FINISH_ERROR_ONLY = ProviderStream(  # finish_reason "error" with no `error` object beside it
    "finish-error",
    (
        _chunk([_delta({"role": "assistant", "content": "Partial"})]),
        _chunk([_delta({}, "error")]),
    ),
)

NOTHING_SAID = ProviderStream(  # a reply that ends properly with neither text nor calls
    "empty",
    (
        _chunk([_delta({"role": "assistant", "content": ""})]),
        _chunk([_delta({"content": ""}, "stop")]),
    ),
)

ONLY_REASONING = ProviderStream(  # DeepSeek thinking, then nothing
    "only-reasoning",
    (
        _chunk([_delta({"content": None, "reasoning_content": "Hmm, let me think."})]),
        _chunk([_delta({"content": "", "reasoning_content": None}, "stop")]),
    ),
)

CUT_AT_LENGTH = ProviderStream(  # max_tokens reached while the arguments were being streamed
    "length",
    (
        _chunk(
            [
                _delta(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_W",
                                "type": "function",
                                "function": {"name": "write_file", "arguments": ""},
                            }
                        ],
                    }
                )
            ]
        ),
        _chunk(
            [
                _delta(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "function": {"arguments": '{"path": "notes.txt", "content": "hal'},
                            }
                        ]
                    }
                )
            ]
        ),
        _chunk([_delta({}, "length")]),
    ),
)

"""Error bodies as providers send them, one per row of the failure taxonomy.

Each is written from the provider's documented error format or from bodies
quoted in public bug reports against it, cut down to what decides the row;
numbers, ids and model names are made up. `status` is the HTTP status the body
comes with (200: an error inside a successful response).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chapters.ch11.failures import Failure


@dataclass(frozen=True)
class ProviderFailure:
    name: str
    status: int
    body: Mapping[str, Any]
    failure: Failure  # the row it belongs to
    headers: Mapping[str, str] = field(default_factory=dict)


def _openai(message: str, type_: str | None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


OPENAI_RATE_LIMIT = ProviderFailure(
    "openai-429",
    429,
    _openai(
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit "
        "30000, Used 29000, Requested 2000. Please try again in 2s.",
        "tokens",
        "rate_limit_exceeded",
    ),
    Failure.RATE_LIMITED,
    {"retry-after-ms": "2000", "retry-after": "2"},
)
OPENAI_QUOTA = ProviderFailure(
    "openai-quota",
    429,
    _openai(
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
    ),
    Failure.QUOTA_EXHAUSTED,
)
OPENAI_SERVER = ProviderFailure(
    "openai-500",
    500,
    _openai(
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
    ),
    Failure.SERVER_ERROR,
)
OPENAI_OVERLOADED = ProviderFailure(
    "openai-503-overloaded",
    503,
    _openai("The engine is currently overloaded, please try again later.", "server_error"),
    Failure.OVERLOADED,
)
OPENAI_CONTEXT = ProviderFailure(
    "openai-context",
    400,
    _openai(
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130412 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
    ),
    Failure.CONTEXT_TOO_LONG,
)
OPENAI_NO_MODEL = ProviderFailure(
    "openai-404-model",
    404,
    _openai(
        "The model `gpt-9` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    Failure.MODEL_MISSING,
)
OPENAI_BAD_KEY = ProviderFailure(
    "openai-401",
    401,
    _openai("Incorrect API key provided: sk-x***. You can find your API key at ...", None,
            "invalid_api_key"),
    Failure.AUTHENTICATION,
)  # fmt: skip
OPENAI_BAD_REQUEST = ProviderFailure(
    "openai-400",
    400,
    _openai("Invalid type for 'messages[2].content': expected a string.", "invalid_request_error"),
    Failure.REFUSED,
)
DEEPSEEK_NO_MODEL = ProviderFailure(  # DeepSeek answers an unknown model with a 400
    "deepseek-400-model",
    400,
    _openai("Model Not Exist", "invalid_request_error", "invalid_request_error"),
    Failure.MODEL_MISSING,
)
DEEPSEEK_CONTEXT = ProviderFailure(
    "deepseek-context",
    400,
    _openai(
        "This model's maximum context length is 65536 tokens. However, you requested 70210 "
        "tokens (62018 in the messages, 8192 in the completion). Please reduce the length of "
        "the messages or completion.",
        "invalid_request_error",
        "invalid_request_error",
    ),
    Failure.CONTEXT_TOO_LONG,
)
DEEPSEEK_BALANCE = ProviderFailure(  # 402: no money left, not worth a retry
    "deepseek-402",
    402,
    _openai("Insufficient Balance", "unknown_error", "invalid_request_error"),
    Failure.REFUSED,
)
DEEPSEEK_BUSY_IN_200 = ProviderFailure(
    "deepseek-200-insufficient-resource",
    200,
    _openai(
        "The system is busy: insufficient system resource, please try again later.",
        "insufficient_system_resource",
        "insufficient_system_resource",
    ),
    Failure.SERVER_ERROR,
)
AZURE_RATE_LIMIT = ProviderFailure(
    "azure-429",
    429,
    {
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
            "version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 "
            "pricing tier. Please retry after 6 seconds.",
        }
    },
    Failure.RATE_LIMITED,
    {"retry-after": "6", "retry-after-ms": "6000"},
)
AZURE_CONTENT_FILTER = ProviderFailure(
    "azure-400-content-filter",
    400,
    {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
            "content management policy.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
        }
    },
    Failure.REFUSED,
)
OPENROUTER_PROVIDER_ERROR_IN_200 = ProviderFailure(
    "openrouter-200-provider-error",
    200,
    {"error": {"code": 502, "message": "Provider returned error",
               "metadata": {"provider_name": "SomeHost", "raw": "upstream timed out"}}},
    Failure.SERVER_ERROR,
)  # fmt: skip
OPENROUTER_RATE_LIMIT = ProviderFailure(
    "openrouter-429",
    429,
    {"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min."}},
    Failure.RATE_LIMITED,
)
ANTHROPIC_OVERLOADED = ProviderFailure(  # through an OpenAI-compatible endpoint
    "anthropic-529",
    529,
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    Failure.OVERLOADED,
)
VLLM_CONTEXT = ProviderFailure(
    "vllm-context",
    400,
    {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
        "5120 tokens in the messages, Please reduce the length of the messages.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    Failure.CONTEXT_TOO_LONG,
)
LLAMA_CPP_CONTEXT = ProviderFailure(
    "llama.cpp-context",
    400,
    {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5120,
            "n_ctx": 4096,
        }
    },
    Failure.CONTEXT_TOO_LONG,
)
OLLAMA_NO_MODEL = ProviderFailure(
    "ollama-404",
    404,
    {"error": 'model "qwen9" not found, try pulling it first'},
    Failure.MODEL_MISSING,
)
BAD_RESPONSE_IN_200 = ProviderFailure(  # an error in a 200 that says nothing transient
    "error-in-200",
    200,
    {"error": {"message": "Invalid tool schema for function 'read_file'.", "type": "invalid"}},
    Failure.BAD_RESPONSE,
)

EVERY_FAILURE = (
    OPENAI_RATE_LIMIT,
    OPENAI_QUOTA,
    OPENAI_SERVER,
    OPENAI_OVERLOADED,
    OPENAI_CONTEXT,
    OPENAI_NO_MODEL,
    OPENAI_BAD_KEY,
    OPENAI_BAD_REQUEST,
    DEEPSEEK_NO_MODEL,
    DEEPSEEK_CONTEXT,
    DEEPSEEK_BALANCE,
    DEEPSEEK_BUSY_IN_200,
    AZURE_RATE_LIMIT,
    AZURE_CONTENT_FILTER,
    OPENROUTER_PROVIDER_ERROR_IN_200,
    OPENROUTER_RATE_LIMIT,
    ANTHROPIC_OVERLOADED,
    VLLM_CONTEXT,
    LLAMA_CPP_CONTEXT,
    OLLAMA_NO_MODEL,
    BAD_RESPONSE_IN_200,
)

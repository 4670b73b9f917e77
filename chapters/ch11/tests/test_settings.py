"""The fallback's settings: `OPENAI_FALLBACK_*`, read and checked like the first model's."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.config import load_optional_settings, load_settings
from shared.errors import ConfigError

PRIMARY = {
    "OPENAI_BASE_URL": "https://api.deepseek.com/v1",
    "OPENAI_API_KEY": "sk-primary",
    "OPENAI_MODEL": "deepseek-chat",
}
PREFIX = "OPENAI_FALLBACK_"


def fallback(env: dict[str, str], cwd: Path) -> object:
    primary = load_settings({**PRIMARY, **env}, cwd)
    return load_optional_settings({**PRIMARY, **env}, cwd, prefix=PREFIX, defaults=primary)


def test_no_fallback_model_means_no_fallback(tmp_path: Path) -> None:
    assert fallback({}, tmp_path) is None


def test_the_url_and_key_default_to_the_first_models(tmp_path: Path) -> None:
    settings = fallback({"OPENAI_FALLBACK_MODEL": "deepseek-reasoner"}, tmp_path)
    assert settings is not None
    assert settings.model == "deepseek-reasoner"  # type: ignore[attr-defined]
    assert settings.base_url == "https://api.deepseek.com/v1"  # type: ignore[attr-defined]
    assert settings.api_key.get_secret_value() == "sk-primary"  # type: ignore[attr-defined]


def test_the_reply_bound_and_temperature_are_the_runs(tmp_path: Path) -> None:
    env = {"OPENAI_FALLBACK_MODEL": "m2", "OPENAI_MAX_TOKENS": "512", "OPENAI_TEMPERATURE": "0.2"}
    settings = fallback(env, tmp_path)
    assert settings is not None
    assert settings.max_tokens == 512  # type: ignore[attr-defined]
    assert settings.temperature == 0.2  # type: ignore[attr-defined]
    unset = fallback({"OPENAI_FALLBACK_MODEL": "m2"}, tmp_path)
    assert unset.temperature is None  # type: ignore[attr-defined]


def test_its_own_url_and_key_from_the_environment_or_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "OPENAI_FALLBACK_MODEL=qwen2.5-coder\nOPENAI_FALLBACK_BASE_URL=http://localhost:11434/v1/\n",
        encoding="utf-8",
    )
    settings = fallback({"OPENAI_FALLBACK_API_KEY": "ollama"}, tmp_path)
    assert settings is not None
    assert settings.base_url == "http://localhost:11434/v1"  # type: ignore[attr-defined]
    assert settings.api_key.get_secret_value() == "ollama"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("localhost:11434", "OPENAI_FALLBACK_BASE_URL must be an http(s) URL"),
        (
            "https://openrouter.ai/api/v1/chat/completions",
            "OPENAI_FALLBACK_BASE_URL must not end in /chat/completions",
        ),
    ],
)
def test_a_bad_url_is_refused_under_its_own_name(url: str, said: str, tmp_path: Path) -> None:
    env = {"OPENAI_FALLBACK_MODEL": "m", "OPENAI_FALLBACK_BASE_URL": url}
    with pytest.raises(ConfigError) as caught:
        fallback(env, tmp_path)
    assert said in str(caught.value)
    assert "OPENAI_BASE_URL" not in str(caught.value).replace("OPENAI_FALLBACK_BASE_URL", "")


def test_a_url_or_key_without_a_model_is_an_error_not_ignored(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        fallback({"OPENAI_FALLBACK_API_KEY": "sk-x"}, tmp_path)
    assert str(caught.value) == (
        "OPENAI_FALLBACK_API_KEY set without OPENAI_FALLBACK_MODEL: set OPENAI_FALLBACK_MODEL "
        "too, or remove it"
    )


def test_the_first_models_messages_are_unchanged(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({**PRIMARY, "OPENAI_BASE_URL": "localhost"}, tmp_path)
    assert "OPENAI_BASE_URL must be an http(s) URL" in str(caught.value)


def test_the_reply_limits_are_the_runs(tmp_path: Path) -> None:
    env = {
        "OPENAI_FALLBACK_MODEL": "m2",
        "OPENAI_MAX_REPLY_SECONDS": "30",
        "OPENAI_MAX_REPLY_CHARS": "9000",
    }
    settings = fallback(env, tmp_path)
    assert settings is not None
    assert settings.max_reply_seconds == 30  # type: ignore[attr-defined]
    assert settings.max_reply_chars == 9000  # type: ignore[attr-defined]

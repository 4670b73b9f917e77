"""Settings: from the environment, else .env; every missing name at once; bad URLs with the fix."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from shared.config import SETTING_NAMES, load_settings
from shared.errors import ConfigError

GOOD = {
    "OPENAI_BASE_URL": "https://api.openai.com/v1",
    "OPENAI_API_KEY": "sk-test",
    "OPENAI_MODEL": "gpt-4o-mini",
}


def problem(env: dict[str, str], cwd: Path) -> str:
    with pytest.raises(ConfigError) as raised:
        load_settings(env, cwd)
    return raised.value.cli_line()


def test_all_three_present(tmp_path: Path) -> None:
    settings = load_settings(GOOD, tmp_path)
    assert settings.base_url == "https://api.openai.com/v1"
    assert settings.api_key.get_secret_value() == "sk-test"
    assert "sk-test" not in repr(settings)  # the key is never printed by accident
    assert settings.model == "gpt-4o-mini"


@pytest.mark.parametrize("name", SETTING_NAMES)
def test_each_missing_name_is_named(name: str, tmp_path: Path) -> None:
    env = {k: v for k, v in GOOD.items() if k != name}
    line = problem(env, tmp_path)
    assert line.startswith(f"配置错误：Missing required settings: {name}")
    assert [n for n in SETTING_NAMES if n in line] == [name]


def test_all_missing_are_named_together(tmp_path: Path) -> None:
    line = problem({}, tmp_path)
    assert line.startswith(
        "配置错误：Missing required settings: OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL"
    )


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_blank_counts_as_missing(blank: str, tmp_path: Path) -> None:
    line = problem({**GOOD, "OPENAI_API_KEY": blank}, tmp_path)
    assert "Missing required settings: OPENAI_API_KEY" in line


def test_dotenv_in_the_working_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "OPENAI_BASE_URL=http://localhost:11434/v1\nOPENAI_API_KEY=ollama\nOPENAI_MODEL=qwen\n",
        encoding="utf-8",
    )
    settings = load_settings({}, tmp_path)
    assert (settings.base_url, settings.model) == ("http://localhost:11434/v1", "qwen")


DOTENV = (  # a setting on the first line: a BOM left in front would hide it
    "OPENAI_BASE_URL=http://localhost:11434/v1\n# the local model, café\n"
    "OPENAI_API_KEY=ollama\nOPENAI_MODEL=qwen\n"
)


@pytest.mark.parametrize(
    "encoded",
    [
        codecs.BOM_UTF16_LE + DOTENV.encode("utf-16-le"),  # Windows PowerShell 5.1's `>`
        codecs.BOM_UTF16_BE + DOTENV.encode("utf-16-be"),
        codecs.BOM_UTF8 + DOTENV.encode("utf-8"),  # its Set-Content -Encoding utf8, Notepad
        DOTENV.replace("\n", "\r\n").encode("utf-8"),
    ],
    ids=["utf-16-le-bom", "utf-16-be-bom", "utf-8-bom", "utf-8-crlf"],
)
def test_a_dotenv_in_utf16_or_with_a_bom_is_read(encoded: bytes, tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(encoded)
    settings = load_settings({}, tmp_path)
    assert (settings.base_url, settings.model) == ("http://localhost:11434/v1", "qwen")
    assert settings.api_key.get_secret_value() == "ollama"


@pytest.mark.parametrize(
    ("encoded", "where"),
    [
        (DOTENV.replace("café", "模型").encode("gbk"), "line 2"),  # Notepad's ANSI
        (DOTENV.encode("latin-1"), "line 2"),
        (b"OPENAI_MODEL=qwen\n" + b"\xff\xff\n", "line 2"),
        (DOTENV.replace("é", "e").encode("utf-16-le"), "NUL"),  # UTF-16 without its BOM
    ],
    ids=["gbk", "latin-1", "invalid", "utf-16-no-bom"],
)
def test_a_dotenv_in_another_encoding_is_one_line_naming_the_file_and_the_fix(
    encoded: bytes, where: str, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_bytes(encoded)
    line = problem(GOOD, tmp_path)
    assert line.startswith(f"配置错误：{tmp_path / '.env'} is not UTF-8 text (")
    assert where in line
    assert "save it as UTF-8" in line
    assert "\n" not in line


def test_the_environment_wins_over_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_MODEL=from-dotenv\n", encoding="utf-8")
    settings = load_settings(GOOD, tmp_path)
    assert settings.model == "gpt-4o-mini"


def test_a_blank_environment_value_does_not_hide_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_MODEL=from-dotenv\n", encoding="utf-8")
    settings = load_settings({**GOOD, "OPENAI_MODEL": "  "}, tmp_path)
    assert settings.model == "from-dotenv"


@pytest.mark.parametrize(
    "url", ["api.openai.com/v1", "ftp://api.openai.com/v1", "https://", "localhost:11434"]
)
def test_a_url_that_is_not_http_names_only_the_base_url(url: str, tmp_path: Path) -> None:
    line = problem({**GOOD, "OPENAI_BASE_URL": url}, tmp_path)
    assert "OPENAI_BASE_URL must be an http(s) URL such as https://api.openai.com/v1" in line
    assert "OPENAI_API_KEY" not in line and "OPENAI_MODEL" not in line


@pytest.mark.parametrize(
    ("url", "fixed"),
    [
        ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1"),
        ("http://localhost:8080/v1/chat/completions/", "http://localhost:8080/v1"),
    ],
)
def test_a_url_ending_in_chat_completions_gets_the_fix_for_that_url(
    url: str, fixed: str, tmp_path: Path
) -> None:
    line = problem({**GOOD, "OPENAI_BASE_URL": url}, tmp_path)
    assert "OPENAI_BASE_URL must not end in /chat/completions" in line
    assert f"Use {fixed}, not {url}" in line  # the user's own URL, not an example
    assert "OPENAI_API_KEY" not in line and "OPENAI_MODEL" not in line


def test_a_trailing_slash_is_harmless(tmp_path: Path) -> None:
    settings = load_settings({**GOOD, "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/"}, tmp_path)
    assert settings.base_url == "http://127.0.0.1:8080/v1"


def test_the_reply_bound_has_a_default_and_can_be_set(tmp_path: Path) -> None:
    assert load_settings(GOOD, tmp_path).max_tokens == 2048
    assert load_settings({**GOOD, "OPENAI_MAX_TOKENS": "512"}, tmp_path).max_tokens == 512
    (tmp_path / ".env").write_text("OPENAI_MAX_TOKENS=1024\n", encoding="utf-8")
    assert load_settings(GOOD, tmp_path).max_tokens == 1024  # .env, under the environment


def test_the_temperature_is_the_providers_unless_set(tmp_path: Path) -> None:
    assert load_settings(GOOD, tmp_path).temperature is None
    assert load_settings({**GOOD, "OPENAI_TEMPERATURE": "0.2"}, tmp_path).temperature == 0.2
    assert load_settings({**GOOD, "OPENAI_TEMPERATURE": " "}, tmp_path).temperature is None


@pytest.mark.parametrize("value", ["-0.1", "2.5", "cold"])
def test_a_temperature_outside_0_to_2_is_a_config_error(value: str, tmp_path: Path) -> None:
    line = problem({**GOOD, "OPENAI_TEMPERATURE": value}, tmp_path)
    assert line.startswith("配置错误：") and "OPENAI_TEMPERATURE" in line


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_reply_bound_that_is_not_a_positive_number_is_a_config_error(
    value: str, tmp_path: Path
) -> None:
    line = problem({**GOOD, "OPENAI_MAX_TOKENS": value}, tmp_path)
    assert line.startswith("配置错误：") and "OPENAI_MAX_TOKENS" in line


def test_a_reply_has_a_deadline_and_a_size_cap_by_default_and_both_can_be_set(
    tmp_path: Path,
) -> None:
    settings = load_settings(GOOD, tmp_path)
    assert settings.max_reply_seconds == 600.0
    assert settings.max_reply_chars == 32 * 2048  # a small multiple of the token bound
    assert load_settings({**GOOD, "OPENAI_MAX_TOKENS": "100"}, tmp_path).max_reply_chars == 3200
    chosen = load_settings(
        {**GOOD, "OPENAI_MAX_REPLY_SECONDS": "90.5", "OPENAI_MAX_REPLY_CHARS": "5000"}, tmp_path
    )
    assert (chosen.max_reply_seconds, chosen.max_reply_chars) == (90.5, 5000)
    (tmp_path / ".env").write_text("OPENAI_MAX_REPLY_CHARS=7000\n", encoding="utf-8")
    assert load_settings(GOOD, tmp_path).max_reply_chars == 7000  # .env, under the environment


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OPENAI_MAX_REPLY_SECONDS", "0"),
        ("OPENAI_MAX_REPLY_SECONDS", "-1"),
        ("OPENAI_MAX_REPLY_SECONDS", "inf"),  # no bound at all is not a bound
        ("OPENAI_MAX_REPLY_SECONDS", "soon"),
        ("OPENAI_MAX_REPLY_CHARS", "0"),
        ("OPENAI_MAX_REPLY_CHARS", "1.5"),
        ("OPENAI_MAX_REPLY_CHARS", "many"),
    ],
)
def test_a_reply_limit_that_is_not_a_positive_number_is_a_config_error(
    name: str, value: str, tmp_path: Path
) -> None:
    line = problem({**GOOD, name: value}, tmp_path)
    assert line.startswith("配置错误：") and name in line


def test_a_wrong_token_bound_is_said_once_not_again_for_the_size_cap_made_from_it(
    tmp_path: Path,
) -> None:
    line = problem({**GOOD, "OPENAI_MAX_TOKENS": "0"}, tmp_path)
    assert "OPENAI_MAX_TOKENS" in line
    assert "max_reply_chars" not in line.lower()

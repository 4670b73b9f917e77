"""The three settings that point the agent at a model, validated before any request.

`OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` come from the environment,
else from `.env` in the working directory; the environment wins. A value that
is blank (whitespace counts) is treated as unset, so an exported empty variable
does not hide the value in `.env`.

Nothing is read at import: `load_settings` is called by the CLI, with the
environment and the folder passed in, which is also how tests call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, ValidationError

from shared.errors import ConfigError

SETTING_NAMES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL")
EXAMPLE_BASE_URL = "https://api.openai.com/v1"
MISSING_HINT = (
    " (set them in the environment or in .env in this folder, see .env.example;"
    " or add --demo to run the chapter without a model)"
)


def _check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"OPENAI_BASE_URL must be an http(s) URL such as {EXAMPLE_BASE_URL} (got {url!r})"
        )
    if parts.path.rstrip("/").endswith("/chat/completions"):
        root = url.rstrip("/").removesuffix("/chat/completions")
        raise ValueError(
            "OPENAI_BASE_URL must not end in /chat/completions: the SDK appends that path. "
            f"Use {root}, not {url}"
        )
    return url.rstrip("/")


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    base_url: Annotated[str, AfterValidator(_check_base_url)] = Field(alias="OPENAI_BASE_URL")
    api_key: SecretStr = Field(alias="OPENAI_API_KEY")  # SecretStr: never printed by accident
    model: str = Field(alias="OPENAI_MODEL")


def load_settings(environ: Mapping[str, str], cwd: Path) -> Settings:
    """Merge `.env` under the environment, then validate; raise `ConfigError` with every problem."""
    dotenv = _read_dotenv(cwd)
    present: dict[str, str] = {}
    for name in SETTING_NAMES:
        for source in (environ, dotenv):  # the environment wins over .env
            value = (source.get(name) or "").strip()
            if value:
                present[name] = value
                break
    missing = [name for name in SETTING_NAMES if name not in present]
    problems = [f"Missing required settings: {', '.join(missing)}{MISSING_HINT}"] if missing else []
    try:
        settings = Settings.model_validate(present)
    except ValidationError as error:
        problems += [_describe(item) for item in error.errors() if item["type"] != "missing"]
        raise ConfigError(". ".join(problems)) from None
    return settings


def _read_dotenv(cwd: Path) -> dict[str, str]:
    path = cwd / ".env"
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    return {name: value for name, value in dotenv_values(path).items() if value is not None}


def _describe(item: Mapping[str, object]) -> str:
    message = str(item["msg"])
    return message.removeprefix("Value error, ")

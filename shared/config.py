"""The three settings that point the agent at a model, validated before any request.

Four more are optional, each with a stated default: `OPENAI_MAX_TOKENS` (the
bound on a reply the provider is asked to keep), `OPENAI_TEMPERATURE`, and the
two bounds the client keeps itself, whatever the provider does:
`OPENAI_MAX_REPLY_SECONDS` (wall-clock time for one whole reply) and
`OPENAI_MAX_REPLY_CHARS` (its size, by default a small multiple of
`OPENAI_MAX_TOKENS`).

`OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` come from the environment,
else from `.env` in the working directory; the environment wins. A value that
is blank (whitespace counts) is treated as unset, so an exported empty variable
does not hide the value in `.env`. `.env` is UTF-8 (a BOM is allowed) or UTF-16
with its BOM; another encoding is a `ConfigError` saying how to save it.

A second endpoint (another model to use beside or instead of the first) is
named by a prefix in place of `OPENAI_`: `load_optional_settings` reads
`<prefix>MODEL`, `<prefix>BASE_URL` and `<prefix>API_KEY` the same way and
validates them with the same rules; the URL and the key default to the first
endpoint's, and without `<prefix>MODEL` there is no second endpoint. Its
`Settings` keep the prefix, so a message about it names the setting the user
sets for it (`setting_name`): `<prefix>BASE_URL`, not OPENAI_BASE_URL.

Nothing is read at import: `load_settings` is called by the CLI, with the
environment and the folder passed in, which is also how tests call it.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
)

from shared.errors import ConfigError

PREFIX = "OPENAI_"
SETTING_NAMES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL")
OPTIONAL_NAMES = (
    "OPENAI_MAX_TOKENS",
    "OPENAI_TEMPERATURE",
    "OPENAI_MAX_REPLY_SECONDS",
    "OPENAI_MAX_REPLY_CHARS",
)
# A bound on every reply: a runaway reply ends at the output limit instead of using up
# the request's time. 2,048 tokens take about 7 minutes at 5 tokens a second, inside
# the 10-minute request timeout; a reply cut there says so (finish_reason "length").
DEFAULT_MAX_TOKENS = 2048
# The bounds the client keeps when the provider does not (a server that streams for ever):
# 10 minutes of wall-clock time for one reply, the request timeout's length; and 32
# characters for each token of OPENAI_MAX_TOKENS (65,536 at 2,048). A token is a few
# characters, and a plain body may write each character of the reply as a six-character
# escape (\u4e2d), so an honest reply stays well inside; a runaway one is cut within
# a few hundred kilobytes.
DEFAULT_MAX_REPLY_SECONDS = 600.0
REPLY_CHARS_PER_TOKEN = 32
EXAMPLE_BASE_URL = "https://api.openai.com/v1"
MISSING_HINT = (
    " (set them in the environment or in .env in this folder, see .env.example;"
    " or add --demo to run the chapter without a model)"
)
SAVE_AS_UTF8 = (
    "save it as UTF-8 (in Notepad: Save As, Encoding UTF-8; in PowerShell: "
    "(Get-Content .env) | Set-Content -Encoding utf8 .env)"
)


def _check_base_url(url: str, info: ValidationInfo) -> str:
    name = f"{_prefix(info)}BASE_URL"  # the name the user set, for a second endpoint too
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{name} must be an http(s) URL such as {EXAMPLE_BASE_URL} (got {url!r})")
    if parts.path.rstrip("/").endswith("/chat/completions"):
        root = url.rstrip("/").removesuffix("/chat/completions")
        raise ValueError(
            f"{name} must not end in /chat/completions: the SDK appends that path. "
            f"Use {root}, not {url}"
        )
    return url.rstrip("/")


def _prefix(info: ValidationInfo) -> str:
    context = info.context if isinstance(info.context, Mapping) else {}
    return str(context.get("prefix", PREFIX))


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    base_url: Annotated[str, AfterValidator(_check_base_url)] = Field(alias="OPENAI_BASE_URL")
    api_key: SecretStr = Field(alias="OPENAI_API_KEY")  # SecretStr: never printed by accident
    model: str = Field(alias="OPENAI_MODEL")
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, alias="OPENAI_MAX_TOKENS", ge=1)
    # Unset: the provider's own default, which for local servers is often 0.8, loose for
    # a small model that has to write exact JSON arguments.
    temperature: float | None = Field(default=None, alias="OPENAI_TEMPERATURE", ge=0, le=2)
    max_reply_seconds: float = Field(
        default=DEFAULT_MAX_REPLY_SECONDS,
        alias="OPENAI_MAX_REPLY_SECONDS",
        gt=0,
        allow_inf_nan=False,  # "inf" would be no bound at all
    )
    max_reply_chars: int = Field(
        default_factory=lambda fields: (
            REPLY_CHARS_PER_TOKEN * fields.get("max_tokens", DEFAULT_MAX_TOKENS)
        ),
        alias="OPENAI_MAX_REPLY_CHARS",
        ge=1,
    )
    prefix: str = PREFIX  # of the names this endpoint is set under: `OPENAI_`, or its own

    def setting_name(self, name: str) -> str:
        """What the user sets for `name` (an `OPENAI_` name) of this endpoint, for a message
        that says what to fix: "OPENAI_BASE_URL", or a second endpoint's own name."""
        return self.prefix + name.removeprefix(PREFIX)


def load_settings(environ: Mapping[str, str], cwd: Path) -> Settings:
    """Merge `.env` under the environment, then validate; raise `ConfigError` with every problem."""
    dotenv = _read_dotenv(cwd)
    present = _present(SETTING_NAMES, environ, dotenv)
    missing = [name for name in SETTING_NAMES if name not in present]
    present.update(_present(OPTIONAL_NAMES, environ, dotenv))
    problems = [f"Missing required settings: {', '.join(missing)}{MISSING_HINT}"] if missing else []
    return _validated(present, PREFIX, problems)


def load_optional_settings(
    environ: Mapping[str, str], cwd: Path, *, prefix: str, defaults: Settings
) -> Settings | None:
    """A second endpoint's settings, named by `prefix` (`OPENAI_` becomes `prefix`).

    None when `<prefix>MODEL` is not set. Its URL and key default to those of
    `defaults` (the first endpoint's), and are validated by the same rules; a
    URL or key set without a model is an error, not silently ignored.
    """
    names = tuple(prefix + name.removeprefix(PREFIX) for name in SETTING_NAMES)
    base_url, api_key, model = names
    given = _present(names, environ, _read_dotenv(cwd))
    if model not in given:
        if given:
            raise ConfigError(
                f"{' and '.join(sorted(given))} set without {model}: set {model} too, "
                f"or remove {'them' if len(given) > 1 else 'it'}"
            )
        return None
    values = {
        "OPENAI_BASE_URL": given.get(base_url, defaults.base_url),
        "OPENAI_API_KEY": given.get(api_key, defaults.api_key.get_secret_value()),
        "OPENAI_MODEL": given[model],
        # One bound for every reply of the run, whichever model sends it.
        "OPENAI_MAX_TOKENS": str(defaults.max_tokens),
        "OPENAI_MAX_REPLY_SECONDS": str(defaults.max_reply_seconds),
        "OPENAI_MAX_REPLY_CHARS": str(defaults.max_reply_chars),
    }
    if defaults.temperature is not None:  # and one temperature
        values["OPENAI_TEMPERATURE"] = str(defaults.temperature)
    return _validated(values, prefix, [])


def _present(
    names: tuple[str, ...], environ: Mapping[str, str], dotenv: Mapping[str, str]
) -> dict[str, str]:
    """Each name's value, the environment winning over `.env`; blank counts as unset."""
    present: dict[str, str] = {}
    for name in names:
        for source in (environ, dotenv):
            value = (source.get(name) or "").strip()
            if value:
                present[name] = value
                break
    return present


def _validated(values: Mapping[str, str], prefix: str, problems: list[str]) -> Settings:
    """`Settings` from values under the `OPENAI_` names; problems name the `prefix` ones."""
    try:
        settings = Settings.model_validate({**values, "prefix": prefix}, context={"prefix": prefix})
    except ValidationError as error:
        problems += [
            _describe(item, prefix) for item in error.errors() if item["type"] not in _SAID
        ]
        raise ConfigError(". ".join(problems)) from None
    return settings


# Problems said otherwise: a missing name is in the first line; a default computed from a
# setting that is wrong (OPENAI_MAX_REPLY_CHARS from OPENAI_MAX_TOKENS) waits for its fix.
_SAID = ("missing", "default_factory_not_called")


def _read_dotenv(cwd: Path) -> dict[str, str]:
    path = cwd / ".env"
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    values = dotenv_values(stream=io.StringIO(_dotenv_text(path)))
    return {name: value for name, value in values.items() if value is not None}


def _dotenv_text(path: Path) -> str:
    """`.env` as text: UTF-8, with or without a BOM, or UTF-16 with its BOM, which is what
    `>` writes in Windows PowerShell 5.1. Anything else is one line with the fix."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    try:
        text = data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(
            f"{path} is not UTF-8 text (byte 0x{data[error.start]:02x} on line {line}): "
            f"{SAVE_AS_UTF8}"
        ) from None
    if "\0" in text:  # what UTF-16 without its BOM looks like, read as UTF-8
        raise ConfigError(
            f"{path} is not UTF-8 text (it has NUL characters, as UTF-16 without a BOM has): "
            + SAVE_AS_UTF8
        )
    return text


def _describe(item: Mapping[str, object], prefix: str) -> str:
    """The problem in the user's words: a URL's message names it already; others get the name."""
    message = str(item["msg"])
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    where = item.get("loc") or ()
    name = str(where[0]) if isinstance(where, tuple) and where else ""
    return f"{prefix}{name.removeprefix(PREFIX)}: {message}" if name else message

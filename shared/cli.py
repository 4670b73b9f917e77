"""What every chapter's command line shares: the common options and the error policy.

`python -m chapters.chNN` and `python -m tutorial run --chapter N` run the
same click command; both go through `execute`, which turns every expected
failure into one line on stderr and an exit code (see shared/errors.py):
no traceback for a typo, a missing key, a provider error, or Ctrl-C.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from shared.completion import ModelClient
from shared.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, TutorialError

F = TypeVar("F", bound=Callable[..., Any])
MISSING_PROMPT_KEY = "missing_prompt_message"


def common_options(default_max_turns: int) -> Callable[[F], F]:
    """--prompt, --max-turns, --trace, --demo: the options every chapter has."""

    def decorate(function: F) -> F:
        for option in reversed(
            [
                click.option("--prompt", help="The task for the agent."),
                click.option(
                    "--max-turns",
                    type=click.IntRange(min=1),
                    default=default_max_turns,
                    show_default=True,
                    help="How many model requests the loop may make.",
                ),
                click.option(
                    "--trace", is_flag=True, help="Print each request and response as JSON."
                ),
                click.option(
                    "--demo",
                    is_flag=True,
                    help="Replay the chapter's exchange with a scripted model: no key, no network.",
                ),
            ]
        ):
            function = option(function)
        return function

    return decorate


def require_prompt(prompt: str | None, demo: bool) -> None:
    """Without --demo a prompt is required; the dispatcher words the error its own way."""
    if demo or (prompt and prompt.strip()):
        return
    context = click.get_current_context()
    message = (context.obj or {}).get(MISSING_PROMPT_KEY, "--prompt is required (or add --demo)")
    raise click.UsageError(message)


def execute(
    command: click.Command,
    args: Sequence[str],
    *,
    prog_name: str,
    obj: dict[str, Any] | None = None,
) -> int:
    """Run a click command and map every expected failure to one line and an exit code."""
    try:
        result = command.main(list(args), prog_name=prog_name, standalone_mode=False, obj=obj)
    except click.NoSuchOption as error:
        _say(f"Unknown argument: {error.option_name}")
        _say_suggestion(error.option_name, error.possibilities or [], command)
        return EXIT_USAGE
    except click.UsageError as error:
        _say(_usage_line(error))
        _say(f"Run `{prog_name} --help` to see the options.")
        return EXIT_USAGE
    except click.ClickException as error:
        _say(error.format_message())
        return error.exit_code
    except TutorialError as error:
        _say(error.cli_line())
        return error.exit_code
    except (click.Abort, KeyboardInterrupt):
        _say("已中断 interrupted.")
        return EXIT_INTERRUPTED
    return result if isinstance(result, int) else EXIT_OK


def select_model(*, demo: bool, demo_model: Callable[[], ModelClient], cwd: Path) -> ModelClient:
    """The scripted model for --demo; otherwise the configured endpoint (config checked here)."""
    if demo:
        return demo_model()
    from shared.config import load_settings
    from shared.openai_client import OpenAIChatModel

    return OpenAIChatModel(load_settings(os.environ, cwd))


def working_directory() -> Path:
    """The folder the agent was started in: where `.env` is read and commands run."""
    return Path(os.getcwd())


def _usage_line(error: click.UsageError) -> str:
    message = error.format_message()
    prefix = "Got unexpected extra argument"
    if message.startswith(prefix):  # "... (foo)" or "...s (foo bar)"
        return "Unknown argument: " + message.split("(", 1)[-1].rstrip(")")
    return message


def _say_suggestion(name: str | None, possibilities: Sequence[str], command: click.Command) -> None:
    if not name:
        return
    options = list(possibilities) or [
        opt for param in command.params for opt in getattr(param, "opts", [])
    ]
    close = difflib.get_close_matches(name, options, n=1)
    if close:
        _say(f"Did you mean {close[0]}?")


def _say(line: str) -> None:
    click.echo(line, err=True)

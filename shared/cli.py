"""What every chapter's command line shares: the common options and the error policy.

`python -m chapters.chNN` and `python -m tutorial run --chapter N` run the
same click command. Both entry points are `FriendlyCommand`/`FriendlyGroup`,
whose `main` turns every expected failure into one line on stderr and an exit
code (see shared/errors.py): no traceback for a typo, a missing key, a provider
error, or Ctrl-C. Click's own test runner sees exactly what a user sees.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from shared.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    TutorialError,
    WorkingFolderError,
)

if TYPE_CHECKING:  # pydantic-backed modules stay unloaded for --help
    from shared.completion import ModelClient
    from shared.config import Settings
    from shared.console import Console

MISSING_PROMPT = (
    '--prompt is missing: add --prompt "...", or --demo to replay the chapter\'s exchange'
)
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}  # -h works at every level


MAX_TURNS_HELP = "How many model requests the loop may make."


def common_params(max_turns_help: str | None = None) -> list[click.Option]:
    """--prompt, --max-turns, --trace, --demo: the options every chapter has.

    A chapter whose runs hold more than one loop says in `max_turns_help` which
    loops the limit bounds.
    """
    from shared.agent import DEFAULT_MAX_TURNS

    return [
        click.Option(["--prompt"], help="The task for the agent."),
        click.Option(
            ["--max-turns"],
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_TURNS,
            show_default=True,
            help=max_turns_help or MAX_TURNS_HELP,
        ),
        click.Option(["--trace"], is_flag=True, help="Print each request and response as JSON."),
        click.Option(
            ["--demo"],
            is_flag=True,
            help="Replay the chapter's exchange with a scripted model: no key, no network.",
        ),
    ]


def params_of(*decorators: Callable[[Any], Any]) -> list[click.Parameter]:
    """The click parameters that option decorators (`click.option(...)`) would add, in the
    order they are written: what a part lists as its `options`."""

    def target() -> None: ...

    for decorate in reversed(decorators):
        decorate(target)
    return list(reversed(getattr(target, "__click_params__", [])))


def count_option(
    name: str, default: int | None, help: str, *, least: int = 1, shown: bool | str = True
) -> click.Option:
    """An option that counts something (at least `least`), its default shown in --help
    (`shown`: the default as --help should say it, when that is not the value itself)."""
    return click.Option(
        [name], type=click.IntRange(min=least), default=default, show_default=shown, help=help
    )


def require_prompt(prompt: str | None, demo: bool) -> None:
    """Without --demo a prompt is required; the error says both ways out."""
    if demo or (prompt and prompt.strip()):
        return
    raise click.UsageError(MISSING_PROMPT)


class StrayWordError(click.UsageError):
    """A word the command line cannot place, and what to type instead: one line, no more."""

    def __init__(self, word: str, why: str, fix: str) -> None:
        super().__init__(f"Unknown argument: {word}. {why}: {fix}")


def one_dash_option(
    command: click.Command, args: Sequence[str], start: str = "-"
) -> StrayWordError | None:
    """`-demo` where `--demo` was meant, if `args` has such a word (starting with `start`):
    click reads it as the short options -d -e -m -o and names only `-d`. The fix keeps the
    option's value."""
    options = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
        if name.startswith("--")
    }
    for at, word in enumerate(args):
        name, equals, _ = word.partition("=")
        if not word.startswith(start) or word.startswith("--") or "-" + name not in options:
            continue
        fix = "-" + word
        following = args[at + 1] if at + 1 < len(args) else ""
        takes_value = not equals and not options["-" + name].is_flag
        if takes_value and following and not following.startswith("-"):
            spaced = any(character.isspace() for character in following)
            fix += f' "{following}"' if spaced else f" {following}"
        return StrayWordError(word, "Options have two dashes", fix)
    return None


class FriendlyCommand(click.Command):
    """A click command whose `main` prints one line per failure instead of a traceback."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["context_settings"] = {**HELP_OPTIONS, **(kwargs.get("context_settings") or {})}
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # click's parser consumes the list it is given
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            stray = one_dash_option(self, given, start=error.option_name)
            if stray is None:
                raise
            raise stray from None

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> int:
        standalone = extra.pop("standalone_mode", True)
        run = super().main
        return _friendly(lambda: run(args, prog_name, standalone_mode=False, **extra), standalone)


class FriendlyGroup(FriendlyCommand, click.Group):
    """The same error policy for a group of commands (the dispatcher)."""


def _friendly(run: Callable[[], Any], standalone: bool) -> int:
    """Run a click `main` and map every expected failure to one line and an exit code."""
    _never_fail_on_encoding()
    try:
        result = run()
        code = result if isinstance(result, int) else EXIT_OK
    except StrayWordError as error:  # the line says what to type: no pointer to --help
        _say(error.format_message())
        code = EXIT_USAGE
    except click.NoSuchOption as error:
        _say(f"Unknown argument: {error.option_name}")
        close = difflib.get_close_matches(error.option_name, error.possibilities or [], n=1)
        if close:
            _say(f"Did you mean {close[0]}?")
        code = EXIT_USAGE
    except click.UsageError as error:
        _say(_usage_line(error))
        if error.ctx is not None:
            _say(f"Run `{error.ctx.command_path} --help` to see the options.")
        code = EXIT_USAGE
    except click.ClickException as error:
        _say(error.format_message())
        code = error.exit_code
    except TutorialError as error:
        _say(error.cli_line())
        code = error.exit_code
    except (click.Abort, KeyboardInterrupt):
        _say("已中断 interrupted.")
        code = EXIT_INTERRUPTED
    if standalone:
        sys.exit(code)
    return code


class RunLoop(Protocol):
    """Runs one chapter's agent for `task` with the model and console the CLI built."""

    def __call__(self, task: str, model: ModelClient, console: Console) -> str: ...


@dataclass(frozen=True)
class Session:
    """What the common part of a chapter's command line needs to know about the chapter."""

    chapter: int
    folder: Path  # where the tools work; `.env` is read from the working directory
    demo_model: Callable[[], ModelClient]
    demo_prompt: str
    run: RunLoop
    # How the chapter shows a run (given --trace) and talks to the configured endpoint;
    # None: the console and the client of shared/, as every chapter had them at first.
    console: Callable[[bool], Console] | None = None
    connect: Callable[[Settings], ModelClient] | None = None


def run_session(session: Session, *, prompt: str | None, trace: bool, demo: bool) -> None:
    """Build the console and the model, run the chapter's agent, print the answer."""
    from shared.console import Console

    console = session.console(trace) if session.console else Console(trace=trace)
    if demo and prompt:
        console.notice("--demo replays a fixed exchange; --prompt is ignored.")
    task = session.demo_prompt if demo else str(prompt)
    model = select_model(
        demo=demo, demo_model=session.demo_model, cwd=working_directory(), connect=session.connect
    )
    number = session.chapter
    console.info(
        f"第 {number} 章 chapter {number} · model: {model.label} · folder: {session.folder}"
    )
    console.info(f"user: {task}")
    console.answer(session.run(task, model, console))


def select_model(
    *,
    demo: bool,
    demo_model: Callable[[], ModelClient],
    cwd: Path,
    connect: Callable[[Settings], ModelClient] | None = None,
) -> ModelClient:
    """The scripted model for --demo; otherwise the configured endpoint (config checked here),
    through `connect` when given."""
    if demo:
        return demo_model()
    from shared.config import load_settings
    from shared.openai_client import OpenAIChatModel

    return (connect or OpenAIChatModel)(load_settings(os.environ, cwd))


def working_directory() -> Path:
    """The folder the agent was started in: where `.env` is read and commands run.

    A shell can stay in a folder that another program deleted; every command started
    there fails to find it, so the line says where to go instead.
    """
    try:
        return Path(os.getcwd())
    except FileNotFoundError:
        raise WorkingFolderError(
            "The current folder no longer exists (deleted, or moved away): "
            "cd into a folder that exists and run again"
        ) from None
    except OSError as error:
        raise WorkingFolderError(
            f"The current folder cannot be read ({error.strerror}): "
            "cd into a folder you can read and run again"
        ) from None


def _never_fail_on_encoding() -> None:
    """A Windows pipe may use a code page without Chinese: escape, rather than crash.

    stderr already does this by default; stdout (the final answer) does not.
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def _usage_line(error: click.UsageError) -> str:
    message = error.format_message()
    prefix = "Got unexpected extra argument"
    if message.startswith(prefix) and message.endswith(")"):  # "... (foo)" or "...s (foo bar)"
        return "Unknown argument: " + message.split("(", 1)[-1].removesuffix(")")
    return message


def _say(line: str) -> None:
    click.echo(line, err=True)

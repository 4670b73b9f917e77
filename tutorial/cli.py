"""The dispatcher: `python -m tutorial run|list|diff|permissions|agents|prompt|sessions`.

`run --chapter N ...` hands every option after the chapter number to chapter
N's own command, so `python -m tutorial run --chapter 1 --prompt x` and
`python -m chapters.ch01 --prompt x` are the same program. Chapters are
imported only when run: `--help` and `list` load no chapter and no SDK.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from shared.cli import HELP_OPTIONS, FriendlyGroup
from tutorial.catalog import CHAPTERS, find_chapter

PROG_NAME = "python -m tutorial"
BOTH_REQUIRED = "Both --chapter and --prompt are required"
EXPECTED_RUN = 'Expected command: run, as in: python -m tutorial run --chapter 1 --prompt "..."'
HELP_WORDS = ("-h", "--help")


class _Dispatcher(FriendlyGroup):
    """A group whose errors say what to type instead."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:  # bare `python -m tutorial`: what can I do here?
            click.echo(ctx.get_help())
            ctx.exit(0)
        if args[0].startswith("-") and args[0] not in HELP_WORDS:
            raise click.UsageError(EXPECTED_RUN)  # `--chapter 1 --prompt x` without `run`
        return super().parse_args(ctx, args)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if name not in self.commands:
            raise click.UsageError(
                f"Unknown command: {name}. Expected command: run "
                "(others: list, diff, permissions, agents, prompt, sessions)"
            )
        return super().resolve_command(ctx, args)


@click.group(cls=_Dispatcher, context_settings=HELP_OPTIONS)
def cli() -> None:
    """Build a coding agent one chapter at a time.

    \b
      python -m tutorial run --chapter 1 --demo
      python -m tutorial run --chapter 1 --prompt "List the files here"
      python -m tutorial list
      python -m tutorial diff --chapter 1
      python -m tutorial permissions check --chapter 3 'shell(git push)'
      python -m tutorial agents --chapter 6
      python -m tutorial sessions --chapter 9
    """


@cli.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
    add_help_option=False,
)
@click.option("--chapter", type=int, help="Which chapter's agent to run.")
@click.argument("chapter_args", nargs=-1, type=click.UNPROCESSED)
def run(chapter: int | None, chapter_args: tuple[str, ...]) -> None:
    """Run a chapter's agent: run --chapter N --prompt "..." [chapter options]."""
    args = list(chapter_args)
    if chapter is None:
        if any(word in args for word in HELP_WORDS):
            click.echo(_run_help())
            return
        raise click.UsageError(f"{BOTH_REQUIRED}: --chapter is missing, e.g. --chapter 1")
    command = find_chapter(chapter).command()
    assert command is not None  # every chapter that is ready has one
    _invoke(command, f"{PROG_NAME} run --chapter {chapter}", args)


@cli.group(context_settings=HELP_OPTIONS)
def permissions() -> None:
    """Inspect a chapter's permission policy (chapter 3 and later)."""


@permissions.command(
    name="check",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
    add_help_option=False,
)
@click.option("--chapter", type=int, help="Whose policy: chapter 3 or later.")
@click.argument("check_args", nargs=-1, type=click.UNPROCESSED)
def permissions_check(chapter: int | None, check_args: tuple[str, ...]) -> None:
    """What the policy decides for 'TOOL(ARGUMENT)', and why; nothing runs."""
    if chapter is None:
        if any(word in check_args for word in HELP_WORDS):
            chapter = 3  # its options are every later chapter's too
        else:
            raise click.UsageError(
                "--chapter is required, e.g. permissions check --chapter 3 'shell(ls)'"
            )
    command = find_chapter(chapter).command("check_command")
    if command is None:
        raise click.UsageError(
            f"Chapter {chapter} has no permission policy; use chapter 3 or later"
        )
    _invoke(command, f"{PROG_NAME} permissions check --chapter {chapter}", list(check_args))


@cli.command(
    name="agents",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
    add_help_option=False,
)
@click.option("--chapter", type=int, help="Whose agents: chapter 6 or later.")
@click.argument("agents_args", nargs=-1, type=click.UNPROCESSED)
def agents(chapter: int | None, agents_args: tuple[str, ...]) -> None:
    """List the sub-agents a chapter's task tool can start from here; nothing runs."""
    if chapter is None:
        if any(word in agents_args for word in HELP_WORDS):
            chapter = 6  # its options are every later chapter's too
        else:
            raise click.UsageError("--chapter is required, e.g. agents --chapter 6")
    command = find_chapter(chapter).command("agents_command")
    if command is None:
        raise click.UsageError(f"Chapter {chapter} has no sub-agents; use chapter 6 or later")
    _invoke(command, f"{PROG_NAME} agents --chapter {chapter}", list(agents_args))


@cli.command(
    name="prompt",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
    add_help_option=False,
)
@click.option("--chapter", type=int, help="Whose prompt: chapter 10 or later.")
@click.argument("prompt_args", nargs=-1, type=click.UNPROCESSED)
def prompt(chapter: int | None, prompt_args: tuple[str, ...]) -> None:
    """Print the system prompt a chapter's run would send from here; nothing runs."""
    if chapter is None:
        if any(word in prompt_args for word in HELP_WORDS):
            chapter = 10  # its options are every later chapter's too
        else:
            raise click.UsageError("--chapter is required, e.g. prompt --chapter 10")
    command = find_chapter(chapter).command("prompt_command")
    if command is None:
        raise click.UsageError(
            f"Chapter {chapter} sends a fixed prompt; it is assembled from chapter 10 on"
        )
    _invoke(command, f"{PROG_NAME} prompt --chapter {chapter}", list(prompt_args))


@cli.command(
    name="sessions",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True},
    add_help_option=False,
)
@click.option("--chapter", type=int, help="Whose sessions: chapter 9 or later.")
@click.argument("sessions_args", nargs=-1, type=click.UNPROCESSED)
def sessions(chapter: int | None, sessions_args: tuple[str, ...]) -> None:
    """List the sessions a chapter's run could resume from here; nothing runs."""
    if chapter is None:
        if any(word in sessions_args for word in HELP_WORDS):
            chapter = 9  # its options are every later chapter's too
        else:
            raise click.UsageError("--chapter is required, e.g. sessions --chapter 9")
    command = find_chapter(chapter).command("sessions_command")
    if command is None:
        raise click.UsageError(
            f"Chapter {chapter} keeps no sessions; sessions are kept from chapter 9 on"
        )
    _invoke(command, f"{PROG_NAME} sessions --chapter {chapter}", list(sessions_args))


@cli.command(name="list")
def list_chapters() -> None:
    """Show the chapters and what each teaches."""
    for chapter in CHAPTERS:
        status = "ready" if chapter.ready else "planned"
        click.echo(f"{chapter.number:>2}  {status:<7}  {chapter.title} · {chapter.title_zh}")


@cli.command()
@click.option("--chapter", type=int, required=True, help="The chapter to show.")
@click.option("--stat", is_flag=True, help="One line per file: added or changed, and how much.")
def diff(chapter: int, stat: bool) -> None:
    """Show what chapter N adds: its own files, each against what it extends."""
    from tutorial.diff import chapter_diff, chapter_stat

    found = find_chapter(chapter)
    if stat:
        click.echo(chapter_stat(found))
        return
    text = chapter_diff(found)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.syntax import Syntax

        Console().print(Syntax(text, "diff", word_wrap=True))
    else:
        click.echo(text)


def _invoke(command: click.Command, prog_name: str, args: list[str]) -> None:
    """Parse and invoke a chapter's command directly: its errors rise to our error policy."""
    with command.make_context(prog_name, args) as sub:
        command.invoke(sub)


def _run_help() -> str:
    ready = ", ".join(str(c.number) for c in CHAPTERS if c.ready)
    return (
        f"Usage: {PROG_NAME} run --chapter N --prompt TEXT [chapter options]\n\n"
        "  Run chapter N's agent. Chapters you can run: " + ready + ".\n\n"
        "  Every chapter has --prompt, --max-turns, --trace and --demo; see a\n"
        f"  chapter's own options with: {PROG_NAME} run --chapter 1 --help"
    )


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main(argv, prog_name=PROG_NAME)

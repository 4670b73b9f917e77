"""The dispatcher: `python -m tutorial run|list|diff|recipe`, and the subcommands chapters bring.

`run --chapter N ...` hands every option after the chapter number to chapter
N's own command, so `python -m tutorial run --chapter 1 --prompt x` and
`python -m chapters.ch01 --prompt x` are the same program. Chapters are
imported only when run: `--help` and `list` load no chapter and no SDK.

The subcommands the chapters' parts bring (`agents`, `permissions check`, a
part's `commands()`) are learnt from the checked-in recipe listings (their
`commands` section): nothing here names one, and a new one needs no line here.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from shared.cli import HELP_OPTIONS, FriendlyGroup, StrayWordError, one_dash_option
from tutorial.catalog import CHAPTERS, ListedCommand, find_chapter, listed_commands

if TYPE_CHECKING:
    from shared.parts import Subcommand

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

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *chapter_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.get(cmd_name) or chapter_commands().get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if self.get_command(ctx, name) is None:
            others = [n for n in [*self.commands, *chapter_commands()] if n != "run"]
            raise click.UsageError(
                f"Unknown command: {name}. Expected command: run (others: {', '.join(others)})"
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
      python -m tutorial recipe --chapter 2 --explain
      python -m tutorial permissions check --chapter 3 'shell(git push)'
      python -m tutorial agents --chapter 6
      python -m tutorial sessions --chapter 9
      python -m tutorial tasks --chapter 12
    """


PASS_THROUGH = {"ignore_unknown_options": True, "allow_interspersed_args": True}


@cli.command(context_settings=PASS_THROUGH, add_help_option=False)
@click.option("--chapter", type=int, help="Which chapter's agent to run.")
@click.argument("chapter_args", nargs=-1, type=click.UNPROCESSED)
def run(chapter: int | None, chapter_args: tuple[str, ...]) -> None:
    """Run a chapter's agent: run --chapter N --prompt "..." [chapter options]."""
    args = list(chapter_args)
    if chapter is None:
        if any(word in args for word in HELP_WORDS):
            click.echo(_run_help())
            return
        raise _misplaced_chapter(args) or click.UsageError(
            f"{BOTH_REQUIRED}: --chapter is missing, e.g. --chapter 1"
        )
    command = find_chapter(chapter).command()
    assert command is not None  # every chapter that is ready has one
    _invoke(command, "run", chapter, args)


@functools.cache
def chapter_commands() -> dict[str, click.Command]:
    """The subcommands the ready chapters' parts bring (and their groups), by their first
    word: learnt from the checked-in recipe listings, so that no chapter is imported until
    one runs. Each is the first chapter's that has it, and hands its arguments on."""
    top = click.Group()  # holds them
    listed = listed_commands()
    for words, found in listed.items():
        *groups, name = words.split()
        holder = top
        for at, word in enumerate(groups):
            inner = holder.commands.get(word)
            if not isinstance(inner, click.Group):
                inner = _group(word, listed.get(" ".join(groups[: at + 1])), found.chapter)
                holder.add_command(inner)
            holder = inner
        if isinstance(holder.commands.get(name), click.Group):
            continue
        opens = any(other.startswith(f"{words} ") for other in listed)  # a group's row
        holder.add_command(_group(name, found, found.chapter) if opens else _chapter_command(found))
    return dict(top.commands)


def _group(name: str, listed: ListedCommand | None, first: int) -> click.Group:
    """The group of the commands that start with `name` (its help from the listing, if it
    gives one)."""
    help = listed.help if listed else f"The {name} commands (chapter {first} and later)."
    return click.Group(name=name, help=help, context_settings=HELP_OPTIONS)


def _chapter_command(listed: ListedCommand) -> click.Command:
    """A dispatcher command that hands its arguments to the subcommand of the chapter given:
    the chapter is imported only when it runs, and what a chapter without it says (the part
    declares it) is read from the first chapter's recipe only when it has to be said."""
    words, first = listed.words, listed.chapter

    def command(chapter: int | None, args: tuple[str, ...]) -> None:
        if chapter is None:
            if not any(word in args for word in HELP_WORDS):
                example = " ".join([words, f"--chapter {first}", _declared(listed).example_args])
                raise click.UsageError(f"--chapter is required, e.g. {example.rstrip()}")
            chapter = first
        found = find_chapter(chapter).command(words)
        if found is None:
            raise click.UsageError(_declared(listed).absent.format(n=chapter))
        _invoke(found, words, chapter, list(args), words)

    return click.Command(
        name=words.split()[-1],
        callback=command,
        params=[
            click.Option(["--chapter"], type=int, help=f"Which chapter: {first} or later."),
            click.Argument(["args"], nargs=-1, type=click.UNPROCESSED),
        ],
        help=listed.help,
        context_settings=PASS_THROUGH,
        add_help_option=False,
    )


def _declared(listed: ListedCommand) -> Subcommand:
    """What the part declares of `listed` in the first chapter whose listing names it."""
    declared = find_chapter(listed.chapter).subcommand(listed.words)
    assert declared is not None, f"{listed.words}: run python scripts/write_recipes.py"
    return declared


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


@cli.command()
@click.option("--chapter", type=int, required=True, help="The chapter whose recipe to show.")
@click.option("--explain", is_flag=True, help="Also what each slot is for and who provides what.")
def recipe(chapter: int, explain: bool) -> None:
    """Show what a chapter's agent is made of: its parts, tools, options; nothing runs."""
    from tutorial.recipe_listing import listing, recipe_of

    found = recipe_of(find_chapter(chapter).number)
    if found is None:
        raise click.UsageError(
            f"Chapter {chapter} has no recipe yet (chapters/ch{chapter:02d}/agent.py)"
        )
    click.echo(listing(found, explain), nl=False)


def _misplaced_chapter(args: list[str]) -> StrayWordError | None:
    """`run 1 ...` or `run -chapter 1 ...`: the chapter was meant, and the line says how."""
    if args and args[0].isdigit():
        return StrayWordError(args[0], "The chapter is an option", f"--chapter {args[0]}")
    return one_dash_option(run, args)


def _invoke(
    command: click.Command, words: str, chapter: int, args: list[str], subcommand: str = ""
) -> None:
    """Parse and invoke a chapter's command directly: its errors rise to our error policy.

    `words` name the command after `python -m tutorial`, `subcommand` the chapter's
    subcommand ("": its own command); an option that only a later chapter's command has
    is named with that chapter.
    """
    try:
        context = command.make_context(f"{PROG_NAME} {words} --chapter {chapter}", args)
    except click.NoSuchOption as error:
        raise _later_option(error.option_name, words, chapter, subcommand) or error from None
    with context as sub:
        command.invoke(sub)


def _later_option(option: str, words: str, chapter: int, subcommand: str) -> StrayWordError | None:
    """`option` is not chapter `chapter`'s: the first later chapter whose command has it."""
    for later in CHAPTERS:
        if later.number <= chapter or not later.ready:
            continue
        command = later.command(subcommand)
        names = {
            n for p in (command.params if command else ()) for n in (*p.opts, *p.secondary_opts)
        }
        if option in names:
            return StrayWordError(
                option,
                f"Chapter {chapter} has no such option; chapter {later.number} adds it",
                f"{PROG_NAME} {words} --chapter {later.number} {option} ...",
            )
    return None


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

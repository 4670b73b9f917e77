"""`python -m tutorial prompt --chapter N`: the system prompt a run from here would send.

The prompt is built exactly as the chapter's run builds it (the same files,
skills, memory and environment, today's date), then printed section by
section: each with its source and its size in characters and estimated tokens
(chapters/ch10/tokens.py says how the estimate is made). `--raw` prints the
text exactly as it is sent, byte for byte, and nothing else, to pipe into a
file or a tokenizer. Warnings (a skill left out, a file that cannot be read)
go to stderr in both cases. Nothing is started and no model is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import click

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from chapters.ch10.sections import Section, SystemPrompt
from chapters.ch10.tokens import HOW, estimate_tokens
from shared.cli import FriendlyCommand, working_directory

# A chapter's prompt for (workspace, home folder, today, and the values of its `options`
# by name): the same function its run calls.
PromptFor = Callable[..., SystemPrompt]
Option = Callable[[Callable[..., Any]], Callable[..., Any]]  # a click.option(...) decorator
RAW_OPTION = click.option(
    "--raw", is_flag=True, help="Print the prompt exactly as sent, nothing else."
)


def make_prompt_command(
    prompt_for: PromptFor, today: Callable[[], date] = date.today, options: Sequence[Option] = ()
) -> click.Command:
    """`prompt` for a chapter whose run builds its system prompt with `prompt_for`.

    `today` is the clock, asked when the command runs (a test passes a fixed one).
    `options` are options of the chapter's run that change its prompt, so that the
    prompt shown is the one a run with them sends; their values go to `prompt_for`.
    """

    def prompt_command(workspace: Path | None, raw: bool, **chosen: Any) -> None:
        """Print the system prompt a run from here would send, section by section."""
        root = Workspace(workspace or working_directory())
        prompt = prompt_for(root, Path.home(), today(), **chosen)
        for warning in prompt.warnings:
            click.echo(f"warning: {warning}", err=True)
        if raw:
            click.echo(prompt.text, nl=False)
        else:
            click.echo(report(prompt, root.root))

    for option in (*options, RAW_OPTION, workspace_option):  # --help lists them in this order
        prompt_command = option(prompt_command)
    return click.command(name="prompt", cls=FriendlyCommand)(prompt_command)


def report(prompt: SystemPrompt, folder: Path) -> str:
    """Every section with its header, then the total; the texts exactly as sent."""
    count = len(prompt.sections)
    parts = [
        f"The system prompt a run in {folder} would send, in {count} sections.\n"
        f"Sizes are characters; tokens are {HOW}."
    ]
    for number, section in enumerate(prompt.sections, 1):
        header = f"--- {number}/{count} {section.name} ---\nsource: {section.source}\n"
        parts.append(
            header + f"size: {size(section)}" + (f"\n{section.text}" if section.text else "")
        )
    sent = [section for section in prompt.sections if section.text]
    parts.append(
        f"--- total ---\n{len(sent)} of {count} sections sent: {len(prompt.text):,} characters, "
        f"~{estimate_tokens(prompt.text):,} tokens (with the blank lines between sections)"
    )
    return "\n\n".join(parts)


def size(section: Section) -> str:
    if not section.text:
        return "empty, left out of the prompt"
    shown = (
        f"{len(section.text):,} characters, ~{estimate_tokens(section.text):,} tokens "
        f"(cap {section.cap:,}"
    )
    if section.was_cut:
        return f"{shown}; cut from {section.full_size:,})"
    return f"{shown})"


def summary(prompt: SystemPrompt) -> str:
    """One line for a run's header: what the prompt costs, and which sections it has."""
    sent = ", ".join(section.name for section in prompt.sections if section.text)
    size = f"{len(prompt.text):,} characters, ~{estimate_tokens(prompt.text):,} tokens"
    return f"system prompt: {size} ({sent})"

"""The README and the chapter texts tell the truth: their commands parse, their JSON is current."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tutorial.catalog import find_chapter
from tutorial.cli import cli

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("ch*.md"))]
COMMAND = re.compile(r"python -m (?:tutorial|chapters\.ch\d\d)\b[^`\n]*")


def commands_in(path: Path) -> list[str]:
    # "--chapter N" in a table means any chapter; the one that exists stands in for it.
    text = path.read_text(encoding="utf-8").replace("--chapter N", "--chapter 1")
    return sorted(set(COMMAND.findall(text)))


def parse(command: str) -> None:
    """Parse a documented command exactly as the CLI would, without running it."""
    _, _, module, *args = shlex.split(command)
    if module.startswith("chapters."):
        _parse_chapter(int(module.removeprefix("chapters.ch")), args)
        return
    if not args or args == ["--help"]:
        return  # the dispatcher has no options of its own
    name, *rest = args
    if name == "permissions":
        name, *rest = rest
        group = cli.get_command(click.Context(cli), "permissions")
        assert isinstance(group, click.Group) and name == "check", command
        check = group.get_command(click.Context(group), "check")
        assert check is not None
        sub = check.make_context("check", rest)
        chapter_check = find_chapter(sub.params["chapter"]).command("check_command")
        assert chapter_check is not None, f"chapter {sub.params['chapter']} has no check"
        chapter_check.make_context("check", list(sub.params["check_args"]))
        return
    command_object = cli.get_command(click.Context(cli), name)
    if command_object is None:
        raise click.UsageError(f"no command {name!r}")
    sub = command_object.make_context(name, rest)
    if name == "run":
        _parse_chapter(sub.params["chapter"], list(sub.params["chapter_args"]))
    if name == "diff":
        find_chapter(sub.params["chapter"])


def _parse_chapter(number: int, args: list[str]) -> None:
    command = find_chapter(number).command()
    assert command is not None
    context = command.make_context(f"chapter {number}", args)
    assert context.params["demo"] or context.params["prompt"], "needs --prompt or --demo"
    if number >= 2 and context.params["workspace"] is not None:
        assert not context.params["demo"], "--demo and --workspace do not mix"


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_every_command_shown_parses(path: Path) -> None:
    commands = commands_in(path)
    assert commands, f"no commands found in {path.name}"
    for command in commands:
        try:
            parse(command)
        except (click.ClickException, AssertionError) as error:
            pytest.fail(f"{path.name}: `{command}` does not parse: {error}")


def test_the_command_check_catches_a_typo() -> None:
    with pytest.raises(click.NoSuchOption):
        parse('python -m tutorial run --chapter 1 --promt "hi"')
    with pytest.raises(AssertionError):
        parse("python -m chapters.ch01 --max-turns 3")


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test_command = "python scripts/with_venv.py python -m pytest"
    assert test_command in readme
    assert '"$PY" scripts/with_venv.py python -m pytest' in (ROOT / ".ci" / "run").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="the demo runs Write-Output on Windows")
def test_generated_json_and_code_in_the_texts_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update_docs.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr

"""The workspace, chosen on the command line: --workspace, the current folder, or a demo's own.

Every chapter from this one on has file tools, and so this option.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import click

from chapters.ch02.workspace import Workspace
from shared.cli import working_directory

workspace_option = click.option(
    "--workspace",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The folder the file tools may reach. Default: the current folder.",
)


def choose_workspace(
    demo: bool, workspace: Path | None, make_demo_workspace: Callable[[], Path]
) -> Workspace:
    """--workspace, else the current folder; a demo makes a temporary one of its own.

    The demo's folder is removed when the command ends, however it ends.
    """
    if demo and workspace is not None:
        raise click.UsageError("--demo makes its own temporary workspace; drop --workspace")
    if not demo:
        return Workspace(workspace or working_directory())
    folder = make_demo_workspace()
    click.get_current_context().call_on_close(lambda: remove_demo_folder(folder))
    return Workspace(folder)


def remove_demo_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)

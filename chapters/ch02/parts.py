"""Chapter 2's parts: a workspace the file tools cannot leave, and the five file tools.

workspace   --workspace, else the current folder (a demo's own for --demo): the
            folder every tool works in (chapters/ch02/options.py)
file-tools  read_file, write_file, edit_file, glob, grep on one `Workspace`, with
            one ledger of this agent's reads (chapters/ch02/toolset.py); before
            chapter 1's shell, which stays
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chapters.ch02.options import workspace_option
from chapters.ch02.workspace import Workspace
from shared.cli import params_of
from shared.parts import Build, Part, Setup
from shared.recipe import FOLDER, TOOLS
from shared.slots import Key, RecipeError

WORKSPACE: Key[Workspace] = Key("the workspace")
SEARCH_HIDDEN: Key[Callable[[str], bool]] = Key("what glob and grep skip")


class WorkspacePart(Part):
    """The folder the file tools may reach, and where commands run."""

    name = "workspace"
    summary = "--workspace, else the current folder: what the file tools may reach"
    options = params_of(workspace_option)

    def setup(self, setup: Setup) -> None:
        from chapters.ch02.options import choose_workspace

        def made() -> Workspace:
            return choose_workspace(setup.demo, setup.option("workspace"), lambda: demo(setup))

        setup.provide(WORKSPACE, made)
        setup.provide(FOLDER, lambda: setup.get(WORKSPACE).root)


class FileTools(Part):
    """Five file tools behind one boundary, sharing this agent's ledger of reads."""

    name = "file-tools"
    summary = "read_file, write_file, edit_file, glob, grep: inside the workspace"

    def contribute(self, build: Build) -> None:
        from chapters.ch02.toolset import make_file_tools

        hidden = None if build.listing else build.find(SEARCH_HIDDEN, None)
        for tool in make_file_tools(build.get(WORKSPACE), hidden):  # a child: its own ledger
            build.add(TOOLS, tool, before=("shell",), children=True)


def demo(setup: Setup) -> Path:
    """The demo's own folder, made by the chapter's demo module."""
    if setup.recipe.demo.workspace is None:
        raise RecipeError(f"{setup.recipe.title}'s demo makes no folder for its file tools")
    return setup.recipe.demo.workspace()

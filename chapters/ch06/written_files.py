"""Files people write for the agent to read (an agent definition): read as read_file would.

A definition in `.tutorial/agents/` becomes a sub-agent's system prompt, so it
is read with chapter 2's rules for what the model may read, and a bound:

    where it leads   links are followed, one part at a time (chapter 2's `real_path`), but
                     the real path must stay inside the folder the file belongs to: the
                     workspace for the project's files, the home folder for yours. A link
                     to ~/.ssh/id_rsa planted in a cloned repository is refused, not read
                     into a prompt
    what it is       a regular file only (chapter 2's `read_regular_file`): a named pipe
                     under that name would block the start for ever, a link to /dev/zero
                     would read until the memory runs out
    how much         at most `limit` bytes, and one more to tell whether there is more:
                     the caller decides whether more is an error or a cut

Anything else is an `UnreadableFile` whose message says why in words that
follow "cannot be read (": "it leads outside the workspace", "it is a named pipe
(FIFO), not a regular file", or what the system said.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from chapters.ch02.text_files import NotRegularFile, read_regular_file
from chapters.ch02.workspace import Workspace
from chapters.ch03.harness_files import LeadsOutside, inside_folder

BYTES_PER_CHARACTER = 4  # the most UTF-8 uses: a cap of N characters is at most 4N bytes
WORKSPACE, YOUR_HOME = "the workspace", "your home folder"  # `where`, for the usual two


class UnreadableFile(ValueError):
    """A file the agent will not read; the message says why."""


def read_written_file(base: Path, relative: Path, *, limit: int, where: str) -> bytes:
    """The first `limit` + 1 bytes (at most) of the regular file `base / relative`, whose real
    path must be inside `base` (`where` names that folder in the message: "the workspace")."""
    real = real_inside(base, relative, where=where)
    try:
        return read_regular_file(real, limit + 1)
    except NotRegularFile as error:
        raise UnreadableFile(f"it is {error}, not a regular file") from None
    except OSError as error:
        raise UnreadableFile(str(error)) from None


def real_inside(base: Path, relative: Path, *, where: str) -> Path:
    """The real path of `base / relative` (a file or a folder), if it is inside `base`."""
    try:
        return inside_folder(Workspace(base), relative)
    except LeadsOutside:
        raise UnreadableFile(f"it leads outside {where}") from None
    except (OSError, RuntimeError, ValueError) as error:  # a link loop, a link to nothing
        raise UnreadableFile(f"it cannot be resolved ({error})") from None


def as_text(data: bytes, *, whole: bool = True) -> str:
    """UTF-8 `data` as text, read the way `Path.read_text` reads a file: a BOM dropped, CRLF
    and CR as LF (a checkout on Windows reads the same). `whole` False: `data` is the start
    of a file, and a character cut at its end is left out. UnicodeDecodeError if not UTF-8.
    """
    text = codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=whole)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def too_large(limit: int, what: str) -> UnreadableFile:
    """The error for a file of more than `limit` bytes: `what` names the kind of file."""
    return UnreadableFile(f"it is more than {limit:,} bytes, the most {what} may hold")

"""Reading and writing text files without damaging them.

Three promises: a file is either the old version or the new one, never half
written (write to a temporary file in the same folder, then rename over the
old one: a rename within one file system is atomic); a CRLF file stays CRLF
and a file with a UTF-8 BOM keeps its BOM; a binary file is refused, not
"edited" into garbage.

A write killed between the two steps (SIGKILL, a power cut) leaves its temporary
file behind, with no chance to clean up. So temporary files get a name nothing
else has, `.NAME.<8 hex digits>.tutorial-tmp` (`is_temp_name`): glob and grep pass
over them, and the write tools remove stale ones (see writing.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192
# Never block in open(): O_NONBLOCK, so a pipe swapped in after the type check cannot
# hang us (POSIX only; Windows has no named pipes in the file system). O_BINARY: Windows.
TEMP_SUFFIX = ".tutorial-tmp"
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tutorial-tmp\Z", re.S)
_MAX_NAME_IN_TEMP = 100  # keep `.NAME.xxxxxxxx.tutorial-tmp` under the 255-byte name limit
NEW_FILE_MODE = 0o666  # less the umask, as open() and every editor create files
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class NotText(ValueError):
    """Binary, or not UTF-8: the file tools will not show or change it as text."""


class NotRegularFile(ValueError):
    """A named pipe, a device, a socket: opening one to read can block forever, so it is
    refused by its type, looked up before it is opened. The message is the type."""


@dataclass(frozen=True)
class TextFile:
    text: str  # newlines normalised to "\n", BOM removed: what the model sees and edits
    newline: str  # "\r\n" if the file used CRLF, else "\n"
    bom: bool
    digest: str  # sha256 of the bytes on disk, for the read-before-write check

    def encode(self, text: str) -> bytes:
        """`text` (with "\n") in this file's newline style and BOM."""
        body = text.replace("\r\n", "\n").replace("\n", self.newline).encode("utf-8")
        return BOM + body if self.bom else body


NEW_FILE = TextFile(text="", newline="\n", bom=False, digest="")


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def load_text(path: Path) -> TextFile:
    """Read and decode a text file; `NotText` for binary or non-UTF-8 content."""
    data = read_regular_file(path)
    if is_binary(data):
        raise NotText("is a binary file (it contains NUL bytes)")
    bom = data.startswith(BOM)
    try:
        text = data[len(BOM) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotText(f"is not UTF-8 text (undecodable byte at offset {error.start})") from None
    newline = "\r\n" if "\r\n" in text else "\n"
    return TextFile(text.replace("\r\n", "\n"), newline, bom, digest_of(data))


def read_regular_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of `path`, or `NotRegularFile` if it is not a regular file.

    Its type is checked before it is opened (a named pipe opened for reading waits
    for a writer, forever), and again on the open handle, which is opened without
    blocking, in case the path was swapped for a pipe in between. With `limit`, at
    most that many bytes are read: ask for one more than you keep to learn whether
    the file holds more.
    """
    refuse_unless_regular(os.stat(path).st_mode)
    return read_open_file(os.open(path, READ_FLAGS), limit)


def read_open_file(descriptor: int, limit: int | None = None) -> bytes:
    """The bytes of the file open as `descriptor`, which is closed after; at most `limit`.

    For a file opened some other way than by `read_regular_file` (without following
    links, say): its type is checked on the handle, so a pipe is never read.
    """
    with open(descriptor, "rb") as file:  # closes the descriptor whatever happens
        refuse_unless_regular(os.fstat(descriptor).st_mode)
        return file.read() if limit is None else file.read(limit)


def refuse_unless_regular(mode: int) -> None:
    """`NotRegularFile` naming the kind of file `mode` (from a stat) is, unless a regular one."""
    if stat.S_ISREG(mode):
        return
    kinds = [
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    raise NotRegularFile(next((name for test, name in kinds if test(mode)), "of another kind"))


def is_temp_name(name: str) -> bool:
    """Whether a file name is one `atomic_write` gives its temporary files, exactly."""
    return name.endswith(TEMP_SUFFIX) and _TEMP_NAME.match(name) is not None


def _new_temp_file(path: Path, mode: int) -> tuple[int, str]:
    """Create `.NAME.<random>.tutorial-tmp` beside `path`, exclusively, with `mode` (less the
    umask: the kernel applies it, so the umask is never read or changed)."""
    for _ in range(100):
        name = f".{path.name[:_MAX_NAME_IN_TEMP]}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        temporary = str(path.parent / name)
        try:
            return os.open(temporary, _WRITE_FLAGS, mode), temporary
        except FileExistsError:
            continue  # 1 in 4 billion, or someone else's: draw again
    raise FileExistsError(f"no free temporary file name beside {path}")


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` all at once; on any failure the old file is untouched.

    Permissions: a file that exists keeps its mode (the temporary file is private,
    0600, until it gets that mode just before the rename: a private file's new text
    is never readable by others); a new file gets what any program's new file gets,
    0666 less the umask.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    handle, temporary = _new_temp_file(path, NEW_FILE_MODE if mode is None else 0o600)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise

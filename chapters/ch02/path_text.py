"""The text of a path the model gives, and of a name the model is shown.

A path is one line of printable characters, not too deep. A newline in a path
is not a path anyone meant: `write_file("a\\n../b")` would make a folder named
`a\\n..`, and a listing of it would show a line that reads `../b`. A path of a
thousand folders makes pathlib recurse until Python gives up. The file tools'
arguments are typed `PathText` (a glob, `GlobText`), so these are refused as
`invalid_arguments` while a call is validated: before a preview is made, anyone
is asked, or anything on disk is looked at.

The other way round, a name on disk may hold any of these characters: a listing
shows it through `printable`, escaped, one line per name.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

# A path of more names than this is refused: no project nests that deep, and creating
# the folders of a path 1,000 deep makes pathlib recurse past Python's limit.
MAX_PATH_DEPTH = 100
# Control characters (C0, DEL, C1) and Unicode line breaks: no path has them, and a
# listing that printed one raw would show a line that is not a name.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\\]")  # and `\`, the escape's own


def text_problem(text: str, what: str = "the path") -> str | None:
    """Why `text` (a path, a glob) cannot name a file: a control character; None if it can."""
    found = _CONTROL.search(text)
    if found is None:
        return None
    return (
        f"{what} contains a control character or line break ({printable(found.group())} at "
        f"position {found.start()}); a file name is one line of printable characters"
    )


def path_problem(raw: str) -> str | None:
    """Why `raw` cannot be a path, judged on the text alone; None if it can be one."""
    if problem := text_problem(raw):
        return problem
    depth = sum(1 for part in raw.replace("\\", "/").split("/") if part not in ("", "."))
    if depth > MAX_PATH_DEPTH:
        return (
            f"the path has {depth} names; a path may have at most {MAX_PATH_DEPTH} "
            "(its folders and its file name together)"
        )
    return None


def _checked_path(raw: str) -> str:
    if problem := path_problem(raw):
        raise ValueError(problem)
    return raw


def _checked_glob(pattern: str) -> str:
    if problem := text_problem(pattern, "the glob"):
        raise ValueError(problem)
    return pattern


# The types of the file tools' path and glob arguments.
PathText = Annotated[str, AfterValidator(_checked_path)]
GlobText = Annotated[str, AfterValidator(_checked_glob)]


def printable(name: str) -> str:
    """`name` as a listing shows it: control characters and line breaks as `\\n`-style escapes.

    A file name may hold a newline; listed raw, `notes\\n../outside/secret.txt` reads as
    two names, the second one outside. A backslash is escaped as well (`\\\\`), so
    that what a listing shows stands for one name only.
    """
    if _UNPRINTABLE.search(name) is None:
        return name
    return _UNPRINTABLE.sub(_escape, name)


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    named = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(character)
    if named:
        return named
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

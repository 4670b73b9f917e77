"""Every way a file operation can fail, turned into a result the model can act on."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from chapters.ch02.text_files import NotRegularFile, NotText
from chapters.ch02.workspace import PathOutsideWorkspace
from shared.tools import ToolResult

T = TypeVar("T")


def file_errors_as_results(function: Callable[[Any], T]) -> Callable[[Any], T | ToolResult]:
    """Wrap a tool function so a refused path or an OS error is a result, not an exception."""

    @functools.wraps(function)
    def guarded(args: Any) -> T | ToolResult:
        try:
            return function(args)
        except PathOutsideWorkspace as error:
            return ToolResult.failed(
                "path_outside_workspace",
                f"{error}. File tools only reach files inside the workspace; use a path "
                "relative to its root. Nothing was read or changed.",
            )
        except NotRegularFile as error:
            return ToolResult.failed(
                "not_a_file",
                f"{getattr(args, 'path', 'the file')} is {error}, not a regular file; the file "
                "tools only read and write regular files. Nothing was read or changed.",
            )
        except NotText as error:
            return ToolResult.failed(
                "not_text", f"{getattr(args, 'path', 'the file')} {error}; use shell to inspect it."
            )
        except FileNotFoundError as error:
            return ToolResult.failed("not_found", f"{error.filename or 'the path'} does not exist.")
        except IsADirectoryError as error:
            return ToolResult.failed(
                "is_directory", f"{error.filename} is a folder; use glob to list files."
            )
        except OSError as error:
            where = f" ({error.filename})" if error.filename else ""
            return ToolResult.failed(
                "io_error", f"{error.strerror or error}{where}; nothing changed."
            )

    return guarded

"""The command line of chapter 9, so far: `python -m tutorial sessions --chapter 9`.

The dispatcher imports this module only when the command runs (tutorial/cli.py).
"""

from __future__ import annotations

from chapters.ch09.listing import sessions_command

__all__ = ["sessions_command"]

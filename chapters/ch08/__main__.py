"""`python -m chapters.ch08 --prompt "..."`: chapter 8's own script."""

from chapters.ch08.cli import main

main()

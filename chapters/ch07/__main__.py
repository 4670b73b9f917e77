"""`python -m chapters.ch07 --prompt "..."`: chapter 7's own script."""

from chapters.ch07.cli import main

main()

"""`python -m chapters.ch01 --prompt "..."`: chapter 1's own script."""

from chapters.ch01.cli import main

main()

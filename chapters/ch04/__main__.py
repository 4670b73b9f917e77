"""`python -m chapters.ch04 --prompt "..."`: chapter 4's own script."""

from chapters.ch04.cli import main

main()

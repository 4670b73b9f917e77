"""`python -m chapters.ch02 --prompt "..."`: chapter 2's own script."""

from chapters.ch02.cli import main

main()

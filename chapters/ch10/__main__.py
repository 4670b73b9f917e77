"""`python -m chapters.ch10 --prompt "..."`: chapter 10's own script."""

from chapters.ch10.cli import main

main()

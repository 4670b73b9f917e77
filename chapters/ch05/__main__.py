"""`python -m chapters.ch05 --prompt "..."`: chapter 5's own script."""

from chapters.ch05.cli import main

main()

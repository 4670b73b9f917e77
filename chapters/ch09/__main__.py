"""`python -m chapters.ch09 --prompt "..."`: chapter 9's own script."""

from chapters.ch09.cli import main

main()

"""`python -m chapters.ch11 --prompt "..."`: chapter 11's own script."""

from chapters.ch11.cli import main

main()

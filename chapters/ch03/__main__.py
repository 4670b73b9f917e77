"""`python -m chapters.ch03 --prompt "..."`: chapter 3's own script."""

from chapters.ch03.cli import main

main()

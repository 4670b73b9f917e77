"""`python -m chapters.ch06 --prompt "..."`: chapter 6's own script."""

from chapters.ch06.cli import main

main()

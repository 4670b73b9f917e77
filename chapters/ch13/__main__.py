"""`python -m chapters.ch13 --prompt "..."`: chapter 13's own script."""

from shared.entry import start

start("chapters.ch13.agent")

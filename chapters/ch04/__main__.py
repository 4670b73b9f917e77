"""`python -m chapters.ch04 --prompt "..."`: chapter 4's own script."""

from shared.entry import start

start("chapters.ch04.agent")

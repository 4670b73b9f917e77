"""`python -m chapters.ch01 --prompt "..."`: chapter 1's own script."""

from shared.entry import start

start("chapters.ch01.agent")

"""`python -m chapters.ch12 --prompt "..."`: chapter 12's own script."""

from shared.entry import start

start("chapters.ch12.agent")

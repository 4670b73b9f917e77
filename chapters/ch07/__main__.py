"""`python -m chapters.ch07 --prompt "..."`: chapter 7's own script."""

from shared.entry import start

start("chapters.ch07.agent")

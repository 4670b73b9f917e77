"""`python -m chapters.ch05 --prompt "..."`: chapter 5's own script."""

from shared.entry import start

start("chapters.ch05.agent")

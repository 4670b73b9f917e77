"""`python -m chapters.ch09 --prompt "..."`: chapter 9's own script."""

from shared.entry import start

start("chapters.ch09.agent")

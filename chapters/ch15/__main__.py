"""`python -m chapters.ch15 --prompt "..."`: chapter 15's own script."""

from shared.entry import start

start("chapters.ch15.agent")

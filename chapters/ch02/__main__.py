"""`python -m chapters.ch02 --prompt "..."`: chapter 2's own script."""

from shared.entry import start

start("chapters.ch02.agent")

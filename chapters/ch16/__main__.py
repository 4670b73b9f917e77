"""`python -m chapters.ch16 --prompt "..."`: chapter 16's own script."""

from shared.entry import start

start("chapters.ch16.agent")

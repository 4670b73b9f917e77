"""`python -m chapters.ch11 --prompt "..."`: chapter 11's own script."""

from shared.entry import start

start("chapters.ch11.agent")

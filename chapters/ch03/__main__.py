"""`python -m chapters.ch03 --prompt "..."`: chapter 3's own script."""

from shared.entry import start

start("chapters.ch03.agent")

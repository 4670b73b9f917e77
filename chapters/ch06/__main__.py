"""`python -m chapters.ch06 --prompt "..."`: chapter 6's own script."""

from shared.entry import start

start("chapters.ch06.agent")

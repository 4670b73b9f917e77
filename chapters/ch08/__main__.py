"""`python -m chapters.ch08 --prompt "..."`: chapter 8's own script."""

from shared.entry import start

start("chapters.ch08.agent")

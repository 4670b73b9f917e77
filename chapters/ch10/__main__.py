"""`python -m chapters.ch10 --prompt "..."`: chapter 10's own script."""

from shared.entry import start

start("chapters.ch10.agent")

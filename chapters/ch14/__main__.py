"""`python -m chapters.ch14 --prompt "..."`: chapter 14's own script."""

from shared.entry import start

start("chapters.ch14.agent")

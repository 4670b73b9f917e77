"""`python -m tutorial`: the dispatcher."""

from shared.entry import start

start("tutorial.cli")

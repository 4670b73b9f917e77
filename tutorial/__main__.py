"""`python -m tutorial`: the dispatcher."""

from tutorial.cli import main

main()

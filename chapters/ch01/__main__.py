"""`python -m chapters.ch01 --prompt "..."`: chapter 1's own script."""

import sys

from chapters.ch01.cli import main

sys.exit(main())

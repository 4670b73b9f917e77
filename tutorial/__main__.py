"""`python -m tutorial`: the dispatcher."""

import sys

from tutorial.cli import main

sys.exit(main())

"""Every chapter's `--demo` sends the same request bodies and prints the same lines as the
golden files in tests/golden/chNN/ say, byte for byte (after scripts/record_demos.py's rules
for what differs between runs: temporary paths, today's date, run ids).

A change to how a chapter's agent is composed must not change what goes over the wire or
what the reader sees; when a change is meant to, record the demos again and review the diff.
The golden files are made on Linux, so the test runs there (CI) and is skipped elsewhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scripts.record_demos import first_difference, ready_chapters, record

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the golden demos are recorded and checked on Linux"
)


@pytest.mark.parametrize("number", ready_chapters())
def test_the_demo_sends_and_prints_what_the_golden_files_hold(number: int, tmp_path: Path) -> None:
    difference = first_difference(number, record(number, tmp_path))
    assert difference is None, (
        f"chapter {number}'s demo no longer sends or prints what tests/golden/ch{number:02d}/ "
        "holds. If the change is intended, run `python scripts/record_demos.py` and commit "
        f"the new files with the change.\n{difference}"
    )

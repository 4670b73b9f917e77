"""A Stop hook: refuse to stop while the tests fail.

    {"hooks": {"Stop": [{"command": "python stop_until_tests_pass.py", "timeout": 300}]}}

It runs `python -m pytest -q` in the workspace. Green: exit 0, the agent may
stop. Red: exit 2 with the end of pytest's report on stderr; the loop sends
that back to the model as a user message and goes on (at most a few times in
a row: see chapter 4's loop).
"""

import json
import subprocess
import sys

event = json.load(sys.stdin)
done = subprocess.run(
    [sys.executable, "-m", "pytest", "-q"],
    cwd=event["workspace"],
    capture_output=True,
    text=True,
    encoding="utf-8",
    errors="replace",
    check=False,
)
if done.returncode not in (0, 5):  # 5: no tests collected, nothing to wait for
    report = (done.stdout + done.stderr).strip().splitlines()[-15:]
    print("The tests fail; fix them before you stop:\n" + "\n".join(report), file=sys.stderr)
    sys.exit(2)
sys.exit(0)

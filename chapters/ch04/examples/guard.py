"""A PreToolUse hook: block `rm` with both -r and -f, whatever the flag order.

    {"hooks": {"PreToolUse": [{"matcher": "shell", "command": "python guard.py"}]}}

It reads the event from stdin. Exit 2 with a reason on stderr blocks the call;
exit 0 with no output says "no objection" and the policy decides as usual.
"""

import json
import re
import sys

event = json.load(sys.stdin)
command = event.get("input", {}).get("command", "")
for part in re.split(r"&&|\|\||[;|\n]", command):
    words = part.split()
    flags = "".join(
        w.lstrip("-") for w in words[1:] if w.startswith("-") and not w.startswith("--")
    )
    if words and words[0] == "rm" and "r" in flags.lower() and "f" in flags:
        print(f"'{part.strip()}' deletes recursively without asking", file=sys.stderr)
        sys.exit(2)
sys.exit(0)

"""A PostToolUse hook, a tiny formatter: strip trailing whitespace from the file just written.

    {"hooks": {"PostToolUse": [{"matcher": "write_file|edit_file",
                                "command": "python strip_whitespace.py"}]}}

It answers with additionalContext, which the model reads after the tool's own
result. It changes the file after the agent wrote it, so it says so: the agent
must read the file again before its next edit (chapter 2's read-before-write).
"""

import json
import sys
from pathlib import Path

event = json.load(sys.stdin)
path = Path(event["workspace"], event["input"]["path"])
data = path.read_bytes()
newline = b"\r\n" if b"\r\n" in data else b"\n"
lines = data.split(newline)
stripped = [line.rstrip(b" \t") for line in lines]
changed = sum(1 for old, new in zip(lines, stripped, strict=True) if old != new)
if changed:
    path.write_bytes(newline.join(stripped))
    note = f"strip_whitespace.py removed trailing spaces from {changed} line(s) of "
    note += f"{event['input']['path']}; read it again before you edit it."
    print(json.dumps({"additionalContext": note}))

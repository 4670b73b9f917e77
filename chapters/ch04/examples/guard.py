"""A PreToolUse hook: block `rm` with both -r and -f, whatever the spelling or order.

    {"hooks": {"PreToolUse": [{"matcher": "shell", "command": "python guard.py"}]}}

It reads the event from stdin. Exit 2 with a reason on stderr blocks the call;
exit 0 with no output says "no objection" and the policy decides as usual.
Like any check on a command's text it can be talked around (a script that
deletes, `find -delete`); it catches the common mistake, not a determined one.
"""

import json
import re
import sys

LONG_FLAGS = {"--recursive": "r", "--force": "f"}
WRAPPERS = {"sudo", "doas", "env", "command", "exec", "nice", "nohup", "time", "xargs"}


def program(words: list[str]) -> int | None:
    """Index of the program a part runs, past `sudo`, `env X=1` and the like."""
    for index, word in enumerate(words):
        if word in WRAPPERS or word.startswith("-") or "=" in word:
            continue
        return index
    return None


event = json.load(sys.stdin)
command = event.get("input", {}).get("command", "")
for part in re.split(r"&&|\|\||[;|\n]", command):
    words = part.split()
    start = program(words)
    # `rm`, `/bin/rm` and `\rm` are all rm
    if start is None or words[start].rsplit("/", 1)[-1].lstrip("\\") != "rm":
        continue
    flags = ""
    for word in words[start + 1 :]:
        if word in LONG_FLAGS:
            flags += LONG_FLAGS[word]
        elif word.startswith("-") and not word.startswith("--"):
            flags += word[1:]
    if "r" in flags.lower() and "f" in flags:
        print(f"'{part.strip()}' deletes recursively without asking", file=sys.stderr)
        sys.exit(2)
sys.exit(0)

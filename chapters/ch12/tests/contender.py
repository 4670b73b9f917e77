"""One of several processes changing the same task list at once: started by test_contention.py
and by scripts/bench_tasks.py.

    python -m chapters.ch12.tests.contender claim  ROOT NAME COUNT   claim tasks 1..COUNT
    python -m chapters.ch12.tests.contender create ROOT NAME COUNT   create COUNT tasks, each
                                                                     blocked by task 1
    python -m chapters.ch12.tests.contender mixed  ROOT NAME COUNT   COUNT changes, in turn:
                                                                     a create as above, and a
                                                                     claim of task 2, 3, ...

`contend` runs several at once, from a test or the benchmark. Each prints
`ready` and waits for one line on stdin before its first change, so
the parent starts every contender at the same moment (once all are ready),
without guessing a time. Then it prints one JSON line: what each change
returned, as this process saw it (`created`: the ids it was given; `won`: the
tasks it claimed; `lost`: the claims refused as already_claimed; `other`: the
text of any other result). If nobody writes the line, or the work hangs, it
exits after `LIFETIME` seconds, so a broken run never leaves a process behind
for long.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chapters.ch12.tasks import TaskStore

LIFETIME = 300.0  # seconds
ACTIONS = ("claim", "create", "mixed")
REPOSITORY = Path(__file__).resolve().parents[3]
MODULE = "chapters.ch12.tests.contender"


def contend(
    root: Path, action: str, names: Sequence[str], count: int, deadline: float = LIFETIME
) -> tuple[dict[str, dict[str, Any]], float]:
    """Run one contender per name, all released at once; what each says it did, by name, and
    the seconds from their release to the last one's end.

    A contender that never gets `go` exits after its LIFETIME (closing its
    stdout, which ends the wait for `ready`).
    """
    commands = {
        name: [sys.executable, "-m", MODULE, action, str(root), name, str(count)] for name in names
    }
    return released_together(commands, deadline)


def released_together(
    commands: Mapping[str, Sequence[str]], deadline: float
) -> tuple[dict[str, Any], float]:
    """Start one process per command (run in the repository), wait until each prints
    `ready`, release them all at once with a line on stdin, and read the one JSON
    document each prints: those by name, and the seconds from the release to the last
    one's end. Each is waited for at most `deadline` seconds once released; whatever is
    still running at the end is killed."""
    processes = {
        name: subprocess.Popen(
            list(command),
            cwd=REPOSITORY,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, command in commands.items()
    }
    try:
        for name, process in processes.items():
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"process {name} did not start: {process.stderr}")
        started = time.perf_counter()
        for process in processes.values():  # all are waiting: release them together
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        said = {}
        for name, process in processes.items():
            out, err = process.communicate(timeout=deadline)
            if process.returncode != 0:
                raise RuntimeError(f"process {name} failed ({process.returncode}): {err}")
            said[name] = json.loads(out)
        return said, time.perf_counter() - started
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=deadline)


def main(argv: Sequence[str]) -> int:
    action, root, name, count = argv[0], Path(argv[1]), argv[2], int(argv[3])
    if action not in ACTIONS:
        print(f"unknown action {action!r}; one of {', '.join(ACTIONS)}", file=sys.stderr)
        return 2
    watchdog = threading.Timer(LIFETIME, os._exit, args=(3,))
    watchdog.daemon = True
    watchdog.start()
    store = TaskStore(root)
    said: dict[str, list[str]] = {"created": [], "won": [], "lost": [], "other": []}
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 2  # the parent went away
    for number in range(count):
        if action == "claim" or (action == "mixed" and number % 2):
            task_id = str(number + 1) if action == "claim" else str(2 + number // 2)
            outcome = store.update(task_id, owner=name, status="in_progress")
            kind = {"ok": "won", "already_claimed": "lost"}.get(outcome.keyword, "other")
            said[kind].append(outcome.text if kind == "other" else task_id)
        else:
            outcome = store.create(f"{name} {len(said['created']) + 1}", blocked_by=["1"])
            if outcome.keyword == "created" and outcome.task is not None:
                said["created"].append(outcome.task.id)
            else:
                said["other"].append(outcome.text)
    print(json.dumps(said), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

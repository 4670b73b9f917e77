"""Benchmark: the startup time that importing `openai` lazily saves.

    python scripts/bench_startup.py [--runs 10] [--against DIR]   (exit 1: goal missed)

What it measures: wall-clock time of fresh interpreters (the same Python as this script,
one warm-up run each, then median and min of N runs) for
    (a) `python -c "import openai"`                     the cost we avoid,
    (b) `python -m tutorial --help`                     from the repository root,
    (c) `python -m tutorial run --chapter 1 --prompt hi` in an empty folder with no
        OPENAI_* settings: the configuration error (exit 2),
    (d) `python -m tutorial list`,
    (e) `python -m tutorial diff --chapter 11 --stat`,
    (f) `python -m tutorial run --chapter 11 --help`: the longest recipe's command,
    (g) `python -m tutorial run --chapter 1 --demo`, answering the one approval with n.
`--against DIR` measures the same commands from another checkout of the repository
(a worktree of an earlier commit, say) in the same run, turn by turn, so that the two
are compared on the same machine at the same moment; the ratios are this checkout's
median over the other's.

Why: `--help`, `list`, `diff` and a configuration error are the first things a reader
runs; they should answer at once instead of waiting for the OpenAI SDK to import.

Goal: (c) exits with 2, and none of (b) to (g) imports `openai` (checked once each by
running the module in a child interpreter and then looking at `sys.modules`). The ratios
to (a) are reported for information.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Runs `python -m tutorial ARGS` in-process, then reports whether `openai` got imported.
PROBE = """import runpy, sys
sys.argv = ["tutorial", *sys.argv[1:]]
try:
    runpy.run_module("tutorial", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m == "openai" or m.startswith("openai."))
sys.__stderr__.write("\\nOPENAI_MODULES=" + ",".join(loaded) + "\\n")
"""


@dataclass(frozen=True)
class Command:
    label: str
    args: list[str]  # after `python -m tutorial`
    in_empty_folder: bool = False  # with no OPENAI_* settings
    stdin: str = ""
    exit_code: int | None = 0  # None: any (a demo answered "n" may end either way)


COMMANDS = [
    Command("(b) --help", ["--help"]),
    Command("(c) config error", ["run", "--chapter", "1", "--prompt", "hi"], True, exit_code=2),
    Command("(d) list", ["list"]),
    Command("(e) diff --stat", ["diff", "--chapter", "11", "--stat"]),
    Command("(f) run 11 --help", ["run", "--chapter", "11", "--help"]),
    Command("(g) demo", ["run", "--chapter", "1", "--demo"], True, stdin="n\n", exit_code=None),
]


def run(args: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> tuple[float, int, str]:
    """One fresh interpreter: wall time in seconds, exit code, stderr."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started, done.returncode, done.stderr


def imported_openai(args: list[str], cwd: Path, env: dict[str, str], stdin: str) -> list[str]:
    _, _, stderr = run(["-c", PROBE, *args], cwd, env, stdin)
    marker = [line for line in stderr.splitlines() if line.startswith("OPENAI_MODULES=")]
    if not marker:
        raise SystemExit(f"the import probe did not report; its stderr:\n{stderr}")
    return [name for name in marker[-1].removeprefix("OPENAI_MODULES=").split(",") if name]


def environments(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The environment of a command run from `root`, and of one run in an empty folder."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    bare = {k: v for k, v in env.items() if not k.startswith("OPENAI_")}
    return env, bare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    parser.add_argument("--against", type=Path, help="another checkout, measured alongside")
    options = parser.parse_args()
    runs = max(options.runs, 1)
    roots = {"this": ROOT}
    if options.against:
        roots["other"] = options.against.resolve()
    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as empty:
        times: dict[tuple[str, str], list[float]] = {}
        base = [run(["-c", "import openai"], ROOT, dict(os.environ))[0] for _ in range(runs + 1)]
        openai_ms = statistics.median(base[1:]) * 1e3
        fastest = min(base) * 1e3
        print(f"  {'(a) import openai':<22} median {openai_ms:7.1f} ms   min {fastest:7.1f} ms")
        for command in COMMANDS:
            for name, root in roots.items():
                env, bare = environments(root)
                cwd, cmd_env = (Path(empty), bare) if command.in_empty_folder else (root, env)
                args = ["-m", "tutorial", *command.args]
                _, code, stderr = run(args, cwd, cmd_env, command.stdin)  # warm-up
                if command.exit_code is not None and code != command.exit_code:
                    failures.append(
                        f"{command.label} ({name}) exited {code}, expected "
                        f"{command.exit_code}: {stderr[-300:]}"
                    )
                times[command.label, name] = []
            for _ in range(runs):  # turn by turn: both checkouts see the same machine
                for name, root in roots.items():
                    env, bare = environments(root)
                    cwd, cmd_env = (Path(empty), bare) if command.in_empty_folder else (root, env)
                    elapsed = run(["-m", "tutorial", *command.args], cwd, cmd_env, command.stdin)
                    times[command.label, name].append(elapsed[0] * 1e3)
            line = f"  {command.label:<22}"
            for name in roots:
                median = statistics.median(times[command.label, name])
                line += f" {name}: median {median:7.1f} ms ({median / openai_ms:.2f} of (a))"
            if "other" in roots:
                ratio = statistics.median(times[command.label, "this"]) / statistics.median(
                    times[command.label, "other"]
                )
                line += f"  this/other {ratio:.2f}"
            print(line)
            env, bare = environments(ROOT)
            cwd, cmd_env = (Path(empty), bare) if command.in_empty_folder else (ROOT, env)
            loaded = imported_openai(command.args, cwd, cmd_env, command.stdin)
            if loaded:
                failures.append(f"{command.label} imported openai: {', '.join(loaded[:3])}")
    print(f"  ({runs} runs each)")
    for failure in failures:
        print(f"GOAL MISSED: {failure}")
    if not failures:
        print("goal met: none of (b) to (g) imports openai; (c) exits 2")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

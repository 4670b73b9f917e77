"""Benchmark: the startup time that importing `openai` lazily saves.

    python scripts/bench_startup.py [--runs 10]   (exit 1: goal missed)

What it measures: wall-clock time of fresh interpreters (the same Python as this script,
one warm-up run each, then median and min of N runs) for
    (a) `python -c "import openai"`                    the cost we avoid,
    (b) `python -m tutorial --help`                    from the repository root,
    (c) `python -m tutorial run --chapter 1 --prompt hi` in an empty folder with no
        OPENAI_* settings: the configuration error (exit 2).

Why: `--help` and a configuration error are the first things a reader runs; they should
answer at once instead of waiting for the OpenAI SDK to import.

Goal: (c) exits with 2, and neither (b) nor (c) imports `openai` (checked once each by
running the module in a child interpreter and then looking at `sys.modules`). The ratios
(b)/(a) and (c)/(a) are reported for information.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELP_ARGS = ["--help"]
CONFIG_ERROR_ARGS = ["run", "--chapter", "1", "--prompt", "hi"]
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


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, str]:
    """One fresh interpreter: wall time in seconds, exit code, stderr."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    return time.perf_counter() - started, done.returncode, done.stderr


def imported_openai(args: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    _, _, stderr = run(["-c", PROBE, *args], cwd, env)
    marker = [line for line in stderr.splitlines() if line.startswith("OPENAI_MODULES=")]
    if not marker:
        raise SystemExit(f"the import probe did not report; its stderr:\n{stderr}")
    return [name for name in marker[-1].removeprefix("OPENAI_MODULES=").split(",") if name]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    runs = max(parser.parse_args().runs, 1)
    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")

    env = dict(os.environ)
    bare_env = {k: v for k, v in env.items() if not k.startswith("OPENAI_")}
    bare_env["PYTHONPATH"] = str(ROOT)  # the package imports from the empty folder
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as empty:
        commands = {
            "(a) import openai": (["-c", "import openai"], ROOT, env),
            "(b) -m tutorial --help": (["-m", "tutorial", *HELP_ARGS], ROOT, env),
            "(c) config error": (["-m", "tutorial", *CONFIG_ERROR_ARGS], Path(empty), bare_env),
        }
        medians: dict[str, float] = {}
        for label, (args, cwd, cmd_env) in commands.items():
            _, code, stderr = run(args, cwd, cmd_env)  # warm-up, and the exit code check
            expected = 2 if label.startswith("(c)") else 0
            if code != expected:
                failures.append(f"{label} exited {code}, expected {expected}: {stderr[-300:]}")
            times = [run(args, cwd, cmd_env)[0] * 1e3 for _ in range(runs)]
            medians[label] = statistics.median(times)
            print(f"  {label:<24} median {medians[label]:7.1f} ms   min {min(times):7.1f} ms")

        for label, args, cwd, cmd_env in (
            ("(b) --help", HELP_ARGS, ROOT, env),
            ("(c) config error", CONFIG_ERROR_ARGS, Path(empty), bare_env),
        ):
            loaded = imported_openai(args, cwd, cmd_env)
            print(f"  {label} imports openai: {'YES ' + ', '.join(loaded[:3]) if loaded else 'no'}")
            if loaded:
                failures.append(f"{label} imported openai")

    base, (b, c) = medians["(a) import openai"], list(medians.values())[1:]
    print(f"  ratio (b)/(a): {b / base:.2f}   ratio (c)/(a): {c / base:.2f}   ({runs} runs each)")
    for failure in failures:
        print(f"GOAL MISSED: {failure}")
    if not failures:
        print("goal met: --help and the config error never import openai; (c) exits 2")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

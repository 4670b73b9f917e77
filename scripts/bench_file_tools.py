"""Benchmark: chapter 2's grep and glob tools against `grep -rn` and `find`.

    python scripts/bench_file_tools.py [--files 5000] [--repeat 5]   (exit 1: goal missed)

What it measures: in a generated temporary tree (N files of 20-60 lines, folders up to three
deep, a few binary files, a `.git` folder the tools skip), the best-of-R wall time after one
warm-up of our grep tool (in-process) against `grep -rn --exclude-dir=.git`, and of our glob
`**/*.py` against `find -name '*.py' -not -path '*/.git/*'`. The tools show at most 200
lines / 100 files but search everything, which is what is timed. All four must report the
totals the generator knows.

Why: grep and glob are the model's first moves in a large repository; they should not be
the slow step of a turn.

Goal: our grep within 3x of `grep -rn`. The glob ratio is reported for information.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch02.searching import GlobArgs, GrepArgs, make_search_tools
from chapters.ch02.workspace import Workspace
from shared.tools import ToolResult

GOAL_RATIO = 3.0
NEEDLE = "NEEDLE_TOKEN"
WORDS = ("agent", "loop", "model", "tool", "call", "result", "path", "file", "text", "error")
EXTENSIONS = (".py", ".md", ".txt", ".json")
LINE_FORMATS = {".py": "    x{n} = {words!r}", ".json": '"k{n}": "{words}",'}
T = TypeVar("T")


def make_tree(root: Path, count: int) -> tuple[int, int]:
    """Write the tree (deterministic); returns (lines with NEEDLE, .py files) outside .git."""
    rng = random.Random(1234)
    folders = [f"pkg{i:02d}" + "".join(f"/sub{j}" for j in range(i % 3)) for i in range(50)]
    needle_lines = py_files = 0
    for index in range(count):
        folder = root / folders[index % len(folders)]
        folder.mkdir(parents=True, exist_ok=True)
        if index < max(1, count // 500):  # binary (NUL bytes): skipped by both sides
            (folder / f"blob{index}.bin").write_bytes(b"\0\1\2" + NEEDLE.encode() * 50)
            continue
        ext = EXTENSIONS[index % len(EXTENSIONS)]
        py_files += ext == ".py"
        lines = []
        for n in range(rng.randint(20, 60)):
            words = " ".join(rng.choices(WORDS, k=rng.randint(3, 9)))
            if rng.random() < 0.02:  # sometimes twice on a line: still one matching line
                words += f" {NEEDLE}" * rng.randint(1, 2)
                needle_lines += 1
            lines.append(LINE_FORMATS.get(ext, "{words}").format(n=n, words=words))
        (folder / f"file{index:05d}{ext}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / ".git" / "objects").mkdir(parents=True)
    for i in range(40):  # matches that must not be counted
        (root / ".git" / "objects" / f"hook{i}.py").write_text(f"{NEEDLE} = {i}\n", "utf-8")
    return needle_lines, py_files


def best_ms(action: Callable[[], T], repeat: int) -> tuple[float, T]:
    """One warm-up, then the best of `repeat` wall-clock runs: (ms, the last result)."""
    result = action()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return min(times) * 1e3, result


def reported_total(result: ToolResult) -> int:
    """N from the header `ok: N matching lines` / `ok: N files match`."""
    found = re.match(r"ok: (\d+) (matching lines|files match)", result.content)
    if not found:
        raise SystemExit(f"unexpected tool output: {result.content[:200]!r}")
    return int(found.group(1))


def output_lines(command: list[str]) -> int:
    """Run `command`; its count of output lines (an old grep's `Binary file` notes aside)."""
    done = subprocess.run(command, capture_output=True, check=False)
    return sum(not line.startswith(b"Binary file") for line in done.stdout.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000, help="files in the generated tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs; the best is taken")
    args = parser.parse_args()
    if args.files < 10 or args.repeat < 1:
        parser.error("--files must be at least 10 and --repeat at least 1")
    print(f"Python {platform.python_version()} on {platform.platform(terse=True)}")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        needle_lines, py_files = make_tree(root, args.files)
        glob_tool, grep_tool = make_search_tools(Workspace(root))
        grep_args, glob_args = GrepArgs(pattern=NEEDLE), GlobArgs(pattern="**/*.py")
        print(f"{args.files} files, {py_files} .py, {needle_lines} lines with {NEEDLE}")
        print(f"best of {args.repeat} runs after one warm-up:")
        ms: dict[str, float] = {}
        ms["our grep"], grep_result = best_ms(lambda: grep_tool.run(grep_args), args.repeat)
        ms["our glob"], glob_result = best_ms(lambda: glob_tool.run(glob_args), args.repeat)
        totals = {  # name: (reported, expected)
            "our grep": (reported_total(grep_result), needle_lines),
            "our glob": (reported_total(glob_result), py_files),
        }
        missing = [name for name in ("grep", "find") if shutil.which(name) is None]
        compare = not missing and os.name != "nt"  # Windows' find.exe is another program
        if compare:
            grep_cmd = ["grep", "-rn", "--exclude-dir=.git", NEEDLE, str(root)]
            find_cmd = ["find", str(root), "-name", "*.py", "-not", "-path", "*/.git/*"]
            ms["grep -rn"], grep_count = best_ms(lambda: output_lines(grep_cmd), args.repeat)
            ms["find"], find_count = best_ms(lambda: output_lines(find_cmd), args.repeat)
            totals |= {"grep -rn": (grep_count, needle_lines), "find": (find_count, py_files)}

    for name, (total, _) in totals.items():
        print(f"  {name:<9} {ms[name]:8.1f} ms   total {total}")
    failures = [f"{key} reports {n}, expected {w}" for key, (n, w) in totals.items() if n != w]
    if compare:
        grep_ratio = ms["our grep"] / ms["grep -rn"]
        print(f"  ratio grep ours/theirs: {grep_ratio:.2f}  (goal <= {GOAL_RATIO:g})")
        print(f"  ratio glob ours/theirs: {ms['our glob'] / ms['find']:.2f}  (information)")
        if grep_ratio > GOAL_RATIO:
            failures.append(f"our grep is {grep_ratio:.1f}x slower than grep -rn")
    else:
        print(f"no comparison: {', '.join(missing) or 'POSIX grep/find'} not available here")
    for failure in failures:
        print(f"GOAL MISSED: {failure}")
    if compare and not failures:
        print(f"goal met: all totals agree; our grep is within {GOAL_RATIO:g}x of grep -rn")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: how often a chapter's agent gets small coding tasks right with a real model.

    python scripts/bench_agent.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b \
        --chapters 5 11 --runs 3 [--tasks fix_bug,count_lines] [--mini PATH] [--keep-logs DIR]
        [--tools read_file,write_file,edit_file,glob,grep,shell]

Each task is a small folder of files, a prompt, and a check that reads the files or
runs a command afterwards, never the model's own words. Each run starts from a fresh
copy of the folder and goes through the course's own command line
(`python -m tutorial run --chapter N --prompt ...`) against any OpenAI-compatible
server, as a reader would run it. Chapters from 3 on run with `--mode bypass` (no
human to ask); chapters 1 and 2 would ask, and without a terminal every call would be
denied, so they are not offered here.

With `--mini PATH` (the `mini` command of mini-swe-agent, installed in an environment
of its own, never a dependency of this project), the same tasks also run through it
against the same server, side by side.

It prints one row per task and agent: passes of runs, the median time, the median
number of model requests, how many runs used up their turns going round (one call
again and again, or two taking turns) and how many the repeat guard stopped (chapter
11 on); then a summary line per agent. `--tools NAMES` passes chapter 11's `--tools`.
It is a benchmark, not a test: it needs a model server, takes minutes per run on a
small CPU, and never runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
Check = Callable[[Path], bool]


@dataclass(frozen=True)
class Task:
    name: str
    files: Mapping[str, str]
    prompt: str
    check: Check


def run_python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=folder, capture_output=True, text=True, timeout=60
    )


def text_of(folder: Path, name: str) -> str:
    path = folder / name
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def python_sources(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*.py"))


def _renamed(folder: Path) -> bool:
    sources = python_sources(folder)
    runs = run_python(folder, "main.py")
    return "get_data" not in sources and "def load_data" in sources and runs.returncode == 0


def _json_debug(folder: Path) -> bool:
    try:
        return json.loads(text_of(folder, "settings.json")).get("debug") is True
    except (json.JSONDecodeError, AttributeError):
        return False


TYPO_FILES = {
    "a.md": "Please recieve the parcel.\n",
    "b.md": "We recieve mail daily.\n",
    "docs/c.md": "You will recieve a reply.\n",
}

TASKS = [
    Task(
        "fix_bug",
        {"calc.py": "def add(a, b):\n    return a - b\n"},
        "There is a bug in calc.py: add(2, 3) should return 5. Fix it.",
        lambda f: (
            run_python(f, "-c", "from calc import add; assert add(2, 3) == 5").returncode == 0
        ),
    ),
    Task(
        "write_file",
        {},
        "Create a file hello.txt whose only line is: Hello, world",
        lambda f: text_of(f, "hello.txt").strip() == "Hello, world",
    ),
    Task(
        "count_lines",
        {"notes.txt": "".join(f"note {n}\n" for n in range(1, 8))},
        "Count the lines in notes.txt and write just the number to answer.txt.",
        lambda f: text_of(f, "answer.txt").strip() == "7",
    ),
    Task(
        "rename_function",
        {
            "util.py": "def get_data():\n    return [1, 2, 3]\n",
            "main.py": "from util import get_data\n\nprint(sum(get_data()))\n",
        },
        "Rename the function get_data to load_data, in its definition and where it is used.",
        _renamed,
    ),
    Task(
        "find_class",
        {
            "src/app.py": "from src.lib.parsing import Parser\n\nPARSER = Parser()\n",
            "src/lib/__init__.py": "",
            "src/lib/parsing.py": (
                "class Parser:\n    def parse(self, text):\n        return text.split()\n"
            ),
            "src/lib/tokens.py": "class Token:\n    pass\n",
        },
        "Find the file that defines the class Parser and write its path to answer.txt.",
        lambda f: "src/lib/parsing.py" in text_of(f, "answer.txt").replace("\\", "/"),
    ),
    Task(
        "fix_typo_everywhere",
        TYPO_FILES,
        "The word 'recieve' is misspelled in several files. Fix it to 'receive' everywhere.",
        lambda f: all(
            "recieve" not in text_of(f, name) and "receive" in text_of(f, name)
            for name in TYPO_FILES
        ),
    ),
    Task(
        "write_script",
        {},
        "Write a Python script sum.py that prints the sum of the whole numbers from 1 to 10.",
        lambda f: run_python(f, "sum.py").stdout.strip() == "55",
    ),
    Task(
        "add_import",
        {"area.py": "def circle(r):\n    return math.pi * r * r\n\nprint(round(circle(2), 2))\n"},
        "Running area.py fails with a NameError. Fix area.py so that it runs.",
        lambda f: run_python(f, "area.py").stdout.strip() == "12.57",
    ),
    Task(
        "change_constant",
        {"config.py": "TIMEOUT = 30\nRETRIES = 3\n"},
        "Change TIMEOUT in config.py to 60 and leave everything else as it is.",
        lambda f: text_of(f, "config.py") == "TIMEOUT = 60\nRETRIES = 3\n",
    ),
    Task(
        "json_settings",
        {},
        "Create settings.json: a JSON object with the key debug set to true.",
        _json_debug,
    ),
    Task(
        "delete_line",
        {"todo.txt": "write report\nbuy milk\ncall Ana\n"},
        "Remove the line 'buy milk' from todo.txt and keep the other lines.",
        lambda f: text_of(f, "todo.txt").splitlines() == ["write report", "call Ana"],
    ),
    Task(
        "make_test_pass",
        {
            "mathx.py": "def square(x):\n    return x * 2\n",
            "test_mathx.py": "from mathx import square\n\n\ndef test_square():\n"
            "    assert square(3) == 9\n",
        },
        "The test in test_mathx.py fails. Fix mathx.py (not the test) so that it passes.",
        lambda f: (
            run_python(f, "-m", "pytest", "-q", "test_mathx.py").returncode == 0
            and "square(3) == 9" in text_of(f, "test_mathx.py")
        ),
    ),
]


@dataclass(frozen=True)
class Outcome:
    passed: bool
    seconds: float
    requests: int
    looped: bool  # used up its turns going round: one call, or two taking turns
    stopped: bool  # the repeat guard ended it (chapter 11 on)


RESULT_BLOCK = re.compile(r"^\s*(?:│ )?\[(\w+) → (\w+)\]\n(.*)$", re.M)


def ended_in_a_loop(log: str) -> bool:
    """The run used up its turns while going round: its last four tool results (name,
    keyword and first line) were one result, or two taking turns."""
    if "AgentLimitError" not in log:
        return False
    blocks = RESULT_BLOCK.findall(log)
    return len(blocks) >= 4 and len(set(blocks[-4:])) <= 2


def mini_calls(trajectory: Path) -> int:
    try:
        info = json.loads(trajectory.read_text(encoding="utf-8"))["info"]
        return int(info["model_stats"]["api_calls"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def course_command(chapter: int, task: Task, max_turns: int, tools: str | None) -> list[str]:
    return [
        *(sys.executable, "-m", "tutorial", "run", "--chapter", str(chapter)),
        *("--prompt", task.prompt, "--max-turns", str(max_turns), "--mode", "bypass"),
        *(("--tools", tools) if tools else ()),
    ]


def mini_command(mini: str, task: Task, model: str, base_url: str, max_turns: int) -> list[str]:
    """mini-swe-agent's own CLI, pointed at the same server; its trajectory says how many calls."""
    return [
        *(mini, "-t", task.prompt, "-m", f"openai/{model}", "--yolo", "-l", "0"),
        *("-c", "mini.yaml", "-c", f"model.model_kwargs.api_base={base_url}"),
        *("-c", f"agent.step_limit={max_turns}", "--exit-immediately", "-o", "trajectory.json"),
    ]


def run_once(
    command: list[str],
    task: Task,
    env: Mapping[str, str],
    timeout: float,
    keep: Path | None,
    own_home: bool = False,
) -> Outcome:
    """One run in a fresh folder; with `keep`, its console output is written there.

    With `own_home`, the run also gets an empty home folder: from chapter 9 on the
    agent reads and writes memories and skills in ~/.tutorial, and one run's memory
    must not become the next run's prompt.
    """
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{task.name}-"))
    home = Path(tempfile.mkdtemp(prefix="bench-home-")) if own_home else None
    if home is not None:
        env = {**env, "HOME": str(home), "USERPROFILE": str(home)}
    try:
        for name, text in task.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command, cwd=folder, env=dict(env), capture_output=True, text=True,
                encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            log = done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:  # what it printed so far, as bytes
            log = _decoded(expired.stdout) + _decoded(expired.stderr)
        seconds = time.perf_counter() - started
        if keep is not None:
            keep.write_text(log, encoding="utf-8")
        requests = log.count("等待模型 waiting for") or mini_calls(folder / "trajectory.json")
        (folder / "trajectory.json").unlink(missing_ok=True)  # not part of the task's files
        stopped = "RepeatedCallError" in log
        return Outcome(task.check(folder), seconds, requests, ended_in_a_loop(log), stopped)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)


def _decoded(output: bytes | str | None) -> str:
    """A timed-out run's output: bytes even with text=True (subprocess does not decode it)."""
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    return output or ""


def log_path(folder: Path | None, agent: str, task: Task, run: int) -> Path | None:
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{agent.replace(' ', '')}-{task.name}-{run}.log"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the server's API root, e.g. .../v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default="local")
    parser.add_argument("--chapters", type=int, nargs="*", default=[5], help="none: only --mini")
    parser.add_argument("--runs", type=int, default=3, help="runs per task and agent")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--mini", help="the `mini` command of mini-swe-agent, to compare")
    parser.add_argument("--keep-logs", type=Path, help="a folder for each run's console output")
    parser.add_argument("--tools", help="the chapters' --tools (chapter 11 on): only these tools")
    args = parser.parse_args()
    chosen = [t for t in TASKS if not args.tasks or t.name in args.tasks.split(",")]
    env = {
        **os.environ,
        "OPENAI_BASE_URL": args.base_url,
        "OPENAI_API_KEY": args.api_key,
        "OPENAI_MODEL": args.model,
        "MSWEA_CONFIGURED": "true",  # mini-swe-agent: no first-run questions
        "MSWEA_COST_TRACKING": "ignore_errors",  # a local model has no price
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    label = " --tools" if args.tools else ""
    agents: dict[str, Callable[[Task], list[str]]] = {
        f"chapter {n}{label}": (lambda t, n=n: course_command(n, t, args.max_turns, args.tools))
        for n in args.chapters
    }
    if args.mini:
        agents["mini-swe-agent"] = lambda t: mini_command(
            args.mini, t, args.model, args.base_url, args.max_turns
        )
    day = time.strftime("%Y-%m-%d")
    print(f"model {args.model} at {args.base_url}; {args.runs} runs per task; {day}")
    if args.tools:
        print(f"tools: {args.tools}")
    columns = f"{'passed':>8}{'median s':>10}{'requests':>10}{'looped':>8}{'stopped':>9}"
    print(f"{'task':<22}{'agent':<24}{columns}")
    totals: dict[str, list[Outcome]] = {name: [] for name in agents}
    for task in chosen:
        for name, command in agents.items():
            outcomes = [
                run_once(
                    command(task),
                    task,
                    env,
                    args.timeout,
                    log_path(args.keep_logs, name, task, n),
                    own_home=name.startswith("chapter"),
                )
                for n in range(1, args.runs + 1)
            ]
            totals[name] += outcomes
            passed = sum(o.passed for o in outcomes)
            median = statistics.median(o.seconds for o in outcomes)
            requests = statistics.median(o.requests for o in outcomes)
            looped = sum(o.looped for o in outcomes)
            stopped = sum(o.stopped for o in outcomes)
            print(f"{task.name:<22}{name:<24}{passed:>5}/{len(outcomes):<2}{median:>10.0f}"
                  f"{requests:>10.0f}{looped:>8}{stopped:>9}", flush=True)  # fmt: skip
    for name, outcomes in totals.items():
        passed = sum(o.passed for o in outcomes)
        tasks_solved = sum(
            any(o.passed for o in outcomes[i * args.runs : (i + 1) * args.runs])
            for i in range(len(chosen))
        )
        print(
            f"{name}: {passed}/{len(outcomes)} runs passed ({passed / len(outcomes):.0%}), "
            f"{tasks_solved}/{len(chosen)} tasks solved at least once, "
            f"{sum(o.looped for o in outcomes)} runs used up their turns going round, "
            f"{sum(o.stopped for o in outcomes)} stopped by the repeat guard"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

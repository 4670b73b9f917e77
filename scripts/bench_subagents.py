"""Benchmark: how big the parent's history gets with and without a sub-agent.

    python scripts/bench_subagents.py

What it measures: one scripted task that takes 10 file reads ("which of these
10 modules define a function named load?"), run twice by chapter 6's agent as
its recipe builds it (real tools, real policy, real budget; only
the model is scripted, with `AgentScripts` from chapters/ch06/demo.py):

    one agent         the parent reads the 10 files itself, then answers
    parent + explore  the parent calls task; explore reads the 10 files in its own
                      history and reports; the parent answers from the report

For each, the size of the parent's history when it answers (the messages of its
last request: how many, and their characters as JSON, tool schemas not counted),
and for the whole family how many requests were sent and how many message
characters they carried in total (every request sends its agent's whole history
again). The demo's task (one grep and one read) is measured the same way.

Why: a sub-agent is worth it when the side work is big and the parent goes on
afterwards: every later request of the parent carries its history. It is not
free: the child's requests, and the parent's one extra request, cost too.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.loop import run_agent
from chapters.ch02.parts import WORKSPACE
from chapters.ch02.workspace import Workspace
from chapters.ch03.asking import ScriptedAsker
from chapters.ch03.audit import AuditLog
from chapters.ch03.parts import ASKER, AUDIT, POLICY
from chapters.ch03.policy import Policy
from chapters.ch04.hooks import Hooks
from chapters.ch04.parts import HOOKS
from chapters.ch06 import demo
from chapters.ch06.agent import RECIPE
from chapters.ch06.definitions import AgentCatalog, built_in_agents
from chapters.ch06.demo import AgentScripts
from chapters.ch06.parts import AGENTS
from chapters.ch06.prompt import EXPLORE_PROMPT, SYSTEM_PROMPT
from shared.console import Console
from shared.recipe import HOME, build_agent
from shared.scripted import Step, response, tool_call
from shared.slots import Key

MODULES = 10
PROMPT = "Which of the modules in lib/ define a function named load?"


def module_source(number: int) -> str:
    """A module of about 40 lines; the even ones define load()."""
    functions = [
        f'def {name}_{number}(value):\n    """{name.title()} one value for module {number}."""\n'
        f"    result = value\n    for step in range({number + 2}):\n"
        f"        result = result + step\n    return result\n"
        for name in ("parse", "check", "render", "store")
    ]
    if number % 2 == 0:
        functions.append(
            f'def load(path):\n    """Read module {number}\'s data file."""\n'
            "    with open(path, encoding='utf-8') as file:\n        return file.read()\n"
        )
    return f'"""Module {number} of the benchmark."""\n\n\n' + "\n\n".join(functions)


def reads() -> list[Step]:
    return [
        response(None, [tool_call(f"call_{n + 2}", "read_file", json.dumps({"path": path(n)}))])
        for n in range(MODULES)
    ]


def path(number: int) -> str:
    return f"lib/module_{number}.py"


ANSWER = "load() is defined in " + ", ".join(path(n) for n in range(0, MODULES, 2)) + "."
TASK = {
    "description": "Find the modules that define load",
    "prompt": "Read each module in lib/ (module_0.py to module_9.py) and report which define "
    "a function named load, with its line number.",
    "agent": "explore",
}


@dataclass(frozen=True)
class Size:
    messages: int  # in the parent's last request
    characters: int  # of those messages, as JSON
    requests: int  # by the whole family
    sent: int  # message characters of every request of the family


def measure(model: AgentScripts, prompt: str, files: dict[str, str]) -> Size:
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as home:
        root = Path(folder)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        workspace = Workspace(root)
        # the default policy, no hooks, the built-in agents: nothing read from disk
        services: dict[Key[Any], Any] = {
            WORKSPACE: workspace,
            HOME: Path(home),
            ASKER: ScriptedAsker([]),
            POLICY: Policy(workspace),
            AUDIT: AuditLog(root / "audit.jsonl"),
            HOOKS: Hooks(),
            AGENTS: AgentCatalog({a.name: a for a in built_in_agents()}),
        }
        agent = build_agent(
            RECIPE.setup({}, services),
            model,
            Console(out=io.StringIO(), err=io.StringIO(), fancy=False),
        )
        run_agent(prompt, agent)
    parent = [r for r in model.requests if r["messages"][0]["content"] == SYSTEM_PROMPT][-1]
    return Size(
        messages=len(parent["messages"]),
        characters=chars(parent["messages"]),
        requests=len(model.requests),
        sent=sum(chars(r["messages"]) for r in model.requests),
    )


def chars(messages: Sequence[dict[str, Any]]) -> int:
    return len(json.dumps(messages, ensure_ascii=False))


def ten_reads(delegate: bool) -> AgentScripts:
    answer = response(ANSWER)
    if not delegate:
        return AgentScripts({SYSTEM_PROMPT: [*reads(), answer]})
    parent: list[Step] = [
        response(None, [tool_call("call_1", "task", json.dumps(TASK))]),
        response(ANSWER),
    ]
    return AgentScripts({SYSTEM_PROMPT: parent, EXPLORE_PROMPT: [*reads(), answer]})


def table(title: str, alone: Size, split: Size) -> list[str]:
    rows = [
        title,
        f"  {'':<18}{'parent history':>26}{'whole family':>30}",
        f"  {'':<18}{'messages':>12}{'characters':>14}{'requests':>14}{'characters sent':>16}",
    ]
    for name, size in (("one agent", alone), ("parent + explore", split)):
        rows.append(
            f"  {name:<18}{size.messages:>12}{size.characters:>14,}"
            f"{size.requests:>14}{size.sent:>16,}"
        )
    saved = 1 - split.characters / alone.characters
    rows.append(
        f"  the parent's history is {saved:.0%} smaller ({alone.messages - split.messages} "
        f"messages and {alone.characters - split.characters:,} characters fewer)"
    )
    return rows


def main() -> int:
    files = {path(n): module_source(n) for n in range(MODULES)}
    lines = table(
        f"10 file reads ({sum(map(len, files.values())):,} characters of source):",
        measure(ten_reads(False), PROMPT, files),
        measure(ten_reads(True), PROMPT, files),
    )
    lines.append("")
    lines += table(
        "the demo (one grep, one read):",
        measure(demo.demo_model(delegate=False), demo.DEMO_PROMPT, demo.DEMO_FILES),
        measure(demo.demo_model(), demo.DEMO_PROMPT, demo.DEMO_FILES),
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

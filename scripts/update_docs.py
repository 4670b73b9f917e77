"""Regenerate the generated blocks of the chapter texts: real trace JSON, console output, code.

    python scripts/update_docs.py           # rewrite the blocks in docs/
    python scripts/update_docs.py --check   # exit 1 if a text is out of date

A chapter text marks each generated block with a comment, followed by a code block:

    <!-- trace: request 1 -->                    a JSON document traced by the chapter's demo
    <!-- trace: request 3 | messages[-3:] -->    ... or a slice of one of its lists
    <!-- console -->                             what the demo printed (plain, no colour)
    <!-- source: chapters/ch01/loop.py run_agent -->            a function, verbatim
    <!-- source: chapters/ch02/workspace.py Workspace.resolve -->  or a method

For traces and console output, the script runs the text's chapter demo (the
scripted model, the real tools, every approval answered "y"), so what a reader
sees in the text is what the code sends, receives and prints, never typed by
hand; tests/test_docs.py runs `--check`. The demo command differs on Windows,
so run this on Linux or macOS.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chapters.ch01 import demo as ch01_demo  # noqa: E402
from chapters.ch01.loop import run_agent  # noqa: E402
from chapters.ch01.shell_tool import make_shell_tool  # noqa: E402
from chapters.ch02 import demo as ch02_demo  # noqa: E402
from chapters.ch02.prompt import SYSTEM_PROMPT as CH02_PROMPT  # noqa: E402
from chapters.ch02.toolset import make_tools as ch02_tools  # noqa: E402
from chapters.ch02.workspace import Workspace  # noqa: E402
from shared.approval import Approver, ScriptedApprover, TerminalApprover  # noqa: E402
from shared.console import Console  # noqa: E402
from shared.tools import ToolRegistry  # noqa: E402

# A marker, the opening fence, the body (possibly empty), the closing fence on its own line.
BLOCK = re.compile(
    r"(<!-- (?P<kind>trace|source|console)(?:: (?P<title>[^>]+?))? -->\n```\w*\n)"
    r"(?P<body>(?:.*?\n)??)(?P<close>```)$",
    re.S | re.M,
)


Demo = Callable[[Console, Approver], None]


def run_ch01(console: Console, approver: Approver) -> None:
    run_agent(
        ch01_demo.DEMO_PROMPT,
        model=ch01_demo.demo_model(),
        tools=ToolRegistry([make_shell_tool(ROOT)]),
        approver=approver,
        console=console,
    )


def run_ch02(console: Console, approver: Approver) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / ch02_demo.DEMO_FILE).write_text(ch02_demo.DEMO_SOURCE, encoding="utf-8")
        run_agent(
            ch02_demo.DEMO_PROMPT,
            model=ch02_demo.demo_model(),
            tools=ch02_tools(Workspace(Path(folder))),
            approver=approver,
            console=console,
            system_prompt=CH02_PROMPT,
        )


DOCS: dict[Path, Demo] = {
    ROOT / "docs" / "ch01-agent-loop.md": run_ch01,
    ROOT / "docs" / "ch02-file-tools.md": run_ch02,
}


def demo_output(run: Demo) -> tuple[dict[str, Any], str]:
    """The demo's traced JSON documents by title, and what it prints without tracing."""
    traced = io.StringIO()
    run(
        Console(out=io.StringIO(), err=traced, fancy=False, trace=True),
        ScriptedApprover.always(True),
    )
    text, documents = traced.getvalue(), {}
    for match in re.finditer(r"^--- (?P<title>.+?) ---\n", text, re.M):
        documents[match["title"]], _ = json.JSONDecoder().raw_decode(text, match.end())
    printed = io.StringIO()
    console = Console(out=printed, err=printed, fancy=False)
    run(console, TerminalApprover(console, stdin=io.StringIO("y\n" * 9), interactive=True))
    return documents, printed.getvalue().rstrip("\n")


def trace_block(reference: str, documents: dict[str, Any]) -> str:
    title, _, selector = (part.strip() for part in reference.partition("|"))
    if title not in documents:
        raise SystemExit(f"no trace named {title!r}; the demo printed: {sorted(documents)}")
    document = documents[title]
    if selector:
        key, start, stop = re.fullmatch(r"(\w+)\[(-?\d*):(-?\d*)\]", selector).groups()  # type: ignore[union-attr]
        document = document[key][int(start) if start else None : int(stop) if stop else None]
    return json.dumps(document, ensure_ascii=False, indent=2)


def source_block(reference: str) -> str:
    """`path name` or `path Class.method` -> the source text of that definition."""
    path, name = reference.split()
    source = (ROOT / path).read_text(encoding="utf-8")
    nodes: list[ast.stmt] = ast.parse(source).body
    *owners, wanted = name.split(".")
    for owner in owners:
        nodes = next(n.body for n in nodes if isinstance(n, ast.ClassDef) and n.name == owner)
    for node in nodes:
        if isinstance(node, ast.FunctionDef) and node.name == wanted:
            lines = source.splitlines()[node.lineno - 1 : node.end_lineno]
            indent = len(lines[0]) - len(lines[0].lstrip())
            return "\n".join(line[indent:] for line in lines)
    raise SystemExit(f"no function {name} in {path}")


def console_block(printed: str) -> str:
    # The first line names the temporary folder or this checkout: a machine path.
    # The human's "y" went in through stdin, so it is not in the output; show it.
    lines = (line for line in printed.splitlines() if " · folder: " not in line)
    return "\n".join(lines).replace("[y/N] ", "[y/N] y\n")


def render(text: str, run: Demo) -> str:
    cache: list[tuple[dict[str, Any], str]] = []

    def demo() -> tuple[dict[str, Any], str]:
        if not cache:
            cache.append(demo_output(run))
        return cache[0]

    def replace(match: re.Match[str]) -> str:
        kind, title = match["kind"], match["title"] or ""
        if kind == "source":
            body = source_block(title)
        elif kind == "trace":
            body = trace_block(title, demo()[0])
        else:
            body = console_block(demo()[1])
        return f"{match[1]}{body}\n{match['close']}"

    return BLOCK.sub(replace, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report texts out of date")
    check = parser.parse_args().check
    stale = []
    for path, run in DOCS.items():
        text = path.read_text(encoding="utf-8")
        updated = render(text, run)
        if updated == text:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if not check:
            path.write_text(updated, encoding="utf-8")
    if check and stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/update_docs.py")
        return 1
    print(("updated: " + ", ".join(stale)) if stale else "the generated blocks are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())

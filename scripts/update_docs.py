"""Regenerate the generated blocks of the chapter texts: real trace JSON and real code.

    python scripts/update_docs.py           # rewrite the blocks in docs/
    python scripts/update_docs.py --check   # exit 1 if a text is out of date

A chapter text marks each generated block with a comment, followed by a code block:

    <!-- trace: request 1 -->            the JSON of that trace title from a demo run
    <!-- source: chapters/ch01/loop.py run_agent -->   that function's source, verbatim

For traces, the script runs chapter 1's demo (the scripted model, the real shell
tool, approval answered "y") with tracing on, cuts the output at the trace
titles and puts each JSON document under its marker. So what a reader sees in
the text is what the code sends, receives and says, never typed by hand;
tests/test_docs.py runs `--check`. The demo command differs on Windows, so run
this on Linux or macOS.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chapters.ch01.demo import DEMO_PROMPT, demo_model  # noqa: E402
from chapters.ch01.loop import run_agent  # noqa: E402
from chapters.ch01.shell_tool import make_shell_tool  # noqa: E402
from shared.approval import ScriptedApprover  # noqa: E402
from shared.console import Console  # noqa: E402
from shared.tools import ToolRegistry  # noqa: E402

DOCS = {ROOT / "docs" / "ch01-agent-loop.md": "ch01"}
# A marker, the opening fence, the body (possibly empty), the closing fence on its own line.
BLOCK = re.compile(
    r"(<!-- (?P<kind>trace|source): (?P<title>[^>]+?) -->\n```\w*\n)(?P<body>(?:.*?\n)??)(```)$",
    re.S | re.M,
)


def demo_traces() -> dict[str, str]:
    """Run chapter 1's demo with --trace semantics; return each traced JSON by title."""
    err = io.StringIO()
    console = Console(out=io.StringIO(), err=err, fancy=False, trace=True)
    run_agent(
        DEMO_PROMPT,
        model=demo_model(),
        tools=ToolRegistry([make_shell_tool(ROOT)]),
        approver=ScriptedApprover.always(True),
        console=console,
    )
    traces: dict[str, str] = {}
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^--- (?P<title>.+?) ---\n", err.getvalue(), re.M):
        document, _ = decoder.raw_decode(err.getvalue(), match.end())
        traces[match["title"]] = json.dumps(document, ensure_ascii=False, indent=2)
    return traces


def function_source(reference: str) -> str:
    """`chapters/ch01/loop.py run_agent` -> the text of that top-level function."""
    path, name = reference.split()
    source = (ROOT / path).read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return "\n".join(source.splitlines()[node.lineno - 1 : node.end_lineno])
    raise SystemExit(f"no function {name} in {path}")


def render(text: str, traces: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        title = match["title"]
        if match["kind"] == "source":
            return match[1] + function_source(title) + "\n" + match[5]
        if title not in traces:
            raise SystemExit(f"no trace named {title!r}; the run printed: {sorted(traces)}")
        return match[1] + traces[title] + "\n" + match[5]

    return BLOCK.sub(replace, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report texts out of date")
    check = parser.parse_args().check
    traces = demo_traces()
    stale = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        updated = render(text, traces)
        if updated == text:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if not check:
            path.write_text(updated, encoding="utf-8")
    if check and stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/update_docs.py")
        return 1
    print(("updated: " + ", ".join(stale)) if stale else "the traces in the texts are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())

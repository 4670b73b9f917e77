"""Regenerate the generated blocks of the chapter texts: real trace JSON, console output, code.

    python scripts/update_docs.py           # rewrite the blocks in docs/
    python scripts/update_docs.py --check   # exit 1 if a text is out of date

A chapter text marks each generated block with a comment, followed by a code block:

    <!-- trace: request 1 -->                    a JSON document traced by the chapter's demo
    <!-- trace: request 3 | messages[-3:] -->    ... or a slice of one of its lists
    <!-- chunks: response 1 -->                  the chunks --trace printed before it (a stream)
    <!-- chunks: response 1 | 3:6 -->            ... or some of them
    <!-- console -->                             what the demo printed (plain, no colour)
    <!-- console: 20:31 -->                      ... or some of its lines (an excerpt)
    <!-- audit -->                               the audit log the demo wrote (times masked)
    <!-- log: killed | 2:6 -->                   lines of a log the demo wrote, by its name
    <!-- command: tasks -->                      what `python -m tutorial tasks --chapter N`
                                                 printed in the demo's folder after the demo
                                                 (any subcommand the chapter's parts bring;
                                                 `jobs`' runtimes read <time>)
    <!-- source: chapters/ch01/loop.py run_agent -->            a function, verbatim
    <!-- source: chapters/ch02/workspace.py Workspace.resolve -->  or a method
    <!-- source: chapters/ch05/agent.py RECIPE -->              or a module's assignment
    <!-- loop: before_request may_stop -->       the one loop, the seams a chapter uses marked
    <!-- recipe -->                              the chapter's recipe, resolved (`tutorial recipe`)
    <!-- recipe: diff -->                        what the chapter changes in the recipe it extends
                                                 (the end of `tutorial diff`)
    <!-- prompt: sections -->                    chapter 10's prompt in its demo's folder: each
                                                 section's size, measured as `tutorial prompt` does
    <!-- prompt: skills -->                      ... and what each of its skills costs, when

For traces and console output, the script runs the text's chapter demo from its
recipe, as `python -m tutorial run --chapter N --demo` does (shared/recipe.py
run_command): the scripted model, the real tools, every approval answered "y".
So what a reader sees in the text is what the code sends, receives and prints,
never typed by hand; tests/test_docs.py runs `--check`. What differs from run to
run is fixed or masked: the home folder is an empty one, chapter 10's
environment and chapter 11's clock are fixed, chapter 8's run id reads
`<run-id>` and sessions read `<session-id>` (`<session-1>`, ... when a demo
makes several). The demo command differs on Windows, so run this on Linux or
macOS. A demo whose runs each number their requests from 1 has its traces named
by occurrence too: `request 1 #2` is the second.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chapters.ch01.parts import APPROVER  # noqa: E402
from chapters.ch02.parts import WORKSPACE  # noqa: E402
from chapters.ch02.workspace import Workspace  # noqa: E402
from chapters.ch03.asking import ScriptedAsker, TerminalAsker  # noqa: E402
from chapters.ch03.parts import ASKER, AUDIT  # noqa: E402
from chapters.ch07.scripted_stream import AgentStreams, text_stream  # noqa: E402
from chapters.ch08.parts import RUN_ID  # noqa: E402
from chapters.ch09.session_log import SESSIONS_FOLDER  # noqa: E402
from chapters.ch09.tests import killed_run  # noqa: E402
from chapters.ch10.environment import Environment  # noqa: E402
from chapters.ch10.parts import ENVIRONMENT, SKILLS, assembled  # noqa: E402
from chapters.ch10.sections import SystemPrompt  # noqa: E402
from chapters.ch10.show_prompt import size as section_size  # noqa: E402
from chapters.ch10.skill_tool import describe as load_skill_result  # noqa: E402
from chapters.ch10.skills import SKILL_FILE  # noqa: E402
from chapters.ch10.tokens import estimate_tokens  # noqa: E402
from chapters.ch11.demo import DemoClock  # noqa: E402
from chapters.ch11.parts import CLOCK  # noqa: E402
from shared.approval import ApprovalRequest, TerminalApprover  # noqa: E402
from shared.completion import ModelClient  # noqa: E402
from shared.console import Console  # noqa: E402
from shared.parts import Setup  # noqa: E402
from shared.recipe import CONSOLE, HOME, RUN, Recipe, Runner, listed_tools  # noqa: E402
from shared.scripted import scripted_text  # noqa: E402
from shared.slots import Key  # noqa: E402
from tutorial.catalog import find_chapter  # noqa: E402
from tutorial.diff import recipe_diff  # noqa: E402
from tutorial.recipe_listing import listing  # noqa: E402

# A marker, an optional caption line, the opening fence, the body (possibly empty), the
# closing fence on its own line. The caption is generated too. The fence is three backticks,
# or more when the body holds three (console output that shows a Markdown file, say).
BLOCK = re.compile(
    r"(?P<marker><!-- (?P<kind>trace|chunks|source|console|audit|loop|log|prompt|recipe|command)"
    r"(?:: (?P<title>[^>]+?))? -->\n)"
    r"(?:(?!```)[^\n]*\n)?(?P<ticks>```+)(?P<lang>\w*)\n(?P<body>(?:.*?\n)??)(?P=ticks)$",
    re.S | re.M,
)


@dataclass(frozen=True)
class DemoFile:
    """A file a demo wrote, for `<!-- log: NAME -->`: its caption in the text, and its text."""

    caption: str
    text: str


# --- a chapter's demo, run from its recipe ---------------------------------------------------

YES = "y\n" * 9
# Chapter 10's prompt ends with the environment: this machine, the folder and the day. The
# text shows a fixed one, so that it reads the same on every machine on every day.
FIXED_ENVIRONMENT = Environment(
    "Linux", "bash", Path("<folder>"), "not a git repository", date(2026, 5, 1)
)
RUN_ID_SHOWN = "<run-id>"  # chapter 8's transcript: a real id is a time and a random
SESSION_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")  # chapters/ch08/transcript.py new_run_id


class ScriptedYes:
    """Chapter 1's approver when nobody is at the terminal: every call approved."""

    def approve(self, request: ApprovalRequest) -> bool:
        return True


def people(console: Console, human: bool) -> dict[Key[Any], Any]:
    """Who answers chapter 1's approvals and chapter 3's questions: a human typing "y" at a
    (simulated) terminal, on the console the run is shown on, or a scripted yes."""
    if human:
        return {
            APPROVER: TerminalApprover(console, stdin=io.StringIO(YES), interactive=True),
            ASKER: TerminalAsker(console, stdin=io.StringIO(YES), interactive=True),
        }
    return {APPROVER: ScriptedYes(), ASKER: ScriptedAsker(["y"] * 9)}


def run_recipe(
    recipe: Recipe,
    args: Sequence[str],
    services: Mapping[Key[Any], Any],
    *,
    human: bool,
    model: ModelClient | None = None,
) -> tuple[Setup, str]:
    """`python -m chapters.chNN ARGS` as run_command (shared/recipe.py) runs it, `services`
    given: the options parsed by the chapter's command, every service made before the run,
    the run shown on the console the recipe makes (its CONSOLE service, else chapter 1's).
    What the run prints on stderr is returned. The lines the command prints around it (the
    chapter and folder, the banner, the answer on stdout) are not printed, and what the run
    writes to stdout itself (chapter 9's demo answers its first runs there) is dropped.
    `model`: instead of the demo's scripted one. The task is --prompt, else the demo's."""
    command = recipe.command()
    options = dict(command.make_context(command.name or "", list(args)).params)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        shown_on = recipe.setup(options, services).find(CONSOLE, None)
        console = shown_on(options["trace"]) if shown_on else Console(trace=options["trace"])
        setup = recipe.setup(options, {**services, **people(console, human)})
        setup.make_all()
        task = options["prompt"] if options["prompt"] and not setup.demo else recipe.demo.prompt
        if setup.demo and recipe.demo.script:  # a demo of runs: the command shows the first
            console.info(f"user: {task}")
        setup.get(RUN)(task, Runner(setup, model or recipe.demo.model(setup), console))
    return setup, err.getvalue()


@contextlib.contextmanager
def demo_folder(recipe: Recipe) -> Iterator[Path | None]:
    """The folder the demo makes for its file tools (None: it works in the current one),
    removed afterwards, as --demo removes it."""
    if recipe.demo.workspace is None:
        yield None
        return
    folder = recipe.demo.workspace()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_demo(
    chapter: int, traced: bool, commands: Sequence[str] = ()
) -> tuple[str, dict[str, DemoFile]]:
    """Chapter `chapter`'s `--demo` (with `--trace`: every approval a scripted yes; without:
    a human answering "y" at the terminal), in an empty home: what it printed on stderr,
    and the files it wrote ("audit", if it keeps one; a chapter's demo may add others).
    `commands`: subcommands of the chapter (`tasks`) run in the demo's folder once the demo
    is over, before the folder is removed; what each printed is the file `command: WORDS`."""
    recipe = find_chapter(chapter).recipe()
    args = ["--demo", "--trace"] if traced else ["--demo"]
    with tempfile.TemporaryDirectory() as home, demo_folder(recipe) as folder:
        services: dict[Key[Any], Any] = {
            HOME: Path(home),
            ENVIRONMENT: FIXED_ENVIRONMENT,
            CLOCK: DemoClock(watched=False),  # a wait is not slept; its lines are the same
            RUN_ID: RUN_ID_SHOWN,
        }
        if folder is not None:
            services[WORKSPACE] = Workspace(folder)
        setup, printed = run_recipe(recipe, args, services, human=not traced)
        files: dict[str, DemoFile] = {}
        if setup.has(AUDIT):
            audit = setup.get(AUDIT)
            audit.close()
            files["audit"] = DemoFile("", audit.path.read_text(encoding="utf-8"))
        for words in commands:
            files[f"command: {words}"] = DemoFile("", subcommand_output(recipe, words, folder))
    return printed, files


COMMAND_COLUMNS = "100"  # rich draws to this width when not on a terminal: the same everywhere


def subcommand_output(recipe: Recipe, words: str, folder: Path | None) -> str:
    """What `python -m tutorial WORDS --chapter N --workspace FOLDER` prints (stdout, then
    stderr), the folder written `<folder>`, as the chapter's part makes the command."""
    command = recipe.subcommands().get(words)
    if command is None:
        raise SystemExit(f"chapter {recipe.chapter} has no command {words!r}")
    args = ["--workspace", str(folder)] if folder is not None else []
    out, err = io.StringIO(), io.StringIO()
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COMMAND_COLUMNS
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            command.main(args, prog_name=f"tutorial {words}", standalone_mode=False)
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    text = out.getvalue() + err.getvalue()
    if folder is not None:
        for spelled in {str(folder), str(folder.resolve())}:
            text = text.replace(spelled, "<folder>")
    if words == "jobs":  # chapter 13: how long a job ran differs from run to run
        text = RUNTIME.sub(lambda m: "<time>".ljust(len(m[0])), text)
    return text.rstrip("\n")


# A runtime in `jobs`' table (chapters/ch13/listing.py runtime) and the spaces after it.
RUNTIME = re.compile(r"(?<=  )(?:\d+\.\ds|\d+m\d\ds|\d+h\d\dm) *(?=  )")


def masked_sessions(texts: Mapping[str, str]) -> dict[str, str]:
    """Each session id replaced, in order of first appearance: `<session-id>` if the texts
    hold one, else `<session-1>`, `<session-2>`, ... (a real one is a time and a random)."""
    found = list(dict.fromkeys(SESSION_ID.findall("".join(texts.values()))))
    names = (
        {found[0]: "<session-id>"}
        if len(found) == 1
        else {s: f"<session-{n}>" for n, s in enumerate(found, 1)}
    )
    return {name: SESSION_ID.sub(lambda m: names[m.group(0)], text) for name, text in texts.items()}


KILL_DEADLINE = 30.0  # seconds: far more than a healthy start takes


def killed_and_resumed() -> DemoFile:
    """A real run killed with SIGKILL in the middle of a tool call (the one chapter 9's test
    kills, chapters/ch09/tests/killed_run.py), then resumed by chapter 9's command,
    `--resume --prompt "Did it build?"`, with a scripted model: its log."""
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as home:
        root = Path(folder)
        process = subprocess.Popen(
            [sys.executable, "-m", "chapters.ch09.tests.killed_run", folder],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            end = time.monotonic() + KILL_DEADLINE
            while not (root / killed_run.WAITING).exists():  # the blocking call has started
                if process.poll() is not None or time.monotonic() > end:
                    raise SystemExit("the run to kill ended, or never reached its blocking call")
                time.sleep(0.01)  # a poll interval
        finally:
            process.kill()
            process.wait()
        said = scripted_text("wait may not have run: I look before I retry.")
        model = AgentStreams({killed_run.PROMPT: [text_stream(said)]}, name="scripted-model")
        args = ["--resume", "--prompt", "Did it build?", "--workspace", folder]
        run_recipe(find_chapter(9).recipe(), args, {HOME: Path(home)}, human=False, model=model)
        (log,) = (root / SESSIONS_FOLDER).glob("*.jsonl")
        text = masked_sessions({"log": log.read_text(encoding="utf-8")})["log"]
    caption = (
        "一次真实的运行在工具调用中途被 SIGKILL 杀掉（[chapters/ch09/tests/killed_run.py]"
        "(../chapters/ch09/tests/killed_run.py)），再由第 9 章的智能体 `--resume`："
        f"`{SESSIONS_FOLDER.as_posix()}/<session-id>.jsonl`（时间换成了 `<time>`，长字符串截短）"
    )
    return DemoFile(caption, text)


# --- chapter 10's prompt, as `tutorial prompt` measures it --------------------------------


def prompt_block(title: str) -> str:
    """`sections`: each section of the demo's prompt, its size and its source, as `tutorial
    prompt` measures them; `skills`: what each skill costs at each step of the disclosure."""
    recipe = find_chapter(10).recipe()
    with tempfile.TemporaryDirectory() as home, demo_folder(recipe) as folder:
        assert folder is not None
        setup = recipe.setup(
            {"workspace": folder}, {HOME: Path(home), ENVIRONMENT: FIXED_ENVIRONMENT}
        )
        if title == "sections":  # the prompt a run sends, as chapter 10's `prompt` makes it
            return sections_table(assembled(setup, listed_tools(setup, filtered=True).names))
        if title == "skills":
            return skills_table(setup)
    raise SystemExit(f"no prompt block named {title!r}: sections or skills")


def sections_table(prompt: SystemPrompt) -> str:
    rows = [("section", "size", "source")]
    rows += [(s.name, section_size(s), s.source) for s in prompt.sections]
    width = [max(len(row[n]) for row in rows) for n in (0, 1)]
    lines = [f"{a:<{width[0]}}  {b:<{width[1]}}  {c}".rstrip() for a, b, c in rows]
    sent = sum(1 for s in prompt.sections if s.text)
    total = f"{len(prompt.text):,} characters, ~{estimate_tokens(prompt.text):,} tokens"
    count = len(prompt.sections)
    return "\n".join([*lines, f"total: {sent} of {count} sections sent, {total}"])


def skills_table(setup: Setup) -> str:
    """Per skill: its line in the index (every request), load_skill's result (when loaded),
    and each other file (when read)."""
    workspace = setup.get(WORKSPACE)
    rows = [("skill", "index line", "load_skill", "other files")]
    for skill in setup.get(SKILLS).skills.values():
        line = estimate_tokens(f"- {skill.name}: {skill.description}")
        loaded = estimate_tokens(load_skill_result(skill, workspace))
        others = sorted(p for p in skill.folder.rglob("*") if p.is_file() and p.name != SKILL_FILE)
        files = ", ".join(
            f"{p.name} ~{estimate_tokens(p.read_text(encoding='utf-8')):,}" for p in others
        )
        rows.append((skill.name, f"~{line:,}", f"~{loaded:,}", files or "none"))
    width = [max(len(row[n]) for row in rows) for n in range(3)]
    return "\n".join(
        f"{a:<{width[0]}}  {b:<{width[1]}}  {c:<{width[2]}}  {d}".rstrip() for a, b, c, d in rows
    )


# --- the recipe ------------------------------------------------------------------------------


def recipe_block(title: str, chapter: int) -> str:
    """The chapter's recipe as `tutorial recipe` lists it, or (`diff`) the part of
    `tutorial diff` that shows what the chapter changes in the recipe it extends."""
    if title == "diff":
        return recipe_diff(find_chapter(chapter)).rstrip("\n")
    if not title:
        return listing(find_chapter(chapter).recipe()).rstrip("\n")
    raise SystemExit(f"no recipe block named {title!r}: <!-- recipe --> or <!-- recipe: diff -->")


TEXTS = sorted((ROOT / "docs").glob("ch[0-9][0-9]-*.md"))


@dataclass(frozen=True)
class DemoOutput:
    documents: dict[str, Any]  # traced JSON by title: "request 1", "response 1", ...
    traced: str  # everything the traced run printed
    printed: str  # what the demo printed, a human answering at the terminal
    audit: str  # the audit log of the traced run, if the chapter writes one
    files: dict[str, DemoFile]  # the files the traced run wrote, by name, if it says


def demo_output(chapter: int, commands: Sequence[str] = ()) -> DemoOutput:
    traced, files = run_demo(chapter, traced=True)
    printed, after = run_demo(chapter, traced=False, commands=commands)
    files.update({name: after[name] for name in after if name.startswith("command: ")})
    if chapter == 9:  # its text shows what a killed run leaves, and how it is resumed
        files["killed"] = killed_and_resumed()
    texts = masked_sessions({"traced": traced, **{n: f.text for n, f in files.items()}})
    text = texts.pop("traced")
    printed = masked_sessions({"printed": printed})["printed"]
    files = {name: DemoFile(files[name].caption, texts[name]) for name in files}
    documents: dict[str, Any] = {}
    seen: dict[str, int] = {}  # how often each title was printed so far
    for match in re.finditer(r"^--- (?P<title>.+?) ---\n", text, re.M):
        title = match["title"]
        seen[title] = seen.get(title, 0) + 1
        document, _ = json.JSONDecoder().raw_decode(text, match.end())
        documents[title] = documents[f"{title} #{seen[title]}"] = document  # the last, and each
    audit = files["audit"].text if "audit" in files else ""
    return DemoOutput(documents, text, printed.rstrip("\n"), audit, files)


def audit_block(audit: str) -> str:
    """The audit lines, with each time replaced by a marked placeholder (times differ per run)."""
    lines = []
    for line in audit.splitlines():
        record = json.loads(line)
        record["time"] = "<time>"
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines)


LOG_STRING_CHARS = 60  # a longer string in a log line is cut here, and says how long it was


def log_block(reference: str, files: dict[str, DemoFile]) -> tuple[str, str]:
    """Lines `a:b` of the JSON-lines file the demo named: each line's `started` masked and its
    long strings cut, so that a line of the log fits a line of the text. Body and caption."""
    name, _, selector = (part.strip() for part in reference.partition("|"))
    if name not in files:
        raise SystemExit(f"no file named {name!r}; the demo wrote: {sorted(files)}")
    lines = files[name].text.splitlines()
    if selector:
        first, last = re.fullmatch(r"(-?\d*):(-?\d*)", selector).groups()  # type: ignore[union-attr]
        lines = lines[int(first) if first else None : int(last) if last else None]
    shown = (json.dumps(_shortened(json.loads(line)), ensure_ascii=False) for line in lines)
    return "\n".join(shown), files[name].caption


def _shortened(value: Any, key: str = "") -> Any:
    if key == "started":
        return "<time>"
    if isinstance(value, dict):
        return {k: _shortened(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shortened(v) for v in value]
    if isinstance(value, str) and len(value) > LOG_STRING_CHARS:
        return f"{value[:LOG_STRING_CHARS]}…({len(value):,} characters)"
    return value


def trace_block(reference: str, documents: dict[str, Any]) -> str:
    title, _, selector = (part.strip() for part in reference.partition("|"))
    if title not in documents:
        raise SystemExit(f"no trace named {title!r}; the demo printed: {sorted(documents)}")
    document = documents[title]
    if selector:
        key, start, stop = re.fullmatch(r"(\w+)\[(-?\d*):(-?\d*)\]", selector).groups()  # type: ignore[union-attr]
        document = document[key][int(start) if start else None : int(stop) if stop else None]
    return json.dumps(document, ensure_ascii=False, indent=2)


def chunks_block(reference: str, traced: str) -> str:
    """The `chunk N: {...}` lines --trace printed between a document and the one before it."""
    title, _, selector = (part.strip() for part in reference.partition("|"))
    end = traced.find(f"--- {title} ---\n")
    if end < 0:
        raise SystemExit(f"no trace named {title!r}")
    start = max(traced.rfind("\n--- ", 0, end), 0)
    lines = [line for line in traced[start:end].splitlines() if line.startswith("chunk ")]
    if not lines:
        raise SystemExit(f"no chunks were printed before {title!r}")
    if selector:
        first, last = re.fullmatch(r"(-?\d*):(-?\d*)", selector).groups()  # type: ignore[union-attr]
        lines = lines[int(first) if first else None : int(last) if last else None]
    return "\n".join(lines)


def source_block(reference: str) -> str:
    """`path name`, `path Class` or `path Class.method` -> the source text of that definition."""
    return definition(reference)[1]


def source_caption(reference: str, note: str = "") -> str:
    """A visible caption naming the file and the definition, linked to its first line."""
    path, name = reference.split()
    line = definition(reference)[0]
    return f"[`{path}` · `{name}`{note}](../{path}#L{line})"


def definition(reference: str) -> tuple[int, str]:
    """The first line number and the source text of `path name` (a function, class, method)."""
    path, name = reference.split()
    source = (ROOT / path).read_text(encoding="utf-8")
    nodes: list[ast.stmt] = ast.parse(source).body
    *owners, wanted = name.split(".")
    for owner in owners:
        nodes = next(n.body for n in nodes if isinstance(n, ast.ClassDef) and n.name == owner)
    for node in nodes:
        if _defines(node, wanted):
            decorators = getattr(node, "decorator_list", [])
            first = min([node.lineno, *(d.lineno for d in decorators)])
            lines = source.splitlines()[first - 1 : node.end_lineno]
            indent = len(lines[0]) - len(lines[0].lstrip())
            return first, "\n".join(line[indent:] for line in lines)
    raise SystemExit(f"no function, class or assignment {name} in {path}")


def _defines(node: ast.stmt, name: str) -> bool:
    """Whether `node` defines `name`: a function, a class, or an assignment (`RECIPE = ...`)."""
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return False


LOOP = "chapters/ch01/loop.py run_agent"
SEAM_MARK = "  # ◀ 本章在这里接入"


def loop_block(seams: str) -> str:
    """The one loop, with each line that calls one of `seams` (`run.<seam>(`) marked."""
    wanted = seams.split()
    lines = source_block(LOOP).splitlines()
    marked = [
        line + SEAM_MARK if any(f"run.{seam}(" in line for seam in wanted) else line
        for line in lines
    ]
    missing = [seam for seam in wanted if not any(f"run.{seam}(" in line for line in lines)]
    if missing:
        raise SystemExit(f"the loop has no seam {', '.join(missing)}")
    return "\n".join(marked)


def console_block(printed: str) -> str:
    # The first line names the temporary folder or this checkout: a machine path.
    # The human's "y" went in through stdin, so it is not in the output; show it.
    lines = (line for line in printed.splitlines() if " · folder: " not in line)
    return re.sub(r"(\[y(?:/a)?/N\]) ", r"\1 y\n", "\n".join(lines))


def render(text: str, chapter: int) -> str:
    cache: list[DemoOutput] = []
    command = f"python -m tutorial run --chapter {chapter} --demo"
    demo_file = f"chapters/ch{chapter:02d}/demo.py"
    captions = {
        "trace": f"由 `{command} --trace` 生成（脚本模型：[{demo_file}](../{demo_file})）",
        "console": f"由 `{command}` 生成，回答 `y` 的人在终端前（[{demo_file}](../{demo_file})）",
        "audit": f"`{command}` 写下的 `.tutorial/audit.jsonl`（时间换成了 `<time>`）",
        "prompt: sections": (
            f"在 `{command}` 的工作区里，按 `python -m tutorial prompt --chapter {chapter}` 的"
            f"量法生成（[{demo_file}](../{demo_file})；环境一节固定为 Linux、`<folder>`、"
            "2026-05-01；token 是估算）"
        ),
        "prompt: skills": (
            f"在 `{command}` 的工作区里生成，token 按 `tutorial prompt` 的方法估算"
            "（[chapters/ch10/tokens.py](../chapters/ch10/tokens.py)）：索引里的一行、"
            "`load_skill` 的结果、其他文件的内容"
        ),
        "recipe": f"由 `python -m tutorial recipe --chapter {chapter}` 生成",
        "command": (
            f"由 `python -m tutorial {{words}} --chapter {chapter}` 在 `{command}` 的文件夹里、"
            "演示结束之后生成（文件夹写成 `<folder>`）"
        ),
        "recipe: diff": (
            f"由 `python -m tutorial diff --chapter {chapter}` 生成：代码的 diff 之后，"
            f"是第 {chapter} 章的配方相对第 {chapter - 1} 章的变化"
        ),
    }

    def demo() -> DemoOutput:
        if not cache:
            wanted = re.findall(r"<!-- command: ([^>]+?) -->", text)
            cache.append(demo_output(chapter, list(dict.fromkeys(wanted))))
        return cache[0]

    def replace(match: re.Match[str]) -> str:
        kind, title = match["kind"], match["title"] or ""
        if kind == "source":
            body, caption = source_block(title), source_caption(title)
        elif kind == "loop":
            body, caption = loop_block(title), source_caption(LOOP, "，◀ 标出本章接入的行")
        elif kind == "trace":
            body, caption = trace_block(title, demo().documents), captions[kind]
        elif kind == "chunks":
            body, caption = chunks_block(title, demo().traced), captions["trace"]
        elif kind == "audit":
            body, caption = audit_block(demo().audit), captions[kind]
        elif kind == "log":
            body, caption = log_block(title, demo().files)
        elif kind == "prompt":
            body, caption = prompt_block(title), captions[f"prompt: {title}"]
        elif kind == "recipe":
            body, caption = recipe_block(title, chapter), captions[f"recipe: {title}".rstrip(": ")]
        elif kind == "command":
            body = demo().files[f"command: {title}"].text
            caption = captions[kind].format(words=title)
        else:
            body, caption = console_block(demo().printed), captions[kind]
            if title:  # an excerpt: lines `a:b` of what the demo printed
                first, last = (int(n) if n else None for n in title.split(":"))
                body, caption = "\n".join(body.splitlines()[first:last]), f"{caption}，节选"
        ticks = "`" * max([3, *(len(run) + 1 for run in re.findall(r"^`{3,}", body, re.M))])
        return f"{match['marker']}{caption}\n{ticks}{match['lang']}\n{body}\n{ticks}"

    return BLOCK.sub(replace, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report texts out of date")
    check = parser.parse_args().check
    stale = []
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        updated = render(text, int(path.name[2:4]))
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

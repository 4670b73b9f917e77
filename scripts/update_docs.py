"""Regenerate the generated blocks of the chapter texts: real trace JSON, console output, code.

    python scripts/update_docs.py           # rewrite the blocks in docs/
    python scripts/update_docs.py --check   # exit 1 if a text is out of date

A chapter text marks each generated block with a comment, followed by a code block:

    <!-- trace: request 1 -->                    a JSON document traced by the chapter's demo
    <!-- trace: request 3 | messages[-3:] -->    ... or a slice of one of its lists
    <!-- chunks: response 1 -->                  the chunks --trace printed before it (a stream)
    <!-- chunks: response 1 | 3:6 -->            ... or some of them
    <!-- console -->                             what the demo printed (plain, no colour)
    <!-- audit -->                               the audit log the demo wrote (times masked)
    <!-- log: killed | 2:6 -->                   lines of a log the demo wrote, by its name
    <!-- source: chapters/ch01/loop.py run_agent -->            a function, verbatim
    <!-- source: chapters/ch02/workspace.py Workspace.resolve -->  or a method
    <!-- loop: before_request may_stop -->       the one loop, the seams a chapter uses marked
    <!-- prompt: sections -->                    chapter 10's prompt in its demo's folder: each
                                                 section's size, measured as `tutorial prompt` does
    <!-- prompt: skills -->                      ... and what each of its skills costs, when

For traces and console output, the script runs the text's chapter demo (the
scripted model, the real tools, every approval answered "y"), so what a reader
sees in the text is what the code sends, receives and prints, never typed by
hand; tests/test_docs.py runs `--check`. The demo command differs on Windows,
so run this on Linux or macOS. A demo whose runs each number their requests
from 1 has its traces named by occurrence too: `request 1 #2` is the second.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chapters.ch01 import demo as ch01_demo  # noqa: E402
from chapters.ch01.agent import build_agent as ch01_agent  # noqa: E402
from chapters.ch01.loop import run_agent  # noqa: E402
from chapters.ch01.tests.harness import ScriptedApprover  # noqa: E402
from chapters.ch02 import demo as ch02_demo  # noqa: E402
from chapters.ch02.agent import build_agent as ch02_agent  # noqa: E402
from chapters.ch02.toolset import make_tools as ch02_tools  # noqa: E402
from chapters.ch02.workspace import Workspace  # noqa: E402
from chapters.ch03 import demo as ch03_demo  # noqa: E402
from chapters.ch03.agent import build_agent as ch03_agent  # noqa: E402
from chapters.ch03.asking import Asker, ScriptedAsker, TerminalAsker  # noqa: E402
from chapters.ch03.audit import AUDIT_FILE, AuditLog  # noqa: E402
from chapters.ch03.policy import Policy  # noqa: E402
from chapters.ch03.settings import PROJECT_SETTINGS, load_policy  # noqa: E402
from chapters.ch04 import demo as ch04_demo  # noqa: E402
from chapters.ch04.agent import build_agent as ch04_agent  # noqa: E402
from chapters.ch04.hooks import Hooks  # noqa: E402
from chapters.ch04.settings import load_hooks  # noqa: E402
from chapters.ch05 import demo as ch05_demo  # noqa: E402
from chapters.ch05.agent import build_agent as ch05_agent  # noqa: E402
from chapters.ch05.agent import chapter_tools as ch05_tools  # noqa: E402
from chapters.ch05.todo import TodoPlan  # noqa: E402
from chapters.ch06 import demo as ch06_demo  # noqa: E402
from chapters.ch06.agent import build_agent as ch06_agent  # noqa: E402
from chapters.ch06.agent import chapter_tools as ch06_tools  # noqa: E402
from chapters.ch06.definitions import load_agents  # noqa: E402
from chapters.ch07 import demo as ch07_demo  # noqa: E402
from chapters.ch07.agent import build_agent as ch07_agent  # noqa: E402
from chapters.ch07.agent import chapter_tools as ch07_tools  # noqa: E402
from chapters.ch07.scripted_stream import AgentStreams, text_stream  # noqa: E402
from chapters.ch07.stream_console import StreamingConsole  # noqa: E402
from chapters.ch08 import demo as ch08_demo  # noqa: E402
from chapters.ch08.agent import build_agent as ch08_agent  # noqa: E402
from chapters.ch08.agent import chapter_tools as ch08_tools  # noqa: E402
from chapters.ch09 import demo as ch09_demo  # noqa: E402
from chapters.ch09.agent import build_agent as ch09_agent  # noqa: E402
from chapters.ch09.agent import chapter_tools as ch09_tools  # noqa: E402
from chapters.ch09.resume import open_session  # noqa: E402
from chapters.ch09.session_log import SESSIONS_FOLDER, SessionLog  # noqa: E402
from chapters.ch09.tests import killed_run  # noqa: E402
from chapters.ch10 import demo as ch10_demo  # noqa: E402
from chapters.ch10.agent import assemble_prompt as ch10_prompt  # noqa: E402
from chapters.ch10.agent import build_agent as ch10_agent  # noqa: E402
from chapters.ch10.agent import chapter_tools as ch10_tools  # noqa: E402
from chapters.ch10.environment import Environment  # noqa: E402
from chapters.ch10.sections import SystemPrompt  # noqa: E402
from chapters.ch10.show_prompt import size as section_size  # noqa: E402
from chapters.ch10.skill_tool import describe as load_skill_result  # noqa: E402
from chapters.ch10.skills import SKILL_FILE, load_skills  # noqa: E402
from chapters.ch10.tokens import estimate_tokens  # noqa: E402
from chapters.ch11 import demo as ch11_demo  # noqa: E402
from chapters.ch11.agent import build_agent as ch11_agent  # noqa: E402
from chapters.ch11.recovery_console import RecoveryConsole  # noqa: E402
from shared.approval import Approver, TerminalApprover  # noqa: E402
from shared.console import Console  # noqa: E402
from shared.scripted import scripted_text  # noqa: E402
from shared.tools import ToolRegistry  # noqa: E402

# A marker, an optional caption line, the opening fence, the body (possibly empty), the
# closing fence on its own line. The caption is generated too. The fence is three backticks,
# or more when the body holds three (console output that shows a Markdown file, say).
BLOCK = re.compile(
    r"(?P<marker><!-- (?P<kind>trace|chunks|source|console|audit|loop|log|prompt)"
    r"(?:: (?P<title>[^>]+?))? -->\n)"
    r"(?:(?!```)[^\n]*\n)?(?P<ticks>```+)(?P<lang>\w*)\n(?P<body>(?:.*?\n)??)(?P=ticks)$",
    re.S | re.M,
)


@dataclass(frozen=True)
class DemoFile:
    """A file a demo wrote, for `<!-- log: NAME -->`: its caption in the text, and its text."""

    caption: str
    text: str


# A demo run: the console, and whether a human types "y" at a (simulated) terminal
# instead of a scripted yes. It returns the audit log it wrote, if the chapter has one,
# or the files it wrote by name ("audit" among them, if it has one).
Demo = Callable[[Console, bool], str | dict[str, DemoFile]]
YES = "y\n" * 9


def approver(console: Console, human: bool) -> Approver:
    if human:
        return TerminalApprover(console, stdin=io.StringIO(YES), interactive=True)
    return ScriptedApprover.always(True)


def asker(console: Console, human: bool) -> Asker:
    """Chapter 3's asker: a human typing "y" at a (simulated) terminal, or a scripted yes."""
    if human:
        return TerminalAsker(console, stdin=io.StringIO(YES), interactive=True)
    return ScriptedAsker(["y"] * 9)


def run_ch01(console: Console, human: bool) -> str:
    agent = ch01_agent(
        model=ch01_demo.demo_model(),
        console=console,
        approver=approver(console, human),
        cwd=ROOT,
    )
    run_agent(ch01_demo.DEMO_PROMPT, agent)
    return ""


def run_ch02(console: Console, human: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / ch02_demo.DEMO_FILE).write_text(ch02_demo.DEMO_SOURCE, encoding="utf-8")
        agent = ch02_agent(
            model=ch02_demo.demo_model(),
            console=console,
            approver=approver(console, human),
            workspace=Workspace(Path(folder)),
        )
        run_agent(ch02_demo.DEMO_PROMPT, agent)
    return ""


@dataclass
class DemoWorkspace:
    """A chapter 3-6 demo workspace: its settings, policy, hooks and audit log, in a temp folder."""

    root: Workspace
    policy: Policy
    hooks: Hooks
    audit: AuditLog

    @classmethod
    def build(cls, folder: str, tools: ToolRegistry) -> DemoWorkspace:
        root = Workspace(Path(folder))
        home = root.root / "home"
        policy = load_policy(root, home, known_tools=tools)
        return cls(
            root,
            policy,
            Hooks(load_hooks(root, home)),
            AuditLog(root.root / AUDIT_FILE, inside=root.root),
        )

    def audit_log(self) -> str:
        self.audit.close()
        return self.audit.path.read_text(encoding="utf-8")


def run_ch03(console: Console, human: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        settings = Path(folder) / PROJECT_SETTINGS
        settings.parent.mkdir()
        settings.write_text(json.dumps(ch03_demo.DEMO_SETTINGS), encoding="utf-8")
        demo = DemoWorkspace.build(folder, ch02_tools(Workspace(Path(folder))))
        agent = ch03_agent(
            model=ch03_demo.demo_model(),
            console=console,
            asker=asker(console, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
        )
        run_agent(ch03_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch04(console: Console, human: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        ch04_demo.write_demo_settings(Path(folder))
        demo = DemoWorkspace.build(folder, ch02_tools(Workspace(Path(folder))))
        agent = ch04_agent(
            model=ch04_demo.demo_model(),
            console=console,
            asker=asker(console, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
        )
        run_agent(ch04_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch05(console: Console, human: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        ch05_demo.write_demo_files(Path(folder))
        demo = DemoWorkspace.build(folder, ch05_tools(Workspace(Path(folder))))
        agent = ch05_agent(
            model=ch05_demo.demo_model(),
            console=console,
            asker=asker(console, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
        )
        run_agent(ch05_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch06(console: Console, human: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        ch06_demo.write_demo_files(Path(folder))
        root = Path(folder)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch06_tools(Workspace(root), agents))
        agent = ch06_agent(
            model=ch06_demo.demo_model(),
            console=console,
            asker=asker(console, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
        )
        run_agent(ch06_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch07(console: Console, human: bool) -> str:
    """Chapter 7 streams: its console is the streaming one, on the streams it was given."""
    streaming = StreamingConsole(
        out=console.out, err=console.err, fancy=False, trace=console.tracing
    )
    with tempfile.TemporaryDirectory() as folder:
        ch06_demo.write_demo_files(Path(folder))
        root = Path(folder)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch07_tools(Workspace(root), agents))
        agent = ch07_agent(
            model=ch07_demo.demo_model(),
            console=streaming,
            asker=asker(streaming, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
        )
        run_agent(ch07_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch08(console: Console, human: bool) -> str:
    """Chapter 8 as the command line runs its demo: the streaming console, the demo's small
    window, and a run id that reads as what it is, since a real one is a time and a random."""
    streaming = StreamingConsole(
        out=console.out, err=console.err, fancy=False, trace=console.tracing
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ch08_demo.write_demo_workspace(root)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch08_tools(Workspace(root), agents))
        agent = ch08_agent(
            model=ch08_demo.demo_model(),
            console=streaming,
            asker=asker(streaming, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
            context_window=ch08_demo.DEMO_CONTEXT_WINDOW,
            keep_results=ch08_demo.DEMO_KEEP_RESULTS,
            run_id="<run-id>",
        )
        run_agent(ch08_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch09(console: Console, human: bool) -> dict[str, DemoFile]:
    """Chapter 9's three runs as the command line runs them (chapters/ch09/demo.py), each on
    a console of its own over the same streams; the sessions are named `<session-1>` and
    `<session-2>`, since a real name is a time and a random. The traced run also kills a
    real run with SIGKILL and resumes it: the log that leaves is `killed`."""

    def fresh() -> StreamingConsole:
        streams = {"out": console.out, "err": console.err}
        return StreamingConsole(**streams, fancy=False, trace=console.tracing)

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ch06_demo.write_demo_files(root)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch09_tools(Workspace(root), agents))
        model = ch09_demo.demo_model()
        names = iter(["<session-1>", "<session-2>"])

        def in_session(prompt: str, wanted: str | None) -> tuple[str, str]:
            run_console = fresh()
            log, history = open_session(
                root,
                wanted,
                chapter=9,
                console=run_console,
                new_log=lambda: SessionLog(root, next(names), chapter=9),
            )
            agent = ch09_agent(
                model=model,
                console=run_console,
                asker=asker(run_console, human),
                workspace=demo.root,
                policy=demo.policy,
                audit=demo.audit,
                hooks=demo.hooks,
                plan=TodoPlan(),
                agents=agents,
                log=log,
                home=root / "home",
            )
            return run_agent(prompt, agent, history=history), log.session_id

        # The answers stream onto the console as they are said; stdout's copy is not shown.
        between = StreamingConsole(out=io.StringIO(), err=console.err, fancy=False)
        between.info(f"user: {ch09_demo.DEMO_PROMPT}")
        ch09_demo.run_demo(in_session, between)
        files = {"audit": DemoFile("", demo.audit_log())}
    if not human:
        files["killed"] = killed_and_resumed()
    return files


KILL_DEADLINE = 30.0  # seconds: far more than a healthy start takes


def killed_and_resumed() -> DemoFile:
    """A real run killed with SIGKILL in the middle of a tool call (the one chapter 9's test
    kills, chapters/ch09/tests/killed_run.py), then resumed by chapter 9's agent: its log."""
    with tempfile.TemporaryDirectory() as folder:
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
        quiet = Console(out=io.StringIO(), err=io.StringIO(), fancy=False)
        log, history = open_session(root, "", chapter=9, console=quiet)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch09_tools(Workspace(root), agents))
        said = scripted_text("wait may not have run: I look before I retry.")
        agent = ch09_agent(
            model=AgentStreams({killed_run.PROMPT: [text_stream(said)]}, name="scripted-model"),
            console=quiet,
            asker=asker(quiet, False),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
            log=log,
            home=root / "home",
        )
        run_agent("Did it build?", agent, history=history)
        text = log.path.read_text(encoding="utf-8").replace(log.session_id, "<session-id>")
    caption = (
        "一次真实的运行在工具调用中途被 SIGKILL 杀掉（[chapters/ch09/tests/killed_run.py]"
        "(../chapters/ch09/tests/killed_run.py)），再由第 9 章的智能体 `--resume`："
        f"`{SESSIONS_FOLDER.as_posix()}/<session-id>.jsonl`（时间换成了 `<time>`，长字符串截短）"
    )
    return DemoFile(caption, text)


# Chapter 10's prompt ends with the environment: this machine, the folder and the day. The
# text shows a fixed one, so that it reads the same on every machine on every day.
CH10_FOLDER = Path("<folder>")
CH10_ENVIRONMENT = Environment(
    "Linux", "bash", CH10_FOLDER, "not a git repository", date(2026, 5, 1)
)
CH10_STARTED = datetime(2026, 5, 1, 10, 0, 0)


def run_ch10(console: Console, human: bool) -> str:
    """Chapter 10 as the command line runs its demo: the streaming console, a new session
    (named `<session-id>`, since a real id is a time and a random), and the fixed environment."""
    streaming = StreamingConsole(
        out=console.out, err=console.err, fancy=False, trace=console.tracing
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ch10_demo.write_demo_workspace(root)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch10_tools(Workspace(root), agents))
        log, _ = open_session(
            root,
            None,
            chapter=10,
            console=streaming,
            new_log=lambda: SessionLog(root, "<session-id>", chapter=10, started=CH10_STARTED),
        )
        agent = ch10_agent(
            model=ch10_demo.demo_model(),
            console=streaming,
            asker=asker(streaming, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
            log=log,
            home=root / "home",
            environment=CH10_ENVIRONMENT,
        )
        run_agent(ch10_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def run_ch11(console: Console, human: bool) -> str:
    """Chapter 11 as the command line runs its demo: the recovery console, on the demo's clock
    as it is when nobody watches (the wait is not slept, its lines are the same), a new session
    named `<session-id>` and chapter 10's fixed environment."""
    clock = ch11_demo.DemoClock(watched=False)
    recovering = RecoveryConsole(
        out=console.out, err=console.err, fancy=False, trace=console.tracing, clock=clock
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ch06_demo.write_demo_files(root)
        agents = load_agents(root, root / "home", ch05_tools(Workspace(root)).names)
        demo = DemoWorkspace.build(folder, ch10_tools(Workspace(root), agents))
        log, _ = open_session(
            root,
            None,
            chapter=11,
            console=recovering,
            new_log=lambda: SessionLog(root, "<session-id>", chapter=11, started=CH10_STARTED),
        )
        agent = ch11_agent(
            model=ch11_demo.demo_model(),
            console=recovering,
            asker=asker(recovering, human),
            workspace=demo.root,
            policy=demo.policy,
            audit=demo.audit,
            hooks=demo.hooks,
            plan=TodoPlan(),
            agents=agents,
            log=log,
            home=root / "home",
            environment=CH10_ENVIRONMENT,
            clock=clock,
        )
        run_agent(ch11_demo.DEMO_PROMPT, agent)
        return demo.audit_log()


def ch10_demo_prompt(folder: Path) -> SystemPrompt:
    """The prompt chapter 10's demo sends, as its run assembles it."""
    workspace = Workspace(folder)
    tools = ch10_tools(workspace).names
    skills = load_skills(folder, folder / "home")
    return ch10_prompt(workspace, folder / "home", CH10_ENVIRONMENT, tools, skills)


def prompt_block(title: str) -> str:
    """`sections`: each section of the demo's prompt, its size and its source, as `tutorial
    prompt` measures them; `skills`: what each skill costs at each step of the disclosure."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        ch10_demo.write_demo_workspace(root)
        if title == "sections":
            return sections_table(ch10_demo_prompt(root))
        if title == "skills":
            return skills_table(root)
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


def skills_table(root: Path) -> str:
    """Per skill: its line in the index (every request), load_skill's result (when loaded),
    and each other file (when read)."""
    workspace = Workspace(root)
    rows = [("skill", "index line", "load_skill", "other files")]
    for skill in load_skills(root, root / "home").skills.values():
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


DOCS: dict[Path, Demo] = {
    ROOT / "docs" / "ch01-agent-loop.md": run_ch01,
    ROOT / "docs" / "ch02-file-tools.md": run_ch02,
    ROOT / "docs" / "ch03-permissions.md": run_ch03,
    ROOT / "docs" / "ch04-hooks.md": run_ch04,
    ROOT / "docs" / "ch05-todo.md": run_ch05,
    ROOT / "docs" / "ch06-subagents.md": run_ch06,
    ROOT / "docs" / "ch07-streaming-parallel.md": run_ch07,
    ROOT / "docs" / "ch08-compaction.md": run_ch08,
    ROOT / "docs" / "ch09-memory.md": run_ch09,
    ROOT / "docs" / "ch10-prompt-assembly.md": run_ch10,
    ROOT / "docs" / "ch11-recovery.md": run_ch11,
}


@dataclass(frozen=True)
class DemoOutput:
    documents: dict[str, Any]  # traced JSON by title: "request 1", "response 1", ...
    traced: str  # everything the traced run printed
    printed: str  # what the demo printed, a human answering at the terminal
    audit: str  # the audit log of the traced run, if the chapter writes one
    files: dict[str, DemoFile]  # the files the traced run wrote, by name, if it says


def demo_output(run: Demo) -> DemoOutput:
    traced = io.StringIO()
    wrote = run(Console(out=io.StringIO(), err=traced, fancy=False, trace=True), False)
    files = wrote if isinstance(wrote, dict) else {"audit": DemoFile("", wrote)}
    text, documents = traced.getvalue(), {}
    seen: dict[str, int] = {}  # how often each title was printed so far
    for match in re.finditer(r"^--- (?P<title>.+?) ---\n", text, re.M):
        title = match["title"]
        seen[title] = seen.get(title, 0) + 1
        document, _ = json.JSONDecoder().raw_decode(text, match.end())
        documents[title] = documents[f"{title} #{seen[title]}"] = document  # the last, and each
    printed = io.StringIO()
    run(Console(out=printed, err=printed, fancy=False), True)
    audit = files["audit"].text if "audit" in files else ""
    return DemoOutput(documents, text, printed.getvalue().rstrip("\n"), audit, files)


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
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == wanted:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = source.splitlines()[first - 1 : node.end_lineno]
            indent = len(lines[0]) - len(lines[0].lstrip())
            return first, "\n".join(line[indent:] for line in lines)
    raise SystemExit(f"no function {name} in {path}")


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


def render(text: str, run: Demo, chapter: int) -> str:
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
    }

    def demo() -> DemoOutput:
        if not cache:
            cache.append(demo_output(run))
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
        else:
            body, caption = console_block(demo().printed), captions[kind]
        ticks = "`" * max([3, *(len(run) + 1 for run in re.findall(r"^`{3,}", body, re.M))])
        return f"{match['marker']}{caption}\n{ticks}{match['lang']}\n{body}\n{ticks}"

    return BLOCK.sub(replace, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report texts out of date")
    check = parser.parse_args().check
    stale = []
    for path, run in DOCS.items():
        text = path.read_text(encoding="utf-8")
        updated = render(text, run, int(path.name[2:4]))
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

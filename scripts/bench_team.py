"""Benchmark: N teammates working side by side against the same requests one after another,
and the mail they send the lead: none may be lost.

    python scripts/bench_team.py [--delay 1.0] [--sizes 1 2 4 8] [--quick]  (exit 1: goal missed)

What it measures, with chapter 15's agent as its command line builds it (`python -m
chapters.ch15 --prompt ...`, run in this process: the recipe's streaming client over the
real `openai` SDK, the real team on its threads, the mailboxes, chapter 13's inbox, the
family budget, the shared call pipeline). Only the model is scripted, by a server: the
tests' local Chat Completions server on 127.0.0.1 (chapters/ch01/tests/chat_server.py),
which holds every reply `--delay` seconds (1 s) before it streams it, as a slow model
does, and answers any number of requests at once, as a provider does. Each request is
routed by the first line of its system prompt (`You are teammate "mate-3" in team ...`):

    lead      request 1: spawn_teammate × N in one reply (agent `explore`, one prompt
              each); then an answer saying how many teammates it has heard from. The end
              rule holds the run while a teammate works; each message sends the lead back
              to work, and its answer ends the run once all N have reported
    mate-K    requests 1-4: read_file of a file of the workspace; request 5: the answer
              (`answer of mate-K`), which goes to the lead as a message; the teammate
              idles until the run ends and stops it

For each N, one run (after one unmeasured run that pays for the imports), with
`--max-requests` and `--max-turns` high enough for every request of the run, `--max-retries
0` (a failed request shows, not a slower one) and `--team-wait 60` (a team that never
reports ends the run, not the benchmark):

    team wall    from the first teammate request reaching the server to the last teammate
                 answer leaving it: how long the N × 5 requests took side by side
    serial       N × 5 × delay: the same requests one after another
    speed-up     serial / team wall
    run wall     the whole command, the lead's own requests included (1 s each: the
                 spawns, its answer while the team works, one request per batch of mail
                 that arrives) with the team's start and end; beside it N×5/run (the
                 issue's ratio taken on the whole run), the run's requests and its
                 serial time (every one of them, one after another)
    sent         the teammates' answers the server sent (each must be one line of the
                 lead's mailbox, from that teammate)
    delivered    the answers whose `<teammate-message teammate_id="mate-K">` envelope is
                 in the lead's last request, i.e. in its history; each must be there once,
                 and in no request twice
    lost         sent - delivered

After each run: exit code 0, every mailbox of the team counted as fully delivered
(`<name>.delivered` equals its lines), and no teammate's thread left.

Why: a teammate is only worth its cost if it runs beside the others, not behind them:
one shared model client, one call pipeline, one console, one budget under a lock, and
the lead's mail must not turn N loops into one queue. And a team is only usable if
every answer reaches the lead exactly once (both references lose messages).

Goal: speed-up ≥ 0.8 × N for every N (the issue names N = 4: ≥ 3.2); nothing lost,
nothing twice, every mailbox counted, no thread left. The goal is on the team's wall, not
the run's: the lead's own requests come before the team starts (the spawns) and after it
ends (reading the answers), one at a time, so with 5 requests a teammate the whole run
takes at least 7 s at 1 s a reply, whatever N is (N×5/run shows that ratio).

Checked once by breaking the code on purpose (monkeypatched, outside the repository): a
lock around the model's requests keeps the speed-up under 1 for any N; teammates whose
answers are never sent show as lost; a count that never moves shows as a mailbox not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chapters.ch01.tests.chat_server import ChatServer, RecordedRequest, StreamReply
from chapters.ch01.tests.cli_support import command_line, model_env, sse
from chapters.ch07.scripted_stream import calls_stream, text_stream
from chapters.ch15.agent import RECIPE
from chapters.ch15.mailbox import LEAD, Mailboxes

GOAL = 0.8  # speed-up at least GOAL × N
REQUESTS_PER_MATE = 5  # 4 reads, then the answer
TEAM = "bench"
TEAM_WAIT = 60  # --team-wait: a team that never reports ends the run, not the benchmark
PROMPT = "Split the reading among teammates and tell me what each found."
IDENTITY = re.compile(r'^You are teammate "(?P<name>[a-z0-9-]+)" in team ')
ENVELOPE = re.compile(r'<teammate-message teammate_id="(?P<who>mate-\d+)"[^>]*>[^<]*answer of ')
# Settings of the machine running the benchmark that would change the run.
UNSET = ("OPENAI_FALLBACK_MODEL", "OPENAI_FALLBACK_BASE_URL", "OPENAI_FALLBACK_API_KEY",
         "OPENAI_EVENT_DELIVERY", "TUTORIAL_NOW")  # fmt: skip

chapter15 = command_line(RECIPE.command(), "python -m chapters.ch15")


def mate(number: int) -> str:
    return f"mate-{number}"


def note(name: str, read: int) -> str:
    return f"notes/{name}-{read}.txt"


@dataclass
class Served:
    """One request as the server saw it."""

    who: str  # "lead" or the teammate's name
    arrived: float  # time.perf_counter() when it reached the server
    left: float = float("nan")  # when the last event of its reply was written
    answer: bool = False  # the reply was a teammate's answer (its last request)
    body: Any = None  # the lead's requests only


@dataclass
class Model:
    """The scripted provider: who asks, what it answers, and when."""

    size: int
    delay: float
    served: list[Served] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: RecordedRequest) -> StreamReply:
        """Called by the server under its lock: quick. The delay is in the handler's thread."""
        body = request.body
        messages = body["messages"]
        first = str(messages[0].get("content") or "") if messages[0]["role"] == "system" else ""
        found = IDENTITY.match(first)
        who = found["name"] if found else LEAD
        served = Served(who, time.perf_counter(), body=body if who == LEAD else None)
        if who == LEAD:
            chunks = self.lead(messages)
        else:
            reads = sum(1 for m in messages if m["role"] == "tool")
            if reads < REQUESTS_PER_MATE - 1:
                path = json.dumps({"path": note(who, reads + 1)})
                chunks = calls_stream((f"call_{reads + 1}", "read_file", path))
            else:
                served.answer = True
                chunks = text_stream(f"answer of {who}: read {reads} notes.")
        with self.lock:
            self.served.append(served)
        reply = sse(*chunks)
        last = len(list(reply.events)) - 1

        def before_event(index: int) -> None:
            if index == 0:
                time.sleep(self.delay)  # the model thinks
            if index == last:
                served.left = time.perf_counter()

        return replace(reply, before_event=before_event)

    def lead(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not any(m["role"] == "assistant" for m in messages):
            spawns = []
            for n in range(1, self.size + 1):
                given = {"name": mate(n), "prompt": f"Read your 4 notes ({n}).", "agent": "explore"}
                spawns.append((f"call_{n}", "spawn_teammate", json.dumps(given)))
            return calls_stream(*spawns)
        heard = len(set(ENVELOPE.findall(contents(messages))))
        return text_stream(f"Heard from {heard} of {self.size} teammates.")


@dataclass(frozen=True)
class Measured:
    size: int
    team_wall: float
    run_wall: float
    requests: int
    sent: int
    delivered: int
    mailboxes: int  # the team's mailboxes after the run
    counted: int  # those whose delivered count equals their lines
    problems: tuple[str, ...]


def run_once(size: int, delay: float) -> Measured:
    model = Model(size, delay)
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve() / "ws"
        home = Path(folder).resolve() / "home"
        home.mkdir()
        for number in range(1, size + 1):
            for read in range(1, REQUESTS_PER_MATE):
                path = root / note(mate(number), read)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"Note {read} of {mate(number)}.\n", encoding="utf-8")
        budget = size * REQUESTS_PER_MATE + 2 * size + 10
        env: dict[str, str | None] = {name: None for name in UNSET}
        os.chdir(root)  # where a run reads .env: not this repository's
        try:
            with ChatServer(respond=model) as server:
                env.update(model_env(server), HOME=str(home), USERPROFILE=str(home))
                started = time.perf_counter()
                result = chapter15(
                    "--workspace", str(root), "--prompt", PROMPT, "--team", TEAM,
                    "--max-requests", str(budget), "--max-turns", str(budget),
                    "--max-retries", "0", "--team-wait", str(TEAM_WAIT),
                    env=env,  # type: ignore[arg-type]  # None: unset, as CliRunner takes it
                )  # fmt: skip
                run_wall = time.perf_counter() - started
        finally:
            os.chdir(here)
        problems = []
        if result.exit_code != 0:
            tail = " | ".join(result.stderr.strip().splitlines()[-3:])
            problems.append(f"exit {result.exit_code}: {tail}")
        mailboxes = Mailboxes(root, TEAM)
        folder_of_mail = root / mailboxes.relative
        lead_lines = mail_lines(folder_of_mail / f"{LEAD}.jsonl")
        boxes = sorted(folder_of_mail.glob("*.jsonl"))
        counted = 0
        for box in boxes:
            lines, marked = len(mail_lines(box)), mailboxes.delivered(box.stem)
            counted += marked == lines
            if marked != lines:
                problems.append(f"{box.name}: {marked} of its {lines} lines counted delivered")
    left = [t.name for t in threading.enumerate() if t.name.startswith("teammate ")]
    if left:
        problems.append(f"threads left after the run: {', '.join(left)}")
    answers = [s for s in model.served if s.answer]
    senders = sorted(line["from"] for line in lead_lines if line["from"].startswith("mate-"))
    if senders != sorted(s.who for s in answers):
        problems.append(f"the lead's mailbox holds answers from {senders}")
    lead_requests = [s for s in model.served if s.who == LEAD]
    in_history: dict[str, int] = {}
    for request in lead_requests:
        counts: dict[str, int] = {}
        for who in ENVELOPE.findall(contents(request.body["messages"])):
            counts[who] = counts.get(who, 0) + 1
        if any(n > 1 for n in counts.values()):
            problems.append(f"an answer twice in one request of the lead: {counts}")
        in_history = counts  # the last request holds the whole history
    sent = {s.who for s in answers}
    delivered = len(sent & set(in_history))
    mates = [s for s in model.served if s.who != LEAD]
    team_wall = max(s.left for s in answers) - min(s.arrived for s in mates) if answers else 0.0
    if len(mates) != size * REQUESTS_PER_MATE or len(answers) != size:
        problems.append(f"{len(mates)} teammate requests, {len(answers)} answers: not {size} × 5")
    return Measured(
        size, team_wall, run_wall, len(model.served), len(answers), delivered, len(boxes),
        counted, tuple(problems),
    )  # fmt: skip


def contents(messages: list[dict[str, Any]]) -> str:
    """What a request's messages say, one after another."""
    return "\n".join(str(m.get("content") or "") for m in messages)


def mail_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per model reply")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 4, 8], help="team sizes")
    parser.add_argument(
        "--quick", action="store_true", help="0.2 s per reply (the shape, not the numbers)"
    )
    args = parser.parse_args(argv)
    delay = 0.2 if args.quick else args.delay
    print(
        f"Python {platform.python_version()} on {platform.system()} · {os.cpu_count()} CPUs · "
        f"{delay:g} s per reply · {REQUESTS_PER_MATE} requests per teammate"
    )
    print(
        " N  team wall  serial  speed-up  goal         run wall  N×5/run  requests  run serial"
        "  sent  delivered  lost  mailboxes counted"
    )
    run_once(1, 0.0)  # once, unmeasured: the first run of a process pays for its imports
    missed: list[str] = []
    for size in args.sizes:
        m = run_once(size, delay)
        serial = size * REQUESTS_PER_MATE * delay
        speedup = serial / m.team_wall if m.team_wall else 0.0
        goal = GOAL * size
        met = speedup >= goal
        lost = m.sent - m.delivered
        print(
            f"{size:2}  {m.team_wall:8.2f}s {serial:6.1f}s  {speedup:8.2f}  "
            f"≥{goal:4.1f} {'met' if met else 'MISSED':6}  {m.run_wall:7.2f}s  "
            f"{serial / m.run_wall:7.2f}  {m.requests:8}  {m.requests * delay:9.1f}s  "
            f"{m.sent:4}  {m.delivered:9}  {lost:4}  {m.counted}/{m.mailboxes}"
        )
        if not met:
            missed.append(f"N={size}: speed-up {speedup:.2f}, goal at least {goal:.1f}")
        if lost:
            missed.append(f"N={size}: {lost} of {m.sent} answers did not reach the lead")
        missed += [f"N={size}: {p}" for p in m.problems]
    for line in missed:
        print(f"goal missed: {line}")
    print("goals: " + ("met" if not missed else "MISSED"))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

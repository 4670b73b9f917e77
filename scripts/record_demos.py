"""Record every ready chapter's `--demo`: the request bodies it sends and what it prints.

The golden files in tests/golden/chNN/ pin each chapter's behaviour byte for
byte, so a change to how a chapter's agent is composed cannot change what goes
over the wire or what the reader sees without a test saying so
(tests/test_golden_demos.py):

    requests.jsonl   every request body handed to the model client, one JSON object
                     a line, keys in the order they are sent
    stdout.txt       what the demo printed on stdout (the answer)
    stderr.txt       what it printed on stderr (everything else), plain: no terminal, NO_COLOR

Each demo runs as a reader runs it, `python -m tutorial run --chapter N --demo`,
in this process through click's CliRunner: stdin is not a terminal (nobody
answers an approval), NO_COLOR=1 and COLUMNS=80, and HOME, the working folder
and the temporary root are fresh folders. The requests are taken where the
model client receives them: the scripted models' `complete`
(`complete_reporting` for a streamed one), the place of the real client that
hands the same dict to the OpenAI SDK.

What varies between two runs is replaced, each by one rule (`normalise`):

    paths      the temporary root, HOME and the working folder          <tmp> <home> <cwd>
               the random end of a folder made by `mkdtemp`              <tmp>/…-demo-<random>
    today      today's date, as ISO (chapter 10's environment section)   <today>
    run ids    session and transcript ids (date, time, random),          <run-id-1>, <run-id-2> …
               numbered by first appearance, so a resumed session is
               still seen to be the same one
    prompt size  the `system prompt: N characters, ~T tokens` line       system prompt: <size>
               (chapters 10 and 11): the prompt holds the workspace's path, so its size
               follows the temporary root's length; requests.jsonl still holds every byte
    side by side  requests sent from worker threads (sub-agents run side by side) between
               two requests of the demo's own thread: grouped by the run that sent them
               (its first user message), runs in the order of that message's text,
               each run's own order kept; threads decide the interleaving, nothing else

Nothing else is touched: no duration or time of day appears in these demos'
output (chapter 11's retry waits on the demo's own clock). The files are made
and checked on Linux: the shell tool, the shell a demo's command runs in and
chapter 10's operating-system and shell lines differ on Windows and macOS.

    python scripts/record_demos.py            rewrite tests/golden/
    python scripts/record_demos.py --check    compare; exit 1 with a diff of the first difference
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python scripts/record_demos.py` from anywhere
    sys.path.insert(0, str(ROOT))

GOLDEN = ROOT / "tests" / "golden"
FILES = ("requests.jsonl", "stdout.txt", "stderr.txt")
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")  # chapters/ch08/transcript.py new_run_id
MKDTEMP_END = r"[a-z0-9_]{8}"  # tempfile's random part of a folder name
PROMPT_SIZE = re.compile(r"(system prompt: )[\d,]+ characters, ~[\d,]+ tokens")  # show_prompt.py


@dataclass(frozen=True)
class Sent:
    """One request body as the model client received it, and who sent it."""

    body: str  # json.dumps(request, ensure_ascii=False): key order as sent
    run: str  # the first user message: which run (agent or sub-agent) sent it
    own_thread: bool  # sent from the thread that started the demo


@dataclass(frozen=True)
class Recording:
    """One chapter's demo, normalised: the text of each golden file."""

    files: Mapping[str, str]


def ready_chapters() -> list[int]:
    from tutorial.catalog import CHAPTERS

    return [chapter.number for chapter in CHAPTERS if chapter.ready]


def record(number: int, root: Path) -> Recording:
    """Run chapter `number`'s demo with `root` holding its temporary root, HOME and working
    folder (each made here, empty), and return what it sent and printed, normalised."""
    from click.testing import CliRunner

    from tutorial.cli import cli

    tmp, home, cwd = root / "tmp", root / "home", root / "here"
    for folder in (tmp, home, cwd):
        folder.mkdir(parents=True)
    sent: list[Sent] = []
    today = date.today()
    env = {"HOME": str(home), "NO_COLOR": "1", "COLUMNS": "80"}
    with (
        _requests_recorded(sent),
        mock.patch.object(tempfile, "tempdir", str(tmp)),
        contextlib.chdir(cwd),
    ):
        result = CliRunner().invoke(
            cli, ["run", "--chapter", str(number), "--demo"], env=env, input=""
        )
    if result.exit_code != 0:
        raise RuntimeError(
            f"chapter {number}'s demo exited with {result.exit_code}: {result.stderr}"
            f"{result.exception!r}"
        )
    requests = "".join(f"{request.body}\n" for request in _side_by_side_ordered(sent))
    texts = {"requests.jsonl": requests, "stdout.txt": result.stdout, "stderr.txt": result.stderr}
    return Recording(normalise(texts, tmp=tmp, home=home, cwd=cwd, days={today, date.today()}))


def normalise(
    texts: Mapping[str, str], *, tmp: Path, home: Path, cwd: Path, days: set[date]
) -> dict[str, str]:
    """Replace what differs between runs, by the rules in this module's docstring."""
    ids: dict[str, str] = {}

    def run_id(match: re.Match[str]) -> str:
        return ids.setdefault(match.group(0), f"<run-id-{len(ids) + 1}>")

    done: dict[str, str] = {}
    for name in ("stderr.txt", "stdout.txt", "requests.jsonl"):  # ids numbered in this order
        text = texts[name]
        text = re.sub(re.escape(str(tmp)) + r"/([\w.-]*-)" + MKDTEMP_END, r"<tmp>/\1<random>", text)
        for folder, mark in ((tmp, "<tmp>"), (home, "<home>"), (cwd, "<cwd>")):
            text = text.replace(str(folder), mark)
        for day in days:
            text = text.replace(day.isoformat(), "<today>")
        if name != "requests.jsonl":  # the request holds the prompt itself, every byte
            text = PROMPT_SIZE.sub(r"\1<size>", text)
        done[name] = RUN_ID.sub(run_id, text)
    return {name: done[name] for name in FILES}


def _side_by_side_ordered(sent: list[Sent]) -> list[Sent]:
    """The requests in the order sent, except that each stretch sent from worker threads is
    grouped by run, runs ordered by their first user message (thread timing decides nothing)."""
    ordered: list[Sent] = []
    stretch: list[Sent] = []
    for request in [*sent, None]:
        if request is not None and not request.own_thread:
            stretch.append(request)
            continue
        ordered += sorted(stretch, key=lambda s: s.run)  # stable: a run's own order stays
        stretch = []
        if request is not None:
            ordered.append(request)
    return ordered


def _first_user(request: Mapping[str, Any]) -> str:
    messages = request.get("messages") or []
    return next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")


@contextmanager
def _requests_recorded(sent: list[Sent]) -> Iterator[None]:
    """Every scripted model records each request it is handed into `sent`, as sent."""
    from chapters.ch06.demo import AgentScripts
    from chapters.ch07.scripted_stream import AgentStreams, ScriptedStreamingModel
    from shared.scripted import ScriptedModel

    owner = threading.get_ident()
    lock = threading.Lock()

    def recording(method: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(self: object, request: Mapping[str, Any], *rest: Any) -> Any:
            body = json.dumps(request, sort_keys=False, ensure_ascii=False)
            with lock:
                sent.append(Sent(body, _first_user(request), threading.get_ident() == owner))
            return method(self, request, *rest)

        return recorded

    # Each class records in one method only: a streamed model's `complete` calls its
    # `complete_reporting`, and a subclass's `complete` (chapter 5's) calls ScriptedModel's.
    entries = [
        (ScriptedModel, "complete"),
        (AgentScripts, "complete"),
        (ScriptedStreamingModel, "complete_reporting"),
        (AgentStreams, "complete_reporting"),
    ]
    with ExitStack() as stack:
        for cls, name in entries:
            stack.enter_context(mock.patch.object(cls, name, recording(getattr(cls, name))))
        yield


def first_difference(number: int, recording: Recording, golden: Path = GOLDEN) -> str | None:
    """A unified diff of the first golden file of chapter `number` that differs, or None."""
    folder = golden / f"ch{number:02d}"
    for name in FILES:
        path = folder / name
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
        new = recording.files[name]
        if old != new:
            return _unified_diff(path.relative_to(ROOT).as_posix(), old, new)
    return None


def _unified_diff(label: str, old: str, new: str) -> str:
    """The diff of two texts. A request is one long line, so when the first differing lines
    are both JSON, the diff is of those two requests, indented (keys stay in their order)."""
    olds, news = old.splitlines(keepends=True), new.splitlines(keepends=True)
    at = next(
        (i for i, pair in enumerate(zip(olds, news, strict=False)) if pair[0] != pair[1]), None
    )
    if label.endswith(".jsonl") and at is not None:
        try:
            before, after = (
                json.dumps(json.loads(line), ensure_ascii=False, indent=1)
                for line in (olds[at], news[at])
            )
        except json.JSONDecodeError:
            before = after = ""
        if before != after:
            return "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"{label} line {at + 1} (checked in)",
                    f"{label} line {at + 1} (this run)",
                )
            )
    diff = "".join(difflib.unified_diff(olds, news, f"{label} (checked in)", f"{label} (this run)"))
    return diff or f"{label}: differs only in line endings or a final newline\n"


def write(number: int, recording: Recording, golden: Path = GOLDEN) -> None:
    folder = golden / f"ch{number:02d}"
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        with (folder / name).open("w", encoding="utf-8", newline="\n") as file:
            file.write(recording.files[name])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    if sys.platform != "linux":
        print("record_demos.py: the golden files are made and checked on Linux", file=sys.stderr)
        return 2
    for number in ready_chapters():
        with tempfile.TemporaryDirectory(prefix="record-demos-") as root:
            recording = record(number, Path(root))
        if not args.check:
            write(number, recording)
            continue
        difference = first_difference(number, recording)
        if difference is not None:
            sys.stdout.write(difference)
            print(
                f"chapter {number}'s demo differs from tests/golden/ch{number:02d}/; if the "
                "change is intended, run: python scripts/record_demos.py",
                file=sys.stderr,
            )
            return 1
    print("golden demos: " + ("all match" if args.check else f"written to {GOLDEN}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

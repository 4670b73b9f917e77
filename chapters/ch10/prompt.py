"""The system prompt of chapter 10, assembled from sections in a fixed order.

    section                 source                                         cap (characters)
    identity                this file: who the model is, how the loop works   2,000
    tools                   this file: a line per tool the agent has          3,000
    project instructions    AGENTS.md (or CLAUDE.md), ~/.tutorial/AGENTS.md  13,000
    skills                  .tutorial/skills/, ~/.tutorial/skills/            6,000
    memory                  whatever the caller passes (chapter 9's index)    4,000
    environment             this machine and today's date                     1,000

Stable first, changing last. The first two sections are the same for every
run of the chapter; the next three change when someone edits a file; the
environment changes with the folder and the day. Providers cache a prompt by
its prefix, so two runs in one folder on one day send byte-identical prompts
and a run on the next day still shares everything up to its last line.

Everything is read once, when the prompt is built, and the run sends the same
text with every request: a file edited during the run changes the next run,
not the next request.

The first two sections carry what chapters 1 to 9 said in their constant
prompts (chapters/ch02/prompt.py, chapters/ch05/prompt.py to chapters/ch09/prompt.py),
mostly in the words checked
there against a real small model. What is new: a tool's line is there only
when the agent has the tool, and the model is told to look before it acts
(read a file before changing it, search before creating, read a command's
output before saying it worked). A small model given none of that wrote an
answer into a file it never read, and created src/Parser.py beside the class
it was asked to change. The prompt names no example path: given "paths are
relative to the workspace, like src/app.py", the same model created src/app.py
in 6 of 12 small tasks that had nothing to do with it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from chapters.ch10.environment import Environment
from chapters.ch10.instructions import Instructions, read_instructions
from chapters.ch10.sections import Section, SectionSource, SystemPrompt
from chapters.ch10.skills import SOURCE as SKILLS_SOURCE
from chapters.ch10.skills import SkillCatalog

THIS_FILE = "chapters/ch10/prompt.py"
ORDER = ("identity", "tools", "project instructions", "skills", "memory", "environment")
CAPS: Mapping[str, int] = {
    "identity": 2_000,
    "tools": 3_000,
    "project instructions": 13_000,  # two files of at most 6,000 each, and their headings
    "skills": 6_000,
    "memory": 4_000,
    "environment": 1_000,
}

MEMORY_HEADING = "# Memory"  # above the index text the memory source gives
IDENTITY = """\
You are a coding agent working in the user's workspace folder (see Environment below). \
You act by calling tools; the result of each call comes back to you as a tool message.
- A human, or a rule the user set, approves or refuses every write and every shell \
command before it runs. A refused call will be refused again: do not repeat it.
- A failed call is information: read it and decide. Never make the same call twice; \
its result is already above.
- Look before you act: every change you make and every fact you report rests on what a \
tool showed you in this conversation, never on a guess.
- As soon as the results answer the user, stop calling tools and answer in plain text."""


@dataclass(frozen=True)
class Guidance:
    """A line for the tools section, there only when the agent has every tool it names."""

    tools: tuple[str, ...]
    text: str


GUIDANCE: tuple[Guidance, ...] = (
    Guidance(
        ("read_file", "glob", "grep"),
        "- Paths are relative to the workspace folder. If the user asks a question, "
        "find the answer with read_file, glob or grep and reply; change files only when the "
        "user asks for a change.",
    ),
    Guidance(
        ("read_file", "edit_file"),
        "- Read a file before you change it, even to replace it whole; edit_file's old_string "
        "is copied exactly from read_file's output, without the line numbers.",
    ),
    Guidance(
        ("glob", "grep"),
        "- Before you create a file, a class or a function, search for it with grep or glob: "
        "if it exists, change it where it is instead of making a second one.",
    ),
    Guidance(
        ("shell",),
        "- shell runs one command in the shell named under Environment. Do not guess what a "
        "command would print: run it, and read its exit code and output before you say it "
        "worked.",
    ),
    Guidance(
        ("todo_write",),
        "- For a task of three or more steps, first call todo_write with the steps, the first "
        "one in_progress. Each time a step is done, call todo_write with the whole list again: "
        "that step completed, the next one in_progress. Answer the user when every step is "
        "completed.",
    ),
    Guidance(
        ("task",),
        "- For a side question that needs many searches or reads (where is X defined? what do "
        "the tests cover?), call task: a sub-agent does the work in a context of its own and "
        "sends back only its answer. Its prompt is all it sees, so say exactly what to find "
        "and what to report. Use its report; do not repeat its reads.",
    ),
    Guidance(
        ("read_file", "glob", "grep"),
        "- When several calls do not depend on each other's results (reads, searches, tasks "
        "for explore), make them all in one reply: they run side by side. A call that needs "
        "another's result goes in a later reply.",
    ),
    Guidance(
        ("read_file", "grep"),
        "- A tool result too long to send whole is saved to a file: you see its start, its end "
        "and the file's path. Read the part you need from that file with read_file (offset, "
        "limit) or grep; do not run the tool again to see more.",
    ),
    Guidance(
        ("read_file", "grep"),
        "- To keep the context small, the harness replaces old tool results by a short stub "
        "and, when the context is nearly full, the earlier conversation by a summary. Each "
        "names the file that holds the full text.",
    ),
    Guidance(
        ("memory_read", "memory_write"),
        "- Memory outlives this session. When the user states a preference, corrects how you "
        "work, or tells you a fact to keep for later, save it with memory_write: one memory per "
        "topic, never a password or a key. A memory is read with memory_read when it bears on "
        "the task.",
    ),
)


def tools_text(tools: Collection[str], guidance: Sequence[Guidance] = GUIDANCE) -> str:
    """The tools section: the lines whose tools the agent has, in the table's order."""
    lines = [g.text for g in guidance if all(name in tools for name in g.tools)]
    return "\n".join(["# Using the tools", *lines]) if lines else ""


def build_system_prompt(
    *,
    tools: Collection[str],
    instructions: Instructions,
    skills: SkillCatalog,
    environment: Environment,
    memory: SectionSource | None = None,
    guidance: Sequence[Guidance] = GUIDANCE,
    caps: Mapping[str, int] = CAPS,
) -> SystemPrompt:
    """The prompt for one run, from what the caller read for it (once, at the start).

    `tools`: the names of the tools the agent has. `memory`: anything with a
    `source` and a `text()` (chapter 9's memory index); None leaves the
    section empty. Nothing here reads a file or the clock: the caller did,
    so a test can pass in exactly the world it wants.
    """
    memory_text, memory_source, warnings = _read(memory)
    texts = {
        "identity": (THIS_FILE, IDENTITY),
        "tools": (f"{THIS_FILE}, for {len(tools)} tools", tools_text(tools, guidance)),
        "project instructions": (instructions.source, instructions.text()),
        "skills": (SKILLS_SOURCE, skills.index()),
        "memory": (memory_source, memory_text),
        "environment": ("this machine, .git/HEAD and today's date", environment.text()),
    }
    sections = tuple(
        Section.capped(name, texts[name][0], caps[name], texts[name][1]) for name in ORDER
    )
    return SystemPrompt(sections, (*instructions.warnings, *skills.warnings, *warnings))


def _read(memory: SectionSource | None) -> tuple[str, str, list[str]]:
    """The memory section's text and source; a provider that fails leaves it empty, said once."""
    if memory is None:
        return "", "none: no memory index given", []
    try:
        text = memory.text().strip()
    except Exception as error:  # someone else's code: it must not stop the run
        problem = f"{type(error).__name__}: {error}"
        return "", memory.source, [f"the memory index could not be read ({problem}); left out"]
    return (f"{MEMORY_HEADING}\n{text}" if text else ""), memory.source, []


def read_system_prompt(
    workspace: Path,
    home: Path,
    environment: Environment,
    *,
    tools: Collection[str],
    skills: SkillCatalog,
    memory: SectionSource | None = None,
    guidance: Sequence[Guidance] = GUIDANCE,
) -> SystemPrompt:
    """Read the instruction files now, and build the prompt from them and what was passed.

    What a run calls once, at its start, and `tutorial prompt` calls the same way.
    `skills` is passed in because the run's load_skill tool must serve the very
    catalog whose index the prompt shows; `environment` because whoever starts the
    run reads it (`read_environment`), once, with the date it chooses.
    """
    return build_system_prompt(
        tools=tools,
        instructions=read_instructions(workspace, home),
        skills=skills,
        environment=environment,
        memory=memory,
        guidance=guidance,
    )

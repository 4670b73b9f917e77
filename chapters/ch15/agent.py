"""Chapter 15's agent: chapter 14's, which leads a team of teammates that run beside it.

    team  spawn_teammate {name, prompt, agent?}: a teammate starts at once, on its own
          thread, as chapter 6's agent `agent` (its tools, prompt and turn limit), with
          a history of its own that begins "You are teammate "<name>" in team "<team>"."
          send_message {to, message, summary?}: to a member, the lead, or * (everyone
          else); each member's mailbox is .tutorial/teams/<team>/inboxes/<name>.jsonl,
          append-only, with a count of what is delivered beside it, and a message reaches
          its reader through chapter 13's inbox, once, before its next request. A
          teammate that answers sends the answer to the lead and waits, idle, for mail.
          The lead's answer ends the run only when no teammate works and no message waits
          (at most --team-wait); then every teammate is stopped. --team NAME (default:
          the task list's name, which the team shares); `team` lists the members

Every member shares the lead's call pipeline (one policy, one human, one approval at a
time) and chapter 6's family budget.

Extends: chapters/ch14/agent.py
"""

from __future__ import annotations

from chapters.ch14.agent import RECIPE as CHAPTER_14
from chapters.ch15.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch15.parts import TeamPart
from shared.recipe import Demo

RECIPE = CHAPTER_14.extend(
    chapter=15,
    help=(
        "Chapter 15: chapter 14's agent, which can spawn teammates (spawn_teammate) that work "
        "beside it and talk through mailboxes (send_message)."
    ),
    demo=Demo(
        DEMO_PROMPT,
        lambda setup: demo_model(stream=not setup.option("no_stream")),
        make_demo_workspace,
    ),
    add=[TeamPart()],
)

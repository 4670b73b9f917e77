"""Chapter 16's agent: chapter 15's, whose teammates' plans are approved and stops are asked.

    protocols  requests with ids, statuses and a timeout, each a line in
               .tutorial/teams/<team>/requests.jsonl. spawn_teammate {..., plan_mode_required?}:
               such a teammate may read, but every call that writes or runs answers
               `denied: plan not approved` until the lead approves its plan (submit_plan
               {plan} -> review_plan {request_id, approve, feedback?}); the gate comes
               before the permission policy and lifts only itself. request_shutdown
               {teammate, reason?} -> shutdown_response {request_id, approve, reason?}:
               approved, the teammate stops at its next request boundary, its in_progress
               tasks go back to pending, and the lead hears teammate_terminated. A request
               unanswered for --protocol-timeout seconds (default 300) expires, and the one
               who asked is told. `team` lists the open requests

Extends: chapters/ch15/agent.py
"""

from __future__ import annotations

from chapters.ch15.agent import RECIPE as CHAPTER_15
from chapters.ch16.demo import DEMO_PROMPT, demo_model, make_demo_workspace
from chapters.ch16.parts import TeamProtocols
from shared.recipe import Demo

RECIPE = CHAPTER_15.extend(
    chapter=16,
    help=(
        "Chapter 16: chapter 15's agent, whose teammates may have to get a plan approved before "
        "they write (plan_mode_required, review_plan) and stop when asked (request_shutdown)."
    ),
    demo=Demo(
        DEMO_PROMPT,
        lambda setup: demo_model(stream=not setup.option("no_stream")),
        make_demo_workspace,
    ),
    add=[TeamProtocols()],
)

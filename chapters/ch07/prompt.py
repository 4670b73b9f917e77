"""Chapter 7's system prompt: chapter 6's, plus that independent calls belong in one reply.

The pipeline can only run side by side what the model asks for together. A
model that makes one call per reply gets no overlap at all, so the prompt says
when to batch: calls that do not depend on each other's results.
"""

from chapters.ch06.prompt import SYSTEM_PROMPT as SUB_AGENT_PROMPT

SYSTEM_PROMPT = f"""{SUB_AGENT_PROMPT}
- When several calls do not depend on each other's results (reads, searches, tasks for \
explore), make them all in one reply: they run side by side. A call that needs another's \
result goes in a later reply."""

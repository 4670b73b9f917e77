"""Chapter 9's system prompt: chapter 8's, plus when to save a memory, plus the memory index.

The guidance is always there, so a model with no memories yet still knows
when to save one. The index (chapters/ch09/memory.py) follows it when there
is anything to list: names and descriptions only, read once per run, so the
prompt is the same bytes from the first request to the last.
"""

from chapters.ch08.prompt import SYSTEM_PROMPT as COMPACTION_PROMPT

SYSTEM_PROMPT = f"""{COMPACTION_PROMPT}
- Memory outlives this session. When the user states a preference, corrects how you work, or \
tells you a fact to keep for later, save it with memory_write: one memory per topic, never a \
password or a key. A memory is read with memory_read when it bears on the task."""


def with_memory_index(index: str) -> str:
    """The system prompt, and after it the memory index if there is one ("" when none)."""
    return f"{SYSTEM_PROMPT}\n\n{index}" if index else SYSTEM_PROMPT

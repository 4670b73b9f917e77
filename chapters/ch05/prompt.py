"""The system prompt of chapter 5: chapter 2's, plus when and how to keep a plan."""

from chapters.ch02.prompt import SYSTEM_PROMPT as FILE_TOOLS_PROMPT

SYSTEM_PROMPT = f"""{FILE_TOOLS_PROMPT}
- For a task of three or more steps, first call todo_write with the steps, the first one \
in_progress. Each time a step is done, call todo_write with the whole list again: that \
step completed, the next one in_progress. Answer the user when every step is completed."""

"""Chapter 8's system prompt: chapter 7's, plus what the model finds where the harness saved space.

A saved result's view, a stub and a summary each say what they are and where
the full text is. The prompt says it once more, up front, so that a model
reads on in the file instead of running the same tool again to see the rest.
"""

from chapters.ch07.prompt import SYSTEM_PROMPT as PARALLEL_PROMPT

SYSTEM_PROMPT = f"""{PARALLEL_PROMPT}
- A tool result too long to send whole is saved to a file: you see its start, its end and \
the file's path. Read the part you need from that file with read_file (offset, limit) or \
grep; do not run the tool again to see more.
- To keep the context small, the harness replaces old tool results by a short stub and, when \
the context is nearly full, the earlier conversation by a summary. Each names the file that \
holds the full text."""

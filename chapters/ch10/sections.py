"""The system prompt as sections: each with a name, where its text comes from, and a size cap.

A section is plain data, made once per run by the module that knows its
source (chapters/ch10/prompt.py lists them in their fixed order). The prompt
is the sections' texts joined by a blank line; an empty section is left out.
Sizes are characters, because that is what a file and a cap are measured in;
`tokens.py` turns them into an estimate for people.

A text over its cap is cut, at a line break where one is near, with a note
at the cut that says how long it was and what its cap is: the model then knows
that something is missing, and the person reading `tutorial prompt` knows why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

SEPARATOR = "\n\n"
MIN_CAP = 200  # room for a cut note and a little text


def cut(text: str, cap: int, what: str, *, size: str | None = None) -> str:
    """`text` if it fits in `cap` characters; else its start and a note, `cap` characters in all.

    `what` names the text in the note: "this section", "AGENTS.md". `size`: how big the
    whole is, when `text` is only its start (a file read up to a bound: "more than
    24,000 bytes"); the note is then there even if `text` itself would fit.
    """
    if len(text) <= cap and size is None:
        return text
    size = size or f"{len(text):,} characters"
    note = f"[cut: {what} is {size}, over its cap of {cap:,}; the rest is left out]"
    room = max(cap - len(note) - 1, 0)
    kept = text[:room]
    line_break = kept.rfind("\n")
    if line_break >= room // 2:  # end on a whole line unless that loses half the room
        kept = kept[:line_break]
    return f"{kept.rstrip()}\n{note}"


@dataclass(frozen=True)
class Section:
    name: str  # "identity", "tools", ...: what `tutorial prompt` calls it
    source: str  # where the text comes from: a file, a folder, "chapters/ch10/prompt.py"
    cap: int  # characters
    text: str  # as the model reads it, already cut to the cap; "" leaves the section out
    full_size: int  # characters before the cut: more than len(text) when it was cut

    @classmethod
    def capped(cls, name: str, source: str, cap: int, text: str) -> Section:
        """A section whose text is cut to `cap` characters, with a note when it was."""
        if cap < MIN_CAP:
            raise ValueError(f"the cap of {name} is {cap} characters; at least {MIN_CAP}")
        return cls(name, source, cap, cut(text, cap, f"the {name} section"), len(text))

    @property
    def was_cut(self) -> bool:
        return self.full_size > len(self.text)


@dataclass(frozen=True)
class SystemPrompt:
    """The sections of one run's prompt, in order, and what went wrong reading them.

    Built once per run: the agent sends `text` with every request, so the
    provider's prefix cache sees the same bytes from the first request to the last.
    """

    sections: tuple[Section, ...]
    warnings: tuple[str, ...] = ()  # for the person running the agent, never for the model

    @property
    def text(self) -> str:
        return SEPARATOR.join(section.text for section in self.sections if section.text)

    def section(self, name: str) -> Section:
        for section in self.sections:
            if section.name == name:
                return section
        raise KeyError(f"no section named {name!r}; the sections are {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(section.name for section in self.sections)


class SectionSource(Protocol):
    """A section whose text another module owns (chapter 9's memory index, say).

    `source` says where the text comes from, for `tutorial prompt`; `text()` is
    asked once per build and returns "" when there is nothing to say.
    """

    @property
    def source(self) -> str: ...

    def text(self) -> str: ...

"""Front matter: the `---` block that opens an agent definition, in a small subset of YAML.

    ---
    name: reviewer
    description: Reviews a change for bugs and reports file and line.
    tools: read_file, grep          or [read_file, grep], or one "- read_file" per line
    max_turns: 5
    ---
    Everything below the closing line is the body: the agent's system prompt.

Only what agent definitions need is read: one `key: value` per line, where a
value is a plain or quoted string, a list in brackets, or, after an empty
value, `- item` lines below it. Blank lines and `#` comments are skipped.
Anything else (nested maps, multi-line strings, anchors, tags) is an error
that names the line, never a guess: the repository does not take a YAML
library for four keys, and a parser that quietly accepts more than it
understands would read a file differently from the program that wrote it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

Value = str | list[str]
FENCE = "---"
_KEY = re.compile(r"(?P<key>[A-Za-z_][\w-]*):(?:[ \t]+(?P<value>.*))?")
_ITEM = re.compile(r"[ \t]*-(?:[ \t]+(?P<value>.*))?")
_UNSUPPORTED = {
    "|": "multi-line values (| or >) are not supported; write the value on one line",
    ">": "multi-line values (| or >) are not supported; write the value on one line",
    "{": "nested maps ({...}) are not supported",
    "&": "anchors (&) are not supported",
    "*": "aliases (*) are not supported",
    "!": "tags (!) are not supported",
}


class FrontMatterError(ValueError):
    """The front matter does not parse; the message names the line and the problem."""


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Value]  # in the order written
    body: str  # the text after the closing line, stripped


def parse_front_matter(text: str) -> FrontMatter:
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != FENCE:
        raise FrontMatterError("line 1: the file must start with a --- line (the front matter)")
    close = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() == FENCE), None)
    if close is None:
        raise FrontMatterError("the front matter is not closed: no --- line after line 1")
    fields = _fields(lines[1:close], first_number=2)
    return FrontMatter(fields, "\n".join(lines[close + 1 :]).strip())


def _fields(lines: list[str], first_number: int) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    open_list: str | None = None  # the key written last with no value: items may follow
    without_value: set[str] = set()  # keys with no value and (so far) no items
    for number, line in enumerate(lines, first_number):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.fullmatch(line.rstrip())
        if item is not None:
            if open_list is None:
                raise FrontMatterError(f"line {number}: a list item with no key above it")
            items = fields[open_list]
            assert isinstance(items, list)
            items.append(_scalar(item["value"] or "", number))
            without_value.discard(open_list)
            continue
        if line[:1].isspace():
            raise FrontMatterError(
                f"line {number}: an indented line that is not a list item; "
                "nested values are not supported"
            )
        match = _KEY.fullmatch(line.rstrip())
        if match is None:
            raise FrontMatterError(f"line {number}: expected key: value, got {line.strip()!r}")
        key, raw = match["key"], (match["value"] or "").strip()
        if key in fields:
            raise FrontMatterError(f"line {number}: {key} is given twice")
        if raw and not raw.startswith("#"):
            fields[key], open_list = _value(raw, number), None
        else:
            fields[key], open_list = [], key
            without_value.add(key)
    return {key: "" if key in without_value else value for key, value in fields.items()}


def _value(raw: str, number: int) -> Value:
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise FrontMatterError(f"line {number}: a list that starts with [ must end with ]")
        inside = raw[1:-1].strip()
        if not inside:
            return []
        parts = [part.strip() for part in inside.split(",")]
        if any(not part for part in parts):
            raise FrontMatterError(f"line {number}: an empty item in the list")
        return [_scalar(part, number) for part in parts]
    return _scalar(raw, number)


def _scalar(raw: str, number: int) -> str:
    """A plain or quoted string; a plain one ends where a ` #` comment starts."""
    if raw[:1] in _UNSUPPORTED:
        raise FrontMatterError(f"line {number}: {_UNSUPPORTED[raw[0]]}")
    if raw.startswith('"'):
        try:
            value = json.loads(raw)  # YAML's double-quoted escapes are JSON's, for this use
        except json.JSONDecodeError:
            raise FrontMatterError(
                f'line {number}: a string that starts with " must end with "'
            ) from None
        if not isinstance(value, str):
            raise FrontMatterError(f"line {number}: expected one quoted string")
        return value
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'") or "'" in raw[1:-1].replace("''", ""):
            raise FrontMatterError(f"line {number}: a string that starts with ' must end with '")
        return raw[1:-1].replace("''", "'")
    return raw.split(" #", 1)[0].rstrip()

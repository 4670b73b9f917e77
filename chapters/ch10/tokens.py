"""A token estimate that needs no tokenizer: what `tutorial prompt` shows beside each size.

    CJK characters (Chinese, Japanese kana, Korean, full-width punctuation)   1 token each
    every other character (English, code, spaces, newlines)                  4 per token

Real tokenizers differ by model: an English word is often one token, a rare
identifier several, a common Chinese character sometimes less than one. The
estimate is for comparing sections and skills with each other, and for seeing
which one grows; the provider's `usage` field says what a request really cost.
Nothing here is downloaded or loaded: the course takes no tokenizer for a
number that is only ever read as "about".
"""

from __future__ import annotations

import re

CHARS_PER_TOKEN = 4  # English prose and code, roughly
HOW = "estimated: 1 token per CJK character, 1 per 4 other characters"
_CJK = re.compile(
    "["
    "\u1100-\u11ff"  # Hangul jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3000-\u303f"  # CJK symbols and punctuation (、。「」)
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u31ff"  # Bopomofo, Hangul compatibility jamo, ...
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff00-\uffef"  # full-width forms (，：！)
    "\U00020000-\U0003ffff"  # CJK extensions B and later
    "]"
)


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` costs: CJK characters one each, the rest four to a token."""
    cjk = len(_CJK.findall(text))
    rest = len(text) - cjk
    return cjk + -(-rest // CHARS_PER_TOKEN)  # rounded up: a 3-character word is a token

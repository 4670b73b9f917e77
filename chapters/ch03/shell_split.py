"""Split a shell command line into the commands it runs, and say what was not understood.

Why per part: a deny list matched against the whole string is bypassed by
`echo hi && rm -rf x` (the line starts with something harmless and the dangerous
command rides along after `&&`). So the policy decides each part on its own: the
line is cut at `&&`, `||`, `;`, `|`, `&` and newlines; every part must be allowed
for the line to be allowed, and one denied part denies the line.

Why `understood`: the splitter is small on purpose, and what it does not
understand it does not pretend to understand. A construct that can run another
program, write a file, or hide where a command ends sets `understood=False` with
a reason, and the policy never auto-allows such a line (it asks at least). The
parts are still returned, best effort, so that a deny rule can still fire.
Flagged:

    $(...), `...`, $((...))     command substitution, arithmetic expansion
    $[...]                      arithmetic expansion (bash's old spelling)
    <(...), >(...)              process substitution
    <<, <<-, <<<                here-doc, here-string
    { ... }, ( ... )            brace group or PowerShell script block, subshell
    &                           background (a lone `&`: `&&` is a separator)
    >, >>, <, 2>, &>, 2>&1, |&  redirection: it can write a file
    #                           a comment (flagged, not stripped: see below)
    if, for, while, [[, ...     a part that starts with a shell keyword
    $_, $BASH_COMMAND, ...      an expansion that re-reads earlier command text
    an unterminated quote, $'...' (ANSI-C quoting), and every ${...} that is not
    one of the simple forms below

Expansions are understood by an allow-list, not flagged by a list of dangers,
because the dangerous ones hide in corners: `${x@P}` expands a variable as a
prompt string, which runs any `$(...)` inside its value; an array subscript
`${a[...]}`, a substring offset `${x:...}`, `$[...]` and `[[ ... -eq ... ]]` are
arithmetic, and bash's arithmetic expands `$(...)` inside a subscript it meets in
a variable's value; `${!x}` looks a name up indirectly; `$_` holds the last word
of the previous command, text the line itself chose. With those, the harmless
looking `ls '$(rm -rf x)'; ls ${_@P}` runs rm. So only these are understood:

    $NAME  $1  $?  $$  $#  $!  $@  $*  $-      a variable or a special parameter
    ${NAME}  ${#NAME}                          the same, braced; its length
    ${NAME:-word} ${NAME-word} ${NAME:+word} ${NAME+word} ${NAME:?word} ${NAME?word}
    ${NAME#word} ${NAME##word} ${NAME%word} ${NAME%%word}
    ${NAME/word} ${NAME//word} ${NAME^word} ${NAME^^word} ${NAME,word} ${NAME,,word}

where NAME is not one of the names that re-read earlier text, and the word is
checked like the rest of the line (a `$(...)` in it is flagged; quotes and
operators in it make the expansion complex). Anything else after `$` that
starts an expansion is flagged. Glob characters are not flagged: they do not run
other programs.

Quoting follows POSIX shells: single quotes are literal, double quotes allow
backslash escapes, a backslash outside quotes escapes the next character, and a
backslash-newline joins two lines. The same line may instead run in PowerShell
(the chapter 1 shell on Windows), where the backslash is an ordinary character,
the escape is the backtick, and typographic quotes are quotes. Wherever the two
shells would cut the line differently the line is flagged: a backslash before
a character that matters to splitting (`echo a\\;b` is one part in bash and two in
PowerShell), a line continuation, `\\"`, `\\$` inside double quotes, typographic
quotes anywhere, and a PowerShell here-string `@"`. A carriage return cuts like a
newline (PowerShell ends a line there; bash would only see a stranger word).

A comment is flagged rather than stripped: stripping it means trusting that `#`
starts a comment in whichever shell runs the line, while flagging only costs a
question. Its text stays in the part, and separators inside it still cut (more
parts only give deny rules more to match).

Parts are spelled as written (quotes, escapes and redirections kept), only
stripped of surrounding whitespace; empty parts (`ls ;; pwd`, a trailing `;`)
are dropped. Rules match a part exactly as written: `shell(git status)` matches
`git status`, not `git  status`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# After an unquoted backslash: characters whose escaping changes where a line is cut
# in bash but not in PowerShell (there the backslash is literal).
_SPLIT_RELEVANT = frozenset(";&|<>(){}'\"$`#\r")
# After a backslash inside double quotes: the same, for what ends the string or runs code.
_DOUBLE_QUOTE_RELEVANT = frozenset('"$`')
# Inside ${...}: anything here makes the expansion too complex to be sure where it ends.
_COMPLEX_IN_PARAMETER = frozenset("'\"\\;&|<>(){\n\r")
# Characters that end a word, so a `#` right after one starts a comment.
_WORD_BREAKS = frozenset(" \t\n\r;&|<>(){}")
# PowerShell treats these as quotes; bash treats them as letters.
_TYPOGRAPHIC_QUOTES = re.compile("[\u2018\u2019\u201a\u201b\u201c\u201d\u201e]")
_SHELL_KEYWORDS = frozenset(
    {"!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function"}
    | {"if", "select", "then", "time", "until", "while", "[["}
)
# The understood expansions (see the module docstring). A name, a positional or a special
# parameter; braced, then `}` or one of the simple operators (its word follows).
_PARAMETER_NAME = r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?$#!@*-]"
_PLAIN_EXPANSION = re.compile(r"\$(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|[0-9?$#!@*-])")
_BRACED_EXPANSION = re.compile(
    rf"\$\{{(?:#(?P<length>{_PARAMETER_NAME})(?P<closed>\}})"
    rf"|(?P<name>{_PARAMETER_NAME})(?:(?P<end>\}})|(?P<operator>:?[-+?]|##?|%%?|//?|\^\^?|,,?)))"
)
_BRACED_START = re.compile(rf"\$\{{#?(?:{_PARAMETER_NAME})?")
# Variables whose value is earlier text of the command line or of the commands it ran.
_REREADING = frozenset(
    {"_", "BASH_COMMAND", "BASH_EXECUTION_STRING", "BASH_ARGV", "BASH_ARGV0", "BASH_REMATCH"}
)
_REDIRECTION = re.compile(r"&>>?|[<>]&[0-9]*-?|>>|>\||<>|[<>]")
_POWERSHELL_HERE_STRING = re.compile(r"@[\"'][ \t]*[\r\n]")

_DOUBLE, _PARAMETER = '"', "${"  # the nestable contexts; single quotes are read in one go


@dataclass(frozen=True)
class SplitCommand:
    """A command line cut into the commands it runs."""

    parts: tuple[str, ...]  # stripped, empty parts dropped, spelled as written
    understood: bool  # False if any construct listed in the module docstring was seen
    reasons: tuple[str, ...]  # one per kind seen, in order of first appearance


def split_command(command: str) -> SplitCommand:
    """Cut `command` at `&&`, `||`, `;`, `|`, `&` and newlines outside quotes."""
    splitter = _Splitter(command)
    splitter.run()
    reasons = tuple(dict.fromkeys(reason for _, reason in sorted(splitter.found, key=_position)))
    return SplitCommand(tuple(splitter.parts), not reasons, reasons)


def _position(found: tuple[int, str]) -> int:
    return found[0]


class _Splitter:
    """One pass over the text; `contexts` holds the open double quotes and `${`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.parts: list[str] = []
        self.found: list[tuple[int, str]] = []  # (where, reason)
        self._current: list[str] = []
        self._part_start: int | None = None
        self._contexts: list[tuple[str, int]] = []  # (kind, where it opened)
        self._open_parens = 0  # "(" already flagged, so their ")" need no reason
        self._script_block = False  # a `{` or `}` was seen: PowerShell's `$_` may be in it

    def run(self) -> None:
        quote = _TYPOGRAPHIC_QUOTES.search(self.text)
        if quote:
            self.flag(f"typographic quote {quote.group()}", quote.start())
        while self.i < len(self.text):
            context = self._contexts[-1][0] if self._contexts else None
            if context == _DOUBLE:
                self._in_double_quotes()
            elif context == _PARAMETER:
                self._in_parameter()
            else:
                self._outside_quotes()
        self._end_part()
        for kind, where in self._contexts:
            self.flag('unterminated quote "' if kind == _DOUBLE else "unterminated ${...}", where)

    def flag(self, reason: str, where: int | None = None) -> None:
        self.found.append((self.i if where is None else where, reason))

    # --- the three contexts -------------------------------------------------------------

    def _outside_quotes(self) -> None:
        text, i = self.text, self.i
        char, after = text[i], text[i + 1 : i + 2]
        if char == "\\":
            self._backslash_outside(after)
        elif char == "'":
            self._single_quote()
        elif char == '"':
            self._contexts.append((_DOUBLE, i))
            self._take(1)
        elif char == "$" and after == "'":
            self._ansi_c_quote()
        elif char == "$":
            self._dollar()
        elif char == "`":
            self._backtick()
        elif char in ";\n\r":
            self._separator(1)
        elif char == "|":
            if after == "&":
                self.flag("redirection |&")
            self._separator(2 if after and after in "|&" else 1)
        elif char == "&":
            if after == "&":
                self._separator(2)
            elif after == ">":
                self._redirection()
            else:
                self.flag("background &")
                self._separator(1)
        elif char in "<>":
            self._redirection()
        elif char in "{}":
            self.flag("brace group or script block { ... }")
            self._script_block = True
            self._take(1)
        elif char == "(":
            self.flag("subshell or grouping ( ... )")
            self._open_parens += 1
            self._take(1)
        elif char == ")":
            self._close_paren(flag_if_unopened=True)
        elif char == "#" and (i == 0 or text[i - 1] in _WORD_BREAKS):
            self.flag("comment #")
            self._take(1)
        elif char == "@" and _POWERSHELL_HERE_STRING.match(text, i):
            self.flag(f"PowerShell here-string @{after}")
            self._take(1)
        else:
            self._take(1)

    def _in_double_quotes(self) -> None:
        char, after = self.text[self.i], self.text[self.i + 1 : self.i + 2]
        if char == '"':
            self._contexts.pop()
            self._take(1)
        elif char == "\\":
            if after in _DOUBLE_QUOTE_RELEVANT:
                self.flag(f"backslash escape \\{after} inside double quotes")
            self._take(2)
        elif char == "$":
            self._dollar()
        elif char == "`":
            self._backtick()
        elif char == ")":
            self._close_paren(flag_if_unopened=False)
        else:
            self._take(1)

    def _in_parameter(self) -> None:
        char = self.text[self.i]
        if char == "}":
            self._contexts.pop()
            self._take(1)
        elif char == "$":
            self._dollar()
        elif char == "`":
            self._backtick()
        elif char == ")" and self._open_parens:
            self._close_paren(flag_if_unopened=False)
        elif char in _COMPLEX_IN_PARAMETER:
            self.flag("complex parameter expansion ${...}")
            if char == "'":
                self._single_quote()
            elif char == '"':
                self._contexts.append((_DOUBLE, self.i))
                self._take(1)
            else:
                self._take(2 if char == "\\" else 1)
        else:
            self._take(1)

    # --- constructs ---------------------------------------------------------------------

    def _backslash_outside(self, after: str) -> None:
        if after == "\n":
            self.flag("line continuation \\<newline>")
            self.i += 2  # joined, as bash does: the part reads as one line
            return
        if after == "\r":
            self.flag("backslash escape \\ before a carriage return")
        elif after in _SPLIT_RELEVANT:
            self.flag(f"backslash escape \\{after}")
        self._take(2)

    def _single_quote(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end == -1:
            self.flag("unterminated quote '")
            self._take(len(self.text) - self.i)
        else:
            self._take(end + 1 - self.i)

    def _ansi_c_quote(self) -> None:
        """`$'...'`: bash reads backslash escapes inside it, PowerShell does not."""
        self.flag("ANSI-C quoting $'...'")
        end = self.i + 2
        while end < len(self.text) and self.text[end] != "'":
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            self.flag("unterminated $'...'")
        self._take(end + 1 - self.i)

    def _dollar(self) -> None:
        if self.text.startswith("$((", self.i):
            self.flag("arithmetic expansion $((...))")
            self._open_parens += 2
            self._take(3)
        elif self.text.startswith("$(", self.i):
            self.flag("command substitution $(...)")
            self._open_parens += 1
            self._take(2)
        elif self.text.startswith("${", self.i):
            self._braced()
        elif self.text.startswith("$[", self.i):
            self.flag("arithmetic expansion $[...]")
            self._take(2)
        elif plain := _PLAIN_EXPANSION.match(self.text, self.i):
            self._rereading(plain["name"], plain.group())
            self._take(len(plain.group()))  # $VAR, $?, $$: an expansion, not a program
        else:
            self._take(1)  # a `$` that starts no expansion is a dollar sign

    def _braced(self) -> None:
        """`${...}`: understood only in the simple forms of the module docstring."""
        match = _BRACED_EXPANSION.match(self.text, self.i)
        if match is None:
            start = _BRACED_START.match(self.text, self.i)
            if start is None or start.end() < len(self.text):  # at the end: unterminated
                self.flag("complex parameter expansion ${...}")
            self._contexts.append((_PARAMETER, self.i))
            self._take(2)  # read on to its `}` as before, so the parts stay where they were
            return
        name = match["length"] or match["name"]
        self._rereading(name, f"${{{name}}}")
        if match["operator"]:  # its word follows: read in the ${ context up to the `}`
            self._contexts.append((_PARAMETER, self.i))
        self._take(len(match.group()))

    def _rereading(self, name: str | None, shown: str) -> None:
        """Flag an expansion of text the line itself put there (`$_`, `$BASH_COMMAND`).

        Inside a PowerShell script block (already flagged) `$_` is the pipeline item,
        so it gets no reason of its own there.
        """
        if name in _REREADING and not (name == "_" and self._script_block):
            self.flag(f"expansion of earlier command text {shown}")

    def _backtick(self) -> None:
        self.flag("command substitution `...`")
        self._take(1)

    def _close_paren(self, *, flag_if_unopened: bool) -> None:
        if self._open_parens:
            self._open_parens -= 1
        elif flag_if_unopened:
            self.flag("subshell or grouping ( ... )")
        self._take(1)

    def _redirection(self) -> None:
        text, i = self.text, self.i
        for opener, reason in (
            ("<(", "process substitution <(...)"),
            (">(", "process substitution >(...)"),
            ("<<<", "here-string <<<"),
            ("<<-", "here-doc <<-"),
            ("<<", "here-doc <<"),
        ):
            if text.startswith(opener, i):
                self.flag(reason)
                self._open_parens += opener.count("(")
                self._take(len(opener))
                return
        match = _REDIRECTION.match(text, i)
        operator = match.group() if match else text[i]
        start = i
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        if start == i or (start > 0 and text[start - 1] not in _WORD_BREAKS):
            start = i  # digits glued to a word are not a file descriptor: `a2>x`
        self.flag(f"redirection {text[start:i]}{operator}", start)
        self._take(len(operator))

    # --- building parts -----------------------------------------------------------------

    def _take(self, count: int) -> None:
        chunk = self.text[self.i : self.i + count]
        if self._part_start is None and chunk.strip():
            self._part_start = self.i
        self._current.append(chunk)
        self.i += len(chunk)

    def _separator(self, length: int) -> None:
        self._end_part()
        self.i += length

    def _end_part(self) -> None:
        part = "".join(self._current).strip()
        if part:
            first_word = part.split(maxsplit=1)[0]
            if first_word in _SHELL_KEYWORDS and self._part_start is not None:
                self.flag(f"shell keyword {first_word}", self._part_start)
            self.parts.append(part)
        self._current = []
        self._part_start = None

"""The shell splitter: commands cut where the shell cuts them, and nothing unknown passes as known.

Named cases first (separators, quoting, every construct that must be flagged, the
places where bash and PowerShell would cut a line differently), then property
tests (hypothesis): commands built from random words and separators split back
into their words, quoted separators never cut, and no text makes the splitter raise.
"""

from __future__ import annotations

import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapters.ch03.shell_split import SplitCommand, split_command

PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, database=None)
SEPARATORS = ["&&", "||", ";", "|", "\n"]
# Words that start a compound command in bash; the splitter flags a part that starts with one.
BASH_KEYWORDS = frozenset(
    {"!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function"}
    | {"if", "select", "then", "time", "until", "while"}
)


def understood(*parts: str) -> SplitCommand:
    return SplitCommand(parts, True, ())


def flagged(parts: tuple[str, ...], *reasons: str) -> SplitCommand:
    return SplitCommand(parts, False, reasons)


# --- plain commands and separators -----------------------------------------------------


def test_a_simple_command_is_one_understood_part() -> None:
    assert split_command("git status") == understood("git status")


def test_a_part_is_stripped_but_otherwise_spelled_as_written() -> None:
    assert split_command("  git   status  ") == understood("git   status")
    assert split_command("\tls -la\n") == understood("ls -la")


def test_a_blank_command_has_no_parts() -> None:
    assert split_command("") == understood()
    assert split_command("   \n\t ") == understood()


@pytest.mark.parametrize("separator", SEPARATORS)
def test_each_separator_cuts_the_command_in_two(separator: str) -> None:
    assert split_command(f"ls -la {separator} pwd") == understood("ls -la", "pwd")
    assert split_command(f"ls{separator}pwd") == understood("ls", "pwd")


def test_mixed_separators_cut_in_order() -> None:
    command = "make && make test || echo failed; git status | head -n 5\npwd"
    assert split_command(command) == understood(
        "make", "make test", "echo failed", "git status", "head -n 5", "pwd"
    )


def test_the_classic_bypass_is_two_parts_so_the_second_can_be_denied() -> None:
    assert split_command("echo hi && rm -rf x") == understood("echo hi", "rm -rf x")


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("ls ;; pwd", ("ls", "pwd")),
        ("; ls", ("ls",)),
        ("ls ;", ("ls",)),
        ("ls &&", ("ls",)),
        ("ls |", ("ls",)),
        ("\n\nls\n\n", ("ls",)),
        ("ls ; ; && pwd", ("ls", "pwd")),
    ],
)
def test_empty_and_trailing_parts_are_dropped(command: str, parts: tuple[str, ...]) -> None:
    assert split_command(command) == understood(*parts)


# --- quoting -----------------------------------------------------------------------------


@pytest.mark.parametrize("separator", [*SEPARATORS, "&"])
def test_a_separator_inside_single_quotes_does_not_cut(separator: str) -> None:
    command = f"echo 'a {separator} b'"
    assert split_command(command) == understood(command)


@pytest.mark.parametrize("separator", [*SEPARATORS, "&"])
def test_a_separator_inside_double_quotes_does_not_cut(separator: str) -> None:
    command = f'echo "a {separator} b"'
    assert split_command(command) == understood(command)


def test_quoted_and_real_separators_side_by_side() -> None:
    assert split_command("echo 'a;b' ; ls") == understood("echo 'a;b'", "ls")
    assert split_command('echo "a && b" && ls') == understood('echo "a && b"', "ls")
    assert split_command("""echo "it's" | tr a b""") == understood('''echo "it's"''', "tr a b")


def test_an_escaped_quote_inside_double_quotes_keeps_the_string_open() -> None:
    # bash: one string; PowerShell (where \\ is literal) would end it early, so flagged.
    assert split_command(r'echo "a \" ; b" ; ls') == flagged(
        (r'echo "a \" ; b"', "ls"), r"backslash escape \" inside double quotes"
    )


def test_an_escaped_separator_is_one_part_and_flagged() -> None:
    # One part in bash; PowerShell keeps the backslash and cuts at the ;.
    assert split_command(r"echo a\;b") == flagged((r"echo a\;b",), r"backslash escape \;")
    assert split_command(r"echo a\&\&b") == flagged((r"echo a\&\&b",), r"backslash escape \&")


def test_a_backslash_before_an_ordinary_character_is_understood() -> None:
    assert split_command(r"ls my\ file.txt") == understood(r"ls my\ file.txt")
    assert split_command(r"dir C:\Users\me\src") == understood(r"dir C:\Users\me\src")
    assert split_command("echo \\") == understood("echo \\")


def test_single_quotes_are_literal_even_for_a_backslash() -> None:
    assert split_command(r"echo 'a\' ; ls") == understood(r"echo 'a\'", "ls")


def test_a_line_continuation_joins_the_lines_and_is_flagged() -> None:
    # PowerShell does not continue a line with a backslash: it would run two commands.
    assert split_command("git log \\\n--oneline && pwd") == flagged(
        ("git log --oneline", "pwd"), "line continuation \\<newline>"
    )


@pytest.mark.parametrize(
    ("command", "parts", "reason"),
    [
        ('echo "a ; b', ('echo "a ; b',), 'unterminated quote "'),
        ("ls; echo 'a && b", ("ls", "echo 'a && b"), "unterminated quote '"),
        ("ls; echo ${HOME", ("ls", "echo ${HOME"), "unterminated ${...}"),
    ],
)
def test_an_unterminated_quote_is_flagged_with_best_effort_parts(
    command: str, parts: tuple[str, ...], reason: str
) -> None:
    assert split_command(command) == flagged(parts, reason)


# --- what is fine: expansions and globs ------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo $HOME $? $$ $1",
        "echo ${USER} ${x:-default} ${#name} ${path%/*}",
        'echo "$HOME and ${USER}"',
        "ls *.py file?.txt [ab].c ~/src",
        "echo a#b $#",
        "echo if then fi",  # keywords only count at the start of a part
        "echo '$(x)' '`x`' '<(x)' '{ x; }' '(x)' 'a & b' 'a > b' '# x'",
    ],
)
def test_expansions_globs_and_quoted_text_are_understood(command: str) -> None:
    assert split_command(command) == understood(command)


# --- what is not understood --------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo $(whoami)", "command substitution $(...)"),
        ("echo `whoami`", "command substitution `...`"),
        ("echo $((1 + 2))", "arithmetic expansion $((...))"),
        ("diff <(ls a) b", "process substitution <(...)"),
        ("tee >(wc -l) x", "process substitution >(...)"),
        ("cat <<EOF", "here-doc <<"),
        ("cat <<-EOF", "here-doc <<-"),
        ("cat <<< hello", "here-string <<<"),
        ("{ ls; }", "brace group or script block { ... }"),
        ("(cd src; ls)", "subshell or grouping ( ... )"),
        ("sleep 10 &", "background &"),
        ("echo x > out.txt", "redirection >"),
        ("echo x >> out.txt", "redirection >>"),
        ("wc -l < in.txt", "redirection <"),
        ("ls 2> err.txt", "redirection 2>"),
        ("ls &> all.txt", "redirection &>"),
        ("ls 2>&1", "redirection 2>&1"),
        ("ls >&2", "redirection >&2"),
        ("ls # a note", "comment #"),
        ("if true", "shell keyword if"),
        ("for f in *", "shell keyword for"),
        ("echo $'a\\tb'", "ANSI-C quoting $'...'"),
        ("echo ${x//;/,}", "complex parameter expansion ${...}"),
        ('echo "\\$HOME"', "backslash escape \\$ inside double quotes"),
        ("echo \u2018a\u2019", "typographic quote \u2018"),
        ("$x = @'\nhi\n'@", "PowerShell here-string @'"),
    ],
)
def test_each_construct_it_does_not_understand_is_flagged(command: str, reason: str) -> None:
    result = split_command(command)
    assert result.understood is False
    assert result.reasons == (reason,)
    assert result.parts  # best-effort parts are still there for deny rules


def test_a_substitution_inside_double_quotes_still_runs_so_it_is_flagged() -> None:
    assert split_command('echo "$(rm -rf x)"') == flagged(
        ('echo "$(rm -rf x)"',), "command substitution $(...)"
    )
    assert split_command('echo "`rm -rf x`"') == flagged(
        ('echo "`rm -rf x`"',), "command substitution `...`"
    )
    assert split_command('echo "${x:-$(id)}"').reasons == ("command substitution $(...)",)


def test_a_lone_ampersand_cuts_and_is_flagged_a_double_one_only_cuts() -> None:
    assert split_command("make & rm -rf x") == flagged(("make", "rm -rf x"), "background &")
    assert split_command("make && rm -rf x") == understood("make", "rm -rf x")
    assert split_command("make &&& ls") == flagged(("make", "ls"), "background &")


def test_a_pipe_that_carries_stderr_cuts_and_is_flagged_as_a_redirection() -> None:
    assert split_command("make |& tee log") == flagged(("make", "tee log"), "redirection |&")
    assert split_command("make || tee log") == understood("make", "tee log")


def test_a_redirection_stays_in_its_part() -> None:
    assert split_command("ls > out.txt 2>&1 && cat out.txt") == flagged(
        ("ls > out.txt 2>&1", "cat out.txt"), "redirection >", "redirection 2>&1"
    )


def test_a_here_doc_body_becomes_parts_so_deny_rules_still_see_it() -> None:
    assert split_command("cat <<EOF > x.sh\nrm -rf /\nEOF") == flagged(
        ("cat <<EOF > x.sh", "rm -rf /", "EOF"), "here-doc <<", "redirection >"
    )


def test_a_brace_group_is_flagged() -> None:
    assert split_command("{ ls; pwd; } > out") == flagged(
        ("{ ls", "pwd", "} > out"), "brace group or script block { ... }", "redirection >"
    )


def test_a_subshell_is_flagged() -> None:
    assert split_command("(cd src && rm -rf build)") == flagged(
        ("(cd src", "rm -rf build)"), "subshell or grouping ( ... )"
    )


def test_a_powershell_script_block_is_flagged() -> None:
    assert split_command("Get-ChildItem | ForEach-Object { $_.Name }") == flagged(
        ("Get-ChildItem", "ForEach-Object { $_.Name }"), "brace group or script block { ... }"
    )


def test_a_comment_is_flagged_not_stripped() -> None:
    assert split_command("ls # list && rm -rf x") == flagged(("ls # list", "rm -rf x"), "comment #")


def test_a_compound_command_is_flagged_by_its_keywords() -> None:
    assert split_command("if true; then rm -rf x; fi") == flagged(
        ("if true", "then rm -rf x", "fi"),
        "shell keyword if",
        "shell keyword then",
        "shell keyword fi",
    )
    assert split_command('"if" x').understood  # a quoted keyword is a plain word


def test_reasons_are_one_per_kind_in_order_of_first_appearance() -> None:
    result = split_command("a > x; b $(c) > y 2>&1; d $(e) &")
    assert result.reasons == (
        "redirection >",
        "command substitution $(...)",
        "redirection 2>&1",
        "background &",
    )


# --- expansions: an allow-list (issue 11) -------------------------------------------------


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        # The five shapes that ran `rm` with only `shell(ls:*)` allowed and `shell(rm:*)` denied.
        ("ls '$(rm -rf victim)'; ls ${_@P}", "complex parameter expansion ${...}"),
        ("ls '$(rm -rf victim)'; ls \"${_@P}\"", "complex parameter expansion ${...}"),
        ("ls 'x[$(rm -rf victim)]'; ls $[_]", "arithmetic expansion $[...]"),
        ("ls 'x[$(rm -rf victim)]'; ls ${a[_]}", "complex parameter expansion ${...}"),
        ("ls '$(rm -rf victim)' ${BASH_COMMAND@P}", "complex parameter expansion ${...}"),
        # Their relatives: transformations, subscripts, indirection, substrings, assignment.
        ("echo ${x@Q}", "complex parameter expansion ${...}"),
        ("echo ${x[0]}", "complex parameter expansion ${...}"),
        ("echo ${!x}", "complex parameter expansion ${...}"),
        ("echo ${!x*}", "complex parameter expansion ${...}"),
        ("echo ${x:1}", "complex parameter expansion ${...}"),
        ("echo ${x: -1}", "complex parameter expansion ${...}"),
        ("echo ${x:_:1}", "complex parameter expansion ${...}"),
        ("echo ${x:=y}", "complex parameter expansion ${...}"),
        ("echo ${x=y}", "complex parameter expansion ${...}"),
        ("echo ${x:-${y@P}}", "complex parameter expansion ${...}"),
        ("echo $[1 + 2]", "arithmetic expansion $[...]"),
        ("[[ $x -eq 1 ]]", "shell keyword [["),
        # Expansions of text the line itself put there.
        ("ls x; echo $_", "expansion of earlier command text $_"),
        ("ls x; echo ${_}", "expansion of earlier command text ${_}"),
        ("ls x; echo ${#_}", "expansion of earlier command text ${_}"),
        ("echo $BASH_COMMAND", "expansion of earlier command text $BASH_COMMAND"),
        (
            'echo "${BASH_EXECUTION_STRING}"',
            "expansion of earlier command text ${BASH_EXECUTION_STRING}",
        ),
    ],
)
def test_expansions_that_can_run_code_or_reread_the_line_are_not_understood(
    command: str, reason: str
) -> None:
    result = split_command(command)
    assert result.understood is False
    assert result.reasons == (reason,)


@pytest.mark.parametrize(
    "command",
    [
        "echo ${x-default} ${x:+alt} ${x+alt} ${x:?unset} ${x?unset}",
        "echo ${path#*/} ${path##*/} ${path%.py} ${name/a/b} ${name//a/b}",
        "echo ${name^} ${name^^} ${name,} ${name,,} ${#} ${?} ${10} ${@} ${*}",
        "echo $_private $x_ $$ $! $- $* $@ $0 $ cost$",
        'echo "${x:-a ${y} $z}"',
    ],
)
def test_the_simple_expansions_stay_understood(command: str) -> None:
    assert split_command(command) == understood(command)


# --- where bash and PowerShell would cut differently ------------------------------------

ANSI_C_BYPASS = r"echo $'\'' ; rm -rf x ; echo '$'\'''"


@pytest.mark.parametrize(
    "command",
    [
        # bash runs rm -rf x ($'\'' is one quote); without ANSI-C quoting it reads as quoted.
        ANSI_C_BYPASS,
        # PowerShell: \" does not escape, so "; rm x ;" is outside the string there.
        'echo "a\\" ; rm x ; echo ""\\""',
        # PowerShell: a typographic quote closes a single-quoted string.
        "echo 'a\u2019 ; rm x ; \u2019'",
        # PowerShell: a carriage return ends a line; bash keeps an escaped one in the word.
        "ls \\\rrm -rf x",
        # PowerShell: \$ is a backslash and then a subexpression that runs.
        "echo \\$(rm x)",
    ],
)
def test_a_line_two_shells_would_cut_differently_is_flagged(command: str) -> None:
    assert split_command(command).understood is False


def test_ansi_c_quoting_is_read_as_bash_reads_it() -> None:
    assert "rm -rf x" in split_command(ANSI_C_BYPASS).parts


# --- properties ----------------------------------------------------------------------------

plain_words = st.text(string.ascii_letters + string.digits, min_size=1, max_size=8).filter(
    lambda word: word not in BASH_KEYWORDS
)
padding = st.sampled_from(["", " ", "  ", "\t"])


def _groups(words: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.lists(words, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=6)


@PROPERTY_SETTINGS
@given(groups=_groups(plain_words), data=st.data())
def test_words_joined_by_separators_split_back_into_their_groups(
    groups: list[str], data: st.DataObject
) -> None:
    command = groups[0]
    for group in groups[1:]:
        separator = data.draw(st.sampled_from(SEPARATORS))
        command += data.draw(padding) + separator + data.draw(padding) + group
    assert split_command(command) == understood(*groups)


# Quoted text may hold any separator or operator; it must never cut or be flagged.
_inside = string.ascii_letters + " ;&|<>(){}#*\n\t"
single_quoted = st.text(_inside + '"$`\\', max_size=10).map(lambda text: f"'{text}'")
double_quoted = st.text(_inside + "'", max_size=10).map(lambda text: f'"{text}"')


@PROPERTY_SETTINGS
@given(
    groups=_groups(st.one_of(plain_words, single_quoted, double_quoted)),
    separators=st.lists(st.sampled_from(SEPARATORS), min_size=5, max_size=5),
)
def test_separators_inside_quotes_never_cut(groups: list[str], separators: list[str]) -> None:
    command = groups[0] + "".join(
        f" {separator} {group}" for separator, group in zip(separators, groups[1:], strict=False)
    )
    assert split_command(command) == understood(*groups)


@PROPERTY_SETTINGS
@given(st.text())
def test_any_text_splits_without_raising_into_clean_parts(command: str) -> None:
    result = split_command(command)
    assert all(part and part == part.strip() for part in result.parts)
    assert result.understood == (not result.reasons)
    assert len(set(result.reasons)) == len(result.reasons)


# --- what "understood" means, checked against bash itself ------------------------------------

# Every variable bash will read holds text that runs `touch pwned` if anything re-evaluates it.
BAIT = (
    "x='a[$(touch pwned)]'; HOME='$(touch pwned)'; a=(1); set -- 'a[$(touch pwned)]'; "
    "ls 'x[$(touch pwned)]' >/dev/null 2>&1; "
)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    ("expansion", "runs"),
    [
        *[
            (form, False)
            for form in [
                "$x", "${x}", "${#x}", "$HOME", "$1", "${1}", "$@", '"$@"', "$*", "${#}",
                "${x:-$HOME}", "${x-d}", "${x:+$x}", "${x:?m}", "${x#a}", "${x##*[}",
                "${x%]}", "${x%%a*}", "${x/a/b}", "${x//[/]}", "${x^}", "${x^^}", "${x,,}",
                "${HOME:-${x}}", '"${x:-$1}"',
            ]
        ],
        # The other side, so this test can see a command run: these are flagged.
        ("${x@P}", True), ("${_@P}", True), ("$[_]", True), ("${a[_]}", True),
        ("$((x))", True), ("${x:_:1}", True), ("${!1}", True),
    ],
)  # fmt: skip
def test_understood_expansions_run_nothing_hidden_in_values_and_flagged_ones_can(
    tmp_path: Path, expansion: str, runs: bool
) -> None:
    assert split_command(f"echo {expansion}").understood is not runs
    subprocess.run(
        ["bash", "-c", BAIT + f": {expansion}"], cwd=tmp_path, capture_output=True, check=False,
        timeout=30,
    )  # fmt: skip
    assert (tmp_path / "pwned").exists() is runs

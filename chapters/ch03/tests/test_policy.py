"""The policy: precedence, modes, per-part shell decisions, rule syntax, where rules come from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import Workspace
from chapters.ch03.policy import Call, Mode, Policy
from chapters.ch03.rules import Rule, RuleError, exact_rule
from chapters.ch03.settings import load_policy
from shared.decisions import Decision
from shared.errors import ConfigError
from shared.tools import KeyKind, SideEffect, Tool

# Chapter 2's tools say which argument a rule matches; nothing here runs them.
TOOLS = make_tools(Workspace(Path(__file__).parent))


def tool(name: str) -> Tool:
    return TOOLS[name]


def rules(*texts: str, source: str = "test") -> list[Rule]:
    return [Rule.parse(text, source, TOOLS) for text in texts]


def call(policy: Policy, name: str, key: str) -> Call:
    argument = tool(name).key
    assert argument is not None
    return policy.call(tool(name), {argument.name: key})


def decide(policy: Policy, name: str, key: str) -> Decision:
    return policy.decide(call(policy, name, key)).decision


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "ws").mkdir()
    return Workspace(tmp_path / "ws")


# -- precedence --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deny", "ask", "allow", "expected"),
    [
        (["shell(git push:*)"], ["shell(git push:*)"], ["shell(git push:*)"], Decision.DENY),
        ([], ["shell(git push:*)"], ["shell(git push:*)"], Decision.ASK),
        ([], [], ["shell(git push:*)"], Decision.ALLOW),
        (["shell"], [], ["shell(git push origin main)"], Decision.DENY),
        ([], ["shell"], ["shell(git push origin main)"], Decision.ASK),
        ([], [], [], Decision.ASK),  # nothing has an opinion: ask
    ],
)
def test_deny_beats_ask_beats_allow(
    workspace: Workspace, deny: list[str], ask: list[str], allow: list[str], expected: Decision
) -> None:
    policy = Policy(workspace, deny=rules(*deny), ask=rules(*ask), allow=rules(*allow))
    assert decide(policy, "shell", "git push origin main") is expected


def test_precedence_holds_across_files_and_flags(workspace: Workspace, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_settings(workspace.root, {"allow": ["shell(git push:*)", "read_file"]})
    write_settings(home, {"ask": ["shell(git push:*)"], "deny": ["read_file(secrets/**)"]})
    policy = load_policy(workspace, home, known_tools=TOOLS, allow=["write_file(docs/**)"])

    verdict = policy.decide(call(policy, "shell", "git push"))
    assert verdict.decision is Decision.ASK  # the user's ask beats the project's allow
    assert verdict.source == "rule shell(git push:*) from ~/.tutorial/settings.json"
    assert decide(policy, "read_file", "secrets/key.txt") is Decision.DENY
    assert decide(policy, "read_file", "README.md") is Decision.ALLOW
    assert decide(policy, "write_file", "docs/a.md") is Decision.ALLOW  # from the flag

    flagged = load_policy(workspace, home, known_tools=TOOLS, deny=["shell(git:*)"])
    verdict = flagged.decide(call(flagged, "shell", "git push"))
    assert (verdict.decision, verdict.source) == (Decision.DENY, "rule shell(git:*) from --deny")


# -- modes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "read", "write", "execute"),
    [
        (Mode.DEFAULT, Decision.ALLOW, Decision.ASK, Decision.ASK),
        (Mode.ACCEPT_EDITS, Decision.ALLOW, Decision.ALLOW, Decision.ASK),
        (Mode.PLAN, Decision.ALLOW, Decision.DENY, Decision.DENY),
        (Mode.BYPASS, Decision.ALLOW, Decision.ALLOW, Decision.ALLOW),
    ],
)
def test_each_mode(
    workspace: Workspace, mode: Mode, read: Decision, write: Decision, execute: Decision
) -> None:
    policy = Policy(workspace, mode)
    assert decide(policy, "read_file", "a.txt") is read
    assert decide(policy, "grep", ".") is read
    assert decide(policy, "write_file", "a.txt") is write
    assert decide(policy, "shell", "make") is execute


def test_plan_mode_denies_even_what_an_allow_rule_allows(workspace: Workspace) -> None:
    policy = Policy(workspace, Mode.PLAN, allow=rules("shell(git status)", "write_file"))
    verdict = policy.decide(call(policy, "shell", "git status"))
    assert (verdict.decision, verdict.source) == (Decision.DENY, "mode plan (read-only)")
    assert decide(policy, "write_file", "a.txt") is Decision.DENY


def test_a_deny_rule_wins_in_bypass_mode(workspace: Workspace) -> None:
    policy = Policy(workspace, Mode.BYPASS, deny=rules("shell(rm:*)", "read_file(.env)"))
    assert decide(policy, "shell", "rm -rf build") is Decision.DENY
    assert decide(policy, "read_file", ".env") is Decision.DENY
    assert decide(policy, "shell", "make") is Decision.ALLOW


def test_bypass_ignores_ask_rules(workspace: Workspace) -> None:
    policy = Policy(workspace, Mode.BYPASS, ask=rules("shell(git push:*)"))
    assert decide(policy, "shell", "git push") is Decision.ALLOW


def test_mode_defaults_come_from_settings_and_the_flag_wins(
    workspace: Workspace, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    write_settings(home, {"defaultMode": "bypass"})
    assert load_policy(workspace, home, known_tools=TOOLS).mode is Mode.BYPASS
    write_settings(workspace.root, {"defaultMode": "plan"})
    assert load_policy(workspace, home, known_tools=TOOLS).mode is Mode.PLAN
    flagged = load_policy(workspace, home, known_tools=TOOLS, mode=Mode.ACCEPT_EDITS)
    assert flagged.mode is Mode.ACCEPT_EDITS


# -- shell commands, part by part ---------------------------------------------------------------


def test_every_part_must_be_allowed(workspace: Workspace) -> None:
    policy = Policy(workspace, allow=rules("shell(echo:*)", "shell(git status)"))
    assert decide(policy, "shell", "echo hi && git status") is Decision.ALLOW
    assert decide(policy, "shell", "echo hi && rm -rf x") is Decision.ASK
    verdict = policy.decide(call(policy, "shell", "echo a; ls"))
    assert verdict.source == "not every part is allowed: no allow rule for 'ls'"


def test_any_denied_part_denies_the_whole(workspace: Workspace) -> None:
    policy = Policy(workspace, deny=rules("shell(rm:*)"), allow=rules("shell(echo:*)"))
    assert decide(policy, "shell", "echo hi; rm -rf x") is Decision.DENY
    assert decide(policy, "shell", "echo hi | rm -rf x") is Decision.DENY


def test_what_the_splitter_does_not_understand_is_never_auto_allowed(workspace: Workspace) -> None:
    policy = Policy(workspace, allow=rules("shell(echo:*)", "shell"))
    for command in ["echo $(rm -rf x)", "echo `id`", "echo hi > notes.txt", "cat <<EOF"]:
        verdict = policy.decide(call(policy, "shell", command))
        assert verdict.decision is Decision.ASK, command
        assert verdict.source.startswith("not fully understood"), command


def test_a_quoted_separator_does_not_split(workspace: Workspace) -> None:
    policy = Policy(workspace, allow=rules("shell(echo:*)"))
    assert decide(policy, "shell", 'echo "a && b"') is Decision.ALLOW


def test_prefix_rules_match_whole_words(workspace: Workspace) -> None:
    policy = Policy(workspace, allow=rules("shell(git diff:*)"))
    assert decide(policy, "shell", "git diff") is Decision.ALLOW
    assert decide(policy, "shell", "git diff --stat") is Decision.ALLOW
    assert decide(policy, "shell", "git difftool") is Decision.ASK


def test_an_exact_rule_matches_only_that_command(workspace: Workspace) -> None:
    policy = Policy(workspace, allow=rules("shell(git status)"))
    assert decide(policy, "shell", "git status") is Decision.ALLOW
    assert decide(policy, "shell", "git status --short") is Decision.ASK


# -- file rules -------------------------------------------------------------------------------


def test_file_rules_use_gitignore_globs_on_the_workspace_relative_path(
    workspace: Workspace,
) -> None:
    policy = Policy(
        workspace, Mode.ACCEPT_EDITS, deny=rules("write_file(.env)", "read_file(secrets/**)")
    )
    assert decide(policy, "write_file", ".env") is Decision.DENY
    assert decide(policy, "write_file", "config/.env") is Decision.DENY  # gitignore: any depth
    assert decide(policy, "write_file", ".env.example") is Decision.ALLOW
    assert decide(policy, "read_file", "secrets/a/b.txt") is Decision.DENY
    assert decide(policy, "read_file", "./secrets/../secrets/b.txt") is Decision.DENY  # normalised
    assert decide(policy, "read_file", "docs/secrets.md") is Decision.ALLOW


def test_always_adds_an_exact_rule_for_this_run(workspace: Workspace) -> None:
    policy = Policy(workspace, ask=rules("write_file"))
    the_call = call(policy, "write_file", "a.py")
    assert policy.decide(the_call).decision is Decision.ASK
    rule = policy.always_allow(the_call)
    assert rule.text == "write_file(/a.py)"
    assert (
        policy.decide(the_call).decision is Decision.ALLOW
    )  # the human's answer beats the ask rule
    assert decide(policy, "write_file", "sub/a.py") is Decision.ASK  # exact: not any a.py


def test_always_for_a_compound_command_covers_exactly_that_command(workspace: Workspace) -> None:
    policy = Policy(workspace)
    the_call = call(policy, "shell", "make && make test")
    policy.always_allow(the_call)
    assert policy.decide(the_call).decision is Decision.ALLOW
    assert decide(policy, "shell", "make") is Decision.ASK


def test_an_error_inside_the_policy_denies(workspace: Workspace) -> None:
    class Broken(Rule):
        def matches(self, tool: str, key: str | None) -> bool:
            raise RuntimeError("matcher exploded")

    policy = Policy(workspace, deny=[Broken("x", "shell", None, "test")])
    verdict = policy.decide(call(policy, "shell", "ls"))
    assert verdict.decision is Decision.DENY
    assert verdict.source.startswith("policy error") and "matcher exploded" in verdict.source


# -- rule syntax ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "spec"),
    [
        ("shell", "shell", None),
        ("shell(git status)", "shell", "git status"),
        ("shell(git diff:*)", "shell", "git diff:*"),
        (" read_file( secrets/** ) ", "read_file", "secrets/**"),
    ],
)
def test_rules_parse(text: str, tool: str, spec: str | None) -> None:
    rule = Rule.parse(text, "test", TOOLS)
    assert (rule.tool, rule.spec) == (tool, spec)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("shell(git status", "is not a rule"),
        ("Bash(ls)", "names no known tool"),
        ("shell()", "empty spec"),
        ("shell(:*)", "empty prefix"),
        ("", "is not a rule"),
    ],
)
def test_bad_rules_are_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(RuleError, match=problem):
        Rule.parse(text, "test", TOOLS)


def test_exact_rules_escape_glob_characters() -> None:
    rule = exact_rule("read_file", "notes[1].md", KeyKind.PATH, "test")
    assert rule.matches("read_file", "notes[1].md")
    assert not rule.matches("read_file", "notes1.md")


# -- settings files ----------------------------------------------------------------------------


def write_settings(
    folder: Path, permissions: object, extra: dict[str, object] | None = None
) -> None:
    path = folder / ".tutorial" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions, **(extra or {})}), encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON (line 1, column 2"),
        ('{"permissions": {"allow": "shell"}}', "permissions.allow: Input should be a valid list"),
        ('{"permissions": {"alow": []}}', "permissions.alow: Extra inputs are not permitted"),
        ('{"permissions": {"defaultMode": "yolo"}}', "permissions.defaultMode"),
        ('{"permissions": {"deny": ["rm -rf"]}}', "permissions.deny[0]: 'rm -rf' is not a rule"),
        ('{"permissions": {"allow": ["Bash(ls)"]}}', "names no known tool"),
        (
            "[]",
            'must hold one JSON object, such as {"permissions": {"allow": ["shell(git status)"]}}',
        ),
        ('"allow"', "it holds a string"),
    ],
)
def test_a_malformed_settings_file_is_a_config_error_naming_it(
    workspace: Workspace, tmp_path: Path, content: str, problem: str
) -> None:
    path = workspace.root / ".tutorial" / "settings.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_policy(workspace, tmp_path / "home", known_tools=TOOLS)
    assert raised.value.cli_line().startswith("配置错误：.tutorial/settings.json: ")
    assert problem in str(raised.value)


def test_other_chapters_keys_are_allowed(workspace: Workspace, tmp_path: Path) -> None:
    write_settings(workspace.root, {"allow": ["shell(ls)"]}, extra={"hooks": {"Stop": []}})
    policy = load_policy(workspace, tmp_path / "home", known_tools=TOOLS)
    assert decide(policy, "shell", "ls") is Decision.ALLOW


def test_a_bad_command_line_rule_names_the_flag(workspace: Workspace, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--allow: 'shell\(ls' is not a rule"):
        load_policy(workspace, tmp_path / "home", known_tools=TOOLS, allow=["shell(ls"])


def test_no_settings_at_all_is_the_default_mode(workspace: Workspace, tmp_path: Path) -> None:
    policy = load_policy(workspace, tmp_path / "home", known_tools=TOOLS)
    assert policy.mode is Mode.DEFAULT
    assert (policy.deny, policy.ask, policy.allow) == ([], [], [])


def test_call_shows_tool_and_key() -> None:
    assert Call("shell", SideEffect.EXECUTE, "ls").shown == "shell(ls)"
    assert Call("glob", SideEffect.READ, None).shown == "glob"


# -- read deny rules reach the walking tools ----------------------------------------------------


def test_grep_and_glob_skip_files_a_read_deny_rule_covers(
    workspace: Workspace, tmp_path: Path
) -> None:
    from chapters.ch01.tests.harness import FakeRunner
    from chapters.ch02.tests.helpers import run
    from chapters.ch02.toolset import make_tools

    (workspace.root / "secrets").mkdir()
    (workspace.root / "secrets" / "token.txt").write_text("TOKEN=hunter2\n", encoding="utf-8")
    (workspace.root / "app.py").write_text("TOKEN = read_token()\n", encoding="utf-8")
    policy = load_policy(
        workspace, tmp_path / "home", known_tools=TOOLS, deny=["read_file(secrets/**)"]
    )
    tools = make_tools(workspace, runner=FakeRunner(), hidden=policy.hides)

    grep = run(tools, "grep", pattern="TOKEN").content
    assert "hunter2" not in grep and "app.py:1:" in grep
    assert "1 files not searched: a deny rule covers them" in grep
    listed = run(tools, "glob", pattern="**/*").content
    assert "secrets/token.txt" not in listed and "app.py" in listed
    direct = run(tools, "grep", pattern="TOKEN", path="secrets/token.txt").content
    assert "hunter2" not in direct


# -- deny rules see the target of a link and its name (issue 11) -------------------------------


def _link(link: Path, target: str) -> None:
    try:
        link.symlink_to(target)
    except (OSError, NotImplementedError):
        pytest.skip("symlinks cannot be created here")


def test_a_file_link_into_a_denied_folder_is_hidden_from_grep_and_glob(
    workspace: Workspace, tmp_path: Path
) -> None:
    # The reproduction: read_file(secrets/**) denied, `ln -s secrets/key.txt notes.txt`.
    # read_file notes.txt was denied, but grep printed the key through the link.
    from chapters.ch01.tests.harness import FakeRunner
    from chapters.ch02.tests.helpers import run
    from chapters.ch02.toolset import make_tools

    (workspace.root / "secrets").mkdir()
    (workspace.root / "secrets" / "key.txt").write_text("API_KEY=hunter2\n", encoding="utf-8")
    (workspace.root / "app.py").write_text("API_KEY = load()\n", encoding="utf-8")
    _link(workspace.root / "notes.txt", "secrets/key.txt")
    policy = load_policy(
        workspace, tmp_path / "home", known_tools=TOOLS, deny=["read_file(secrets/**)"]
    )
    tools = make_tools(workspace, runner=FakeRunner(), hidden=policy.hides)

    assert decide(policy, "read_file", "notes.txt") is Decision.DENY
    grep = run(tools, "grep", pattern="API_KEY").content
    assert "hunter2" not in grep and "app.py:1:" in grep
    assert "2 files not searched: a deny rule covers them" in grep
    listed = run(tools, "glob", pattern="**/*").content
    assert "notes.txt" not in listed and "app.py" in listed
    assert policy.hides("notes.txt") and not policy.hides("app.py")


def test_a_deny_rule_on_a_links_name_holds_whatever_it_points_to(workspace: Workspace) -> None:
    # Writing through CI.yml changes what CI reads, whatever file holds the bytes.
    (workspace.root / "templates").mkdir()
    (workspace.root / "templates" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (workspace.root / "config").mkdir()
    (workspace.root / "config" / "prod.env").write_text("TOKEN=x\n", encoding="utf-8")
    _link(workspace.root / "CI.yml", "templates/ci.yml")
    _link(workspace.root / ".env", "config/prod.env")
    policy = Policy(
        workspace, Mode.ACCEPT_EDITS, deny=rules("write_file(/CI.yml)", "read_file(.env)")
    )

    assert decide(policy, "write_file", "CI.yml") is Decision.DENY
    assert decide(policy, "write_file", "templates/ci.yml") is Decision.ALLOW  # not the name
    assert decide(policy, "read_file", ".env") is Decision.DENY
    assert decide(policy, "read_file", "./config/../.env") is Decision.DENY
    assert policy.hides(".env")
    verdict = policy.decide(call(policy, "read_file", ".env"))
    assert verdict.source == "rule read_file(.env) from test"


# -- expansions the splitter does not understand are never auto-allowed (issue 11) -----------


@pytest.mark.parametrize(
    "command",
    [
        "ls '$(rm -rf victim)'; ls ${_@P}",
        "ls '$(rm -rf victim)'; ls \"${_@P}\"",
        "ls 'x[$(rm -rf victim)]'; ls $[_]",
        "ls 'x[$(rm -rf victim)]'; ls ${a[_]}",
        "ls '$(rm -rf victim)' ${BASH_COMMAND@P}",
    ],
)
def test_the_five_shapes_that_ran_a_denied_rm_now_ask(workspace: Workspace, command: str) -> None:
    policy = Policy(workspace, allow=rules("shell(ls:*)"), deny=rules("shell(rm:*)"))
    verdict = policy.decide(call(policy, "shell", command))
    assert verdict.decision is Decision.ASK
    assert verdict.source.startswith("not fully understood, so never auto-allowed: ")


# `shell` allows every command the splitter understands: only understanding stands between
# these commands and running without a question. `shell(rm:*)` is denied, as in the issue.
PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, database=None)
NAMES = ["x", "HOME", "a1", "_x", "1", "10", "?", "#", "@", "*", "$", "!", "-"]
REREADING = ["_", "BASH_COMMAND", "BASH_EXECUTION_STRING", "BASH_ARGV", "BASH_REMATCH"]
OPERATORS = [":-", "-", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "^", "^^", ",", ",,"]
WORDS = st.text("abcXYZ019./*", max_size=6)
PAYLOAD = "ls '$(rm -rf victim)'; ls 'x[$(rm -rf victim)]'"  # text for $_ to re-read


@pytest.fixture(scope="module")
def permissive(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    root = tmp_path_factory.mktemp("permissive")
    return Policy(Workspace(root), allow=rules("shell", "shell(ls:*)"), deny=rules("shell(rm:*)"))


def _name(names: list[str] = NAMES) -> st.SearchStrategy[str]:
    return st.sampled_from(names)


not_understood = st.one_of(
    # parameter transformations: ${x@P} runs the $(...) in x's value
    st.builds(
        lambda n, op: f"${{{n}@{op}}}", _name(NAMES + REREADING), st.sampled_from("PQEAKaULuk")
    ),
    # array subscripts and substring offsets are arithmetic
    st.builds(
        lambda n, i: f"${{{n}[{i}]}}",
        _name(["a", "x", "_"]),
        st.sampled_from(["_", "0", "i+1", "@", "$x"]),
    ),
    st.builds(
        lambda n, o: f"${{{n}:{o}}}",
        _name(["x", "_", "@"]),
        st.sampled_from(["1", "_", " -1", "x:2", "0:_"]),
    ),
    # indirection, assignment, anything else after the name
    st.builds(lambda n: f"${{!{n}}}", _name(["x", "_", "a[_]"])),
    st.builds(lambda n: f"${{!{n}*}}", _name(["x", "BASH"])),
    st.builds(
        lambda n, op, w: f"${{{n}{op}{w}}}",
        _name(["x", "HOME"]),
        st.sampled_from([":=", "=", "~", "!", ";", "&"]),
        WORDS,
    ),
    # arithmetic and command substitution in every spelling
    st.builds(lambda e: f"$[{e}]", st.sampled_from(["_", "1+1", "x[$(id)]", ""])),
    st.builds(lambda e: f"$(({e}))", st.sampled_from(["_", "1+1", "a[_]"])),
    st.builds(lambda w: f"$({w})", WORDS),
    st.builds(lambda w: f"`{w}`", WORDS),
    # expansions of earlier text
    st.builds(lambda n: f"${n}", _name(REREADING)),
    st.builds(lambda n: f"${{{n}}}", _name(REREADING)),
    st.builds(
        lambda n, op, w: f"${{{n}{op}{w}}}", _name(REREADING), st.sampled_from(OPERATORS), WORDS
    ),
    # a simple form whose word holds one of the above
    st.builds(
        lambda op, inner: f"${{x{op}{inner}}}",
        st.sampled_from(OPERATORS),
        st.sampled_from(["${_@P}", "$[_]", "$_", "$(id)"]),
    ),
)
understood_expansion = st.one_of(
    st.builds(
        lambda n: f"${n}", _name(["x", "HOME", "a1", "_x", "1", "?", "#", "@", "*", "$", "!", "-"])
    ),
    st.builds(lambda n: f"${{{n}}}", _name()),
    st.builds(lambda n: f"${{#{n}}}", _name(["x", "HOME", "1", "@"])),
    st.builds(
        lambda n, op, w: f"${{{n}{op}{w}}}",
        _name(["x", "HOME", "1", "@"]),
        st.sampled_from(OPERATORS),
        WORDS,
    ),
)
quoting = st.sampled_from(["{}", '"{}"', 'a"{}"b', "x{}/y"])  # never a name character after it


@PROPERTY_SETTINGS
@given(expansion=not_understood, quote=quoting, words=st.lists(WORDS.filter(bool), max_size=3))
def test_no_generated_command_with_an_expansion_outside_the_understood_set_is_auto_allowed(
    permissive: Policy, expansion: str, quote: str, words: list[str]
) -> None:
    for command in (
        " ".join(["ls", *words, quote.format(expansion)]),
        f"{PAYLOAD}; ls {quote.format(expansion)}",
        f"{PAYLOAD} {quote.format(expansion)}",
    ):
        verdict = permissive.decide(call(permissive, "shell", command))
        assert verdict.decision is not Decision.ALLOW, command
        assert verdict.source.startswith("not fully understood"), (command, verdict.source)


@PROPERTY_SETTINGS
@given(body=st.sampled_from(["x", "_", "1+1", "a[_] > 0", "$x -eq 1", "-v a[_]"]))
def test_arithmetic_and_conditional_commands_are_never_auto_allowed(
    permissive: Policy, body: str
) -> None:
    for command in (f"(( {body} ))", f"[[ {body} ]]", f"ls; (({body}))", f"ls && [[ {body} ]]"):
        verdict = permissive.decide(call(permissive, "shell", command))
        assert verdict.decision is not Decision.ALLOW, command


@PROPERTY_SETTINGS
@given(expansions=st.lists(understood_expansion, min_size=1, max_size=3), quote=quoting)
def test_commands_made_of_understood_expansions_are_allowed(
    permissive: Policy, expansions: list[str], quote: str
) -> None:
    # The other side: the allow-list is not "flag every $".
    command = "ls " + " ".join(quote.format(expansion) for expansion in expansions)
    verdict = permissive.decide(call(permissive, "shell", command))
    assert verdict.decision is Decision.ALLOW, (command, verdict.source)


# Random words over the characters expansions are made of, judged by a second, independent
# reading of the understood set: whatever that reading does not understand must not run.
RISKY = "${}[]()@_:!=+-#%/^,*?`x1P"
_ORACLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?$#!@*-]")
_ORACLE_OPERATOR = re.compile(r":?[-+?]|##?|%%?|//?|\^\^?|,,?")


def _oracle_understands(word: str) -> bool:
    """Whether `ls WORD` uses only understood expansions (an upper bound: it may allow
    more than the splitter, never less than what is safe)."""
    end = _understood_text(word, 0, closing=None)
    return end == len(word) and not word.startswith("#")


def _understood_text(text: str, i: int, closing: str | None) -> int | None:
    """Where understood text starting at `i` ends (at `closing`, or at the end), or None."""
    while i < len(text):
        char = text[i]
        if char == closing:
            return i
        if char in "`(){" or char == "}":  # `}` here is not the closing one: a brace group
            return None
        if char == "$":
            end = _understood_expansion(text, i)
            if end is None:
                return None
            i = end
        else:
            i += 1
    return None if closing else i


def _understood_expansion(text: str, i: int) -> int | None:
    after = text[i + 1 : i + 2]
    if after == "{":
        return _understood_braced(text, i + 2)
    if after in ("(", "[", "`"):
        return None
    name = _ORACLE_NAME.match(text, i + 1)
    if name is None:
        return i + 1  # a lone dollar sign
    if name.group() in REREADING:
        return None
    if name.group()[0].isalpha() or name.group()[0] == "_":
        return name.end()
    return i + 2  # one digit or one special character: `$10` is `$1`, then a `0`


def _understood_braced(text: str, i: int) -> int | None:
    if text.startswith("#", i):
        length = _ORACLE_NAME.match(text, i + 1)
        if length and text.startswith("}", length.end()) and length.group() not in REREADING:
            return length.end() + 1
    name = _ORACLE_NAME.match(text, i)
    if name is None or name.group() in REREADING:
        return None
    if text.startswith("}", name.end()):
        return name.end() + 1
    operator = _ORACLE_OPERATOR.match(text, name.end())
    if operator is None:
        return None
    end = _understood_text(text, operator.end(), closing="}")
    return None if end is None else end + 1


@PROPERTY_SETTINGS
@given(word=st.text(RISKY, min_size=1, max_size=12))
@example(word="${_@P}")
@example(word="$[_]")
@example(word="${a[_]}")
@example(word="${x:-$_}")
@example(word="$_")
def test_random_words_the_understood_set_does_not_cover_are_never_auto_allowed(
    permissive: Policy, word: str
) -> None:
    command = f"{PAYLOAD}; ls {word}"
    verdict = permissive.decide(call(permissive, "shell", command))
    if not _oracle_understands(word):
        assert verdict.decision is not Decision.ALLOW, command


# -- what bypass mode does, exactly (issue 11: the text said rewrites always ask) ----------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf x", Decision.DENY),
        ("ls; rm -rf x", Decision.DENY),
        ("\\rm -rf x", Decision.ALLOW),  # deny rules match the text, not what runs
        ("echo $(rm -rf x)", Decision.ALLOW),  # nor inside a substitution
        ("echo `rm -rf x`", Decision.ALLOW),
        ("(rm -rf x)", Decision.ALLOW),  # nor inside a subshell or a group
        ("{ rm -rf x; }", Decision.ALLOW),
        ("if true; then rm -rf x; fi", Decision.ALLOW),  # nor after a keyword
        ("env rm -rf x", Decision.ALLOW),
        ("ls '$(rm -rf x)'; ls ${_@P}", Decision.ALLOW),  # not understood: bypass runs it
    ],
)
def test_in_bypass_mode_a_deny_rule_stops_only_the_parts_whose_text_it_matches(
    workspace: Workspace, command: str, expected: Decision
) -> None:
    policy = Policy(workspace, Mode.BYPASS, deny=rules("shell(rm:*)"), ask=rules("shell"))
    assert decide(policy, "shell", command) is expected


@pytest.mark.parametrize(
    "command", ["\\rm -rf x", "echo $(rm -rf x)", "(rm -rf x)", "env rm -rf x"]
)
def test_outside_bypass_mode_the_same_rewrites_ask(workspace: Workspace, command: str) -> None:
    for mode in (Mode.DEFAULT, Mode.ACCEPT_EDITS):
        policy = Policy(workspace, mode, deny=rules("shell(rm:*)"), allow=rules("shell(echo:*)"))
        assert decide(policy, "shell", command) is Decision.ASK, (mode, command)

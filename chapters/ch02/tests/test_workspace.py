"""The workspace boundary: every spelling of "somewhere else" is refused, inside stays usable.

Three layers are checked against a real folder in tmp_path (the root is
tmp_path/ws, a secret lives in tmp_path/outside):
    - `Workspace.resolve` on named escape cases and on allowed paths;
    - the real tools (read_file, write_file, edit_file, glob, grep) on the same
      escape cases: each answers "path_outside_workspace", a write is refused
      while it is prepared (before anyone is asked to approve it), and nothing
      on disk changes;
    - `walk`, through glob and grep: no VCS folders, nothing behind a link that
      leaves the root.
Property tests (hypothesis) then throw generated paths at `resolve` and check the
result against an independent oracle (`os.path.realpath` + `os.path.commonpath`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chapters.ch02.path_text import text_problem
from chapters.ch02.toolset import make_tools
from chapters.ch02.workspace import PathOutsideWorkspace, Workspace
from shared.messages import FunctionCall, ToolCall
from shared.tools import PreparedCall, ToolResult

SECRET = "TOP SECRET: outside the workspace\n"
POSIX = sys.platform != "win32"

PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, database=None)


# --- the layout -------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    base: Path  # tmp_path, resolved: holds the root and the folders beside it
    root: Path  # the workspace root
    outside: Path  # a folder beside the root, with secret.txt
    sibling: Path  # a folder whose name starts with the root's name (ws -> wsevil)
    links: bool  # whether symlinks could be created here
    workspace: Workspace


def _try_symlink(link: Path, target: str | Path, *, folder: bool = False) -> bool:
    try:
        os.symlink(target, link, target_is_directory=folder)
    except (OSError, NotImplementedError):
        return False
    return True


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    base = tmp_path.resolve()
    root, outside, sibling = base / "ws", base / "outside", base / "wsevil"
    for folder in (root / "src", root / "sub", outside, sibling):
        folder.mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.txt").write_text("beta\n")
    (outside / "secret.txt").write_text(SECRET)
    (sibling / "secret.txt").write_text(SECRET)
    links = all(
        [
            _try_symlink(root / "link", outside, folder=True),
            _try_symlink(root / "link_file", outside / "secret.txt"),
            _try_symlink(root / "dangling", outside / "missing.txt"),
            _try_symlink(root / "sub" / "up", Path("..", "..", "outside"), folder=True),
            _try_symlink(root / "inner_link", Path("a.txt")),
            _try_symlink(root / "loop", Path("loop")),  # ln -s loop loop
            _try_symlink(root / "dangling_in", Path("missing_inside.txt")),
        ]
    )
    return Layout(base, root, outside, sibling, links, Workspace(root))


def _needs_links(layout: Layout) -> None:
    if not layout.links:
        pytest.skip("symlinks cannot be created here")


# --- calling the real tools -------------------------------------------------------------


def _prepare(workspace: Workspace, name: str, args: dict[str, object]) -> PreparedCall | ToolResult:
    """A fresh registry per call: no read recorded by an earlier call can unlock a write."""
    snapshot = make_tools(workspace).snapshot()
    call = ToolCall(id="c1", function=FunctionCall(name=name, arguments=json.dumps(args)))
    return snapshot.prepare(call)


def _run(workspace: Workspace, name: str, args: dict[str, object]) -> ToolResult:
    prepared = _prepare(workspace, name, args)
    return prepared if isinstance(prepared, ToolResult) else prepared.invoke()


def _tool_args(tool: str, path: str) -> dict[str, object]:
    every: dict[str, dict[str, object]] = {
        "read_file": {"path": path},
        "write_file": {"path": path, "content": "written by the test\n"},
        "edit_file": {"path": path, "old_string": "TOP SECRET", "new_string": "changed"},
        "glob": {"pattern": "*", "path": path},
        "grep": {"pattern": "SECRET", "path": path},
    }
    return every[tool]


def _listed(result: ToolResult) -> set[str]:
    """The paths in a glob or grep answer (the lines after the header)."""
    assert result.keyword == "ok", result.content
    return {line.split(":", 1)[0] for line in result.content.splitlines()[1:]}


# --- what is on disk --------------------------------------------------------------------


def _disk_state(base: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry below `base` (links not followed): kind, mtime, content or link target."""
    state: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, files in os.walk(base, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            relative = path.relative_to(base).as_posix()
            if path.is_symlink():
                state[relative] = ("link", 0, os.fsencode(os.readlink(path)))
            elif path.is_dir():
                state[relative] = ("dir", path.stat().st_mtime_ns, b"")
            else:
                state[relative] = ("file", path.stat().st_mtime_ns, path.read_bytes())
    return state


def _sentinels() -> dict[str, bytes | None]:
    """Files beyond tmp_path that an escape case names: they must stay as they are."""
    paths = [Path.home() / "x", Path("/etc/passwd")] if POSIX else [Path.home() / "x"]
    return {str(path): path.read_bytes() if path.is_file() else None for path in paths}


# --- 1. escapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class Escape:
    raw: str  # "{outside}", "{sibling}" are replaced by absolute paths of the layout
    links: bool = False

    def path(self, layout: Layout) -> str:
        return self.raw.replace("{outside}", str(layout.outside)).replace(
            "{sibling}", str(layout.sibling)
        )


ESCAPES = [
    pytest.param(Escape("../x"), id="dotdot"),
    pytest.param(Escape("a/../../x"), id="a-dotdot-dotdot"),
    pytest.param(Escape("sub/../../x"), id="sub-dotdot-dotdot"),
    pytest.param(Escape("../outside/secret.txt"), id="dotdot-to-secret"),
    pytest.param(Escape("../wsevil/secret.txt"), id="dotdot-to-sibling-sharing-the-prefix"),
    pytest.param(Escape("{outside}"), id="absolute-outside-folder"),
    pytest.param(Escape("{outside}/secret.txt"), id="absolute-outside-file"),
    pytest.param(Escape("{sibling}/secret.txt"), id="absolute-sibling-sharing-the-prefix"),
    pytest.param(
        Escape("/etc/passwd"),
        id="absolute-etc-passwd",
        marks=pytest.mark.skipif(not POSIX, reason="a POSIX path"),
    ),
    pytest.param(Escape("link_file", links=True), id="symlink-to-outside-file"),
    pytest.param(Escape("link", links=True), id="symlink-to-outside-folder"),
    pytest.param(Escape("link/secret.txt", links=True), id="through-symlinked-folder"),
    pytest.param(Escape("sub/up/secret.txt", links=True), id="through-relative-symlink-up"),
    pytest.param(Escape("dangling", links=True), id="dangling-symlink-to-outside"),
    # Issue 11: os.path.realpath (not strict) stops at a loop and leaves the rest as text,
    # so the `..` cancelled the loop and the link after it was followed later, outside.
    pytest.param(Escape("loop/../link/secret.txt", links=True), id="loop-dotdot-then-link-out"),
    pytest.param(Escape("loop/../sub/up/secret.txt", links=True), id="loop-dotdot-then-link-up"),
    pytest.param(Escape("loop/../link", links=True), id="loop-dotdot-then-folder-link"),
    pytest.param(Escape("loop", links=True), id="symlink-loop"),
    pytest.param(Escape("loop/x.txt", links=True), id="below-a-symlink-loop"),
    pytest.param(Escape("sub/up/../ws/../outside", links=True), id="dotdot-after-a-link"),
    pytest.param(Escape("dangling_in", links=True), id="dangling-symlink-inside"),
    pytest.param(Escape("C:foo"), id="drive-relative"),
    pytest.param(Escape("C:\\Windows\\win.ini"), id="drive-backslash"),
    pytest.param(Escape("c:/x"), id="drive-slash-lowercase"),
    pytest.param(Escape("\\\\server\\share\\x"), id="unc-backslash"),
    pytest.param(Escape("//server/share/x"), id="unc-slash"),
    pytest.param(Escape("CON"), id="device-CON"),
    pytest.param(Escape("nul.txt"), id="device-nul-with-extension"),
    pytest.param(Escape("sub/COM1"), id="device-COM1-in-a-folder"),
    pytest.param(Escape("LPT1.log"), id="device-LPT1-with-extension"),
    pytest.param(Escape("aux "), id="device-aux-trailing-space"),
    pytest.param(Escape("a\x00b"), id="nul-byte"),
    pytest.param(Escape("~"), id="tilde"),
    pytest.param(Escape("~/x"), id="tilde-slash"),
    pytest.param(Escape("~root"), id="tilde-user"),
    pytest.param(Escape("..\\..\\x"), id="backslash-climb"),
    pytest.param(Escape(""), id="empty"),
    pytest.param(Escape("   "), id="spaces"),
    pytest.param(Escape("\t\n"), id="tab-newline"),
]

FILE_TOOLS = ["read_file", "write_file", "edit_file", "glob", "grep"]
WRITE_TOOLS = {"write_file", "edit_file"}


@pytest.mark.parametrize("escape", ESCAPES)
def test_resolve_refuses_every_escape(layout: Layout, escape: Escape) -> None:
    if escape.links:
        _needs_links(layout)
    with pytest.raises(PathOutsideWorkspace):
        layout.workspace.resolve(escape.path(layout))


@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize("escape", ESCAPES)
def test_every_file_tool_refuses_every_escape_and_changes_nothing(
    layout: Layout, escape: Escape, tool: str
) -> None:
    if escape.links:
        _needs_links(layout)
    raw = escape.path(layout)
    before, sentinels = _disk_state(layout.base), _sentinels()

    if tool in WRITE_TOOLS:
        # Refused while prepared: the human is never asked to approve it, and it never runs.
        outcome = _prepare(layout.workspace, tool, _tool_args(tool, raw))
        assert isinstance(outcome, ToolResult), f"{tool} {raw!r} reached the approval step"
        result = outcome
    else:
        result = _run(layout.workspace, tool, _tool_args(tool, raw))

    # An empty path never reaches the workspace for the tools whose path has min_length=1:
    # pydantic rejects it first. It is refused all the same; only the keyword differs.
    # A control character (NUL, tab, newline) is refused by every tool's validation.
    refused_by_pydantic = raw == "" and tool in {"read_file", "write_file", "edit_file"}
    refused_by_pydantic = refused_by_pydantic or text_problem(raw) is not None
    expected = "invalid_arguments" if refused_by_pydantic else "path_outside_workspace"
    assert result.keyword == expected, result.content
    assert SECRET.strip() not in result.content
    assert _disk_state(layout.base) == before
    assert _sentinels() == sentinels


# Paths, file names and globs that look like an example: a small model told "use a path
# such as src/app.py" created src/app.py. The path the model gave and the real paths of
# the layout (in an error of the OS) may appear; nothing else that looks like a path.
EXAMPLE_PATH = re.compile(r"[\w.-]+/[\w.*-]+|\b[\w*-]+\.(?:py|md|txt|json|js|ts|log)\b|[A-Z]:\w")


@pytest.mark.parametrize("tool", ["read_file", "write_file", "glob"])
@pytest.mark.parametrize(
    "escape",
    [
        *ESCAPES,
        pytest.param(Escape("a\n../outside/secret.txt"), id="newline"),
        pytest.param(Escape("a/" * 1000 + "x"), id="too-deep"),
    ],
)
def test_no_refusal_of_the_path_check_names_an_example_path(
    layout: Layout, escape: Escape, tool: str
) -> None:
    if escape.links:
        _needs_links(layout)
    raw = escape.path(layout)
    result = _run(layout.workspace, tool, _tool_args(tool, raw))
    assert result.keyword in {"path_outside_workspace", "invalid_arguments"}, result.content
    said = result.content.replace(repr(raw), "").replace(raw, "")
    said = re.sub(re.escape(str(layout.base)) + r"[^'\"\s)]*", "", said)
    assert not EXAMPLE_PATH.search(said), said
    assert "such as" not in said and "e.g." not in said


# --- 2. what stays allowed --------------------------------------------------------------


ALLOWED = [
    pytest.param("a.txt", "a.txt", id="plain"),
    pytest.param("./a.txt", "a.txt", id="dot-slash"),
    pytest.param("src/../a.txt", "a.txt", id="dotdot-that-stays-inside"),
    pytest.param("{root}/a.txt", "a.txt", id="absolute-inside"),
    pytest.param("sub/new/file.txt", "sub/new/file.txt", id="not-yet-existing"),
    pytest.param("sub\\b.txt", "sub/b.txt", id="backslash-separator"),
    pytest.param("inner_link", "a.txt", id="symlink-to-inside-file"),
    pytest.param(".", ".", id="the-root-itself"),
]


@pytest.mark.parametrize(("raw", "relative"), ALLOWED)
def test_resolve_allows_paths_that_stay_inside(layout: Layout, raw: str, relative: str) -> None:
    if raw == "inner_link":
        _needs_links(layout)
    raw = raw.replace("{root}", str(layout.root))

    resolved = layout.workspace.resolve(raw)

    assert resolved == layout.root / relative
    assert str(resolved) == os.path.realpath(os.path.join(layout.root, raw.replace("\\", "/")))
    assert layout.workspace.relative(resolved) == relative
    assert layout.workspace.contains(resolved)


@pytest.mark.parametrize("raw", ["a.txt", "./a.txt", "src/../a.txt", "{root}/a.txt", "inner_link"])
def test_read_file_reads_allowed_paths_and_names_them_relative_to_the_root(
    layout: Layout, raw: str
) -> None:
    if raw == "inner_link":
        _needs_links(layout)
    result = _run(layout.workspace, "read_file", {"path": raw.replace("{root}", str(layout.root))})
    assert result.keyword == "ok", result.content
    assert result.content.startswith("ok: a.txt, ")
    assert "\talpha" in result.content


def test_write_file_creates_a_new_file_in_new_folders_inside_the_root(layout: Layout) -> None:
    prepared = _prepare(
        layout.workspace, "write_file", {"path": "sub/new/file.txt", "content": "new\n"}
    )
    assert isinstance(prepared, PreparedCall), prepared
    result = prepared.invoke()
    assert result.keyword == "ok", result.content
    assert (layout.root / "sub" / "new" / "file.txt").read_text() == "new\n"


# --- 3. walking -------------------------------------------------------------------------


@pytest.fixture
def walk_root(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "ws"
    for relative in ["keep.txt", "pkg/keep.txt", ".git/config", ".hg/store.txt"]:
        _write(root / relative, "needle\n")
    for relative in [".svn/entries", "pkg/.git/HEAD", "pkg/.svn/deep/x.txt"]:
        _write(root / relative, "needle\n")
    _write(tmp_path.resolve() / "outside" / "secret.txt", "needle\n")
    return root


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _links_leaving(root: Path) -> None:
    outside = root.parent / "outside"
    made = [
        _try_symlink(root / "out_dir", outside, folder=True),
        _try_symlink(root / "out_file", outside / "secret.txt"),
        _try_symlink(root / "pkg" / "up", Path("..", "..", "outside"), folder=True),
        _try_symlink(root / "out_dangling", outside / "missing.txt"),
        _try_symlink(root / "in_file", Path("keep.txt")),
    ]
    if not all(made):
        pytest.skip("symlinks cannot be created here")


def test_glob_and_grep_skip_vcs_folders_but_list_the_files_beside_them(walk_root: Path) -> None:
    workspace = Workspace(walk_root)
    expected = {"keep.txt", "pkg/keep.txt"}

    assert _listed(_run(workspace, "glob", {"pattern": "**/*"})) == expected
    assert _listed(_run(workspace, "grep", {"pattern": "needle", "path": "."})) == expected
    assert {relative for _, relative in workspace.walk(workspace.root)} == expected


def test_glob_and_grep_never_list_files_behind_links_that_leave_the_root(walk_root: Path) -> None:
    _links_leaving(walk_root)
    workspace = Workspace(walk_root)
    # in_file is a link to keep.txt: inside, so it is listed; the links out are not.
    expected = {"keep.txt", "pkg/keep.txt", "in_file"}

    assert _listed(_run(workspace, "glob", {"pattern": "**/*"})) == expected
    assert _listed(_run(workspace, "grep", {"pattern": "needle", "path": "."})) == expected
    assert {relative for _, relative in workspace.walk(workspace.root)} == expected


def test_resolve_answers_a_symlink_loop_with_a_refusal_or_a_path_inside(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "ws"
    root.mkdir()
    if not _try_symlink(root / "loop", Path("loop")):
        pytest.skip("symlinks cannot be created here")
    workspace = Workspace(root)
    try:
        resolved = workspace.resolve("loop")
    except PathOutsideWorkspace:
        return
    assert workspace.contains(resolved)


def test_glob_and_grep_skip_file_links_whose_target_runs_through_a_loop(walk_root: Path) -> None:
    made = [
        _try_symlink(walk_root / "loop", Path("loop")),
        _try_symlink(walk_root / "out_dir", walk_root.parent / "outside", folder=True),
        _try_symlink(walk_root / "via_loop", Path("loop", "..", "out_dir", "secret.txt")),
        _try_symlink(walk_root / "via_loop_up", Path("loop", "..", "..", "outside", "secret.txt")),
    ]
    if not all(made):
        pytest.skip("symlinks cannot be created here")
    workspace = Workspace(walk_root)

    assert _listed(_run(workspace, "glob", {"pattern": "**/*"})) == {"keep.txt", "pkg/keep.txt"}
    assert _listed(_run(workspace, "grep", {"pattern": "needle"})) == {"keep.txt", "pkg/keep.txt"}


def test_glob_and_grep_still_work_when_the_root_holds_a_symlink_loop(walk_root: Path) -> None:
    if not _try_symlink(walk_root / "loop", Path("loop")):
        pytest.skip("symlinks cannot be created here")
    workspace = Workspace(walk_root)

    assert "keep.txt" in _listed(_run(workspace, "glob", {"pattern": "**/*"}))
    assert "keep.txt" in _listed(_run(workspace, "grep", {"pattern": "needle", "path": "."}))


@pytest.mark.parametrize(
    "tool",
    [
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
    ],
)
def test_a_lone_surrogate_in_a_tool_path_is_refused_not_a_tool_error(
    layout: Layout, tool: str
) -> None:
    # JSON can carry "\ud800"; a file system path cannot. read/write/edit refuse it in
    # pydantic (their path has min_length, which needs valid unicode); glob/grep do not.
    before = _disk_state(layout.base)
    result = _run(layout.workspace, tool, _tool_args(tool, "\ud800"))
    assert result.keyword in {"invalid_arguments", "path_outside_workspace"}, result.content
    assert _disk_state(layout.base) == before


# --- 4. properties ----------------------------------------------------------------------

COMPONENTS = ["a", "b", "..", ".", "", "link_out", "link_in", "~", "C:", "\\\\", "CON", "x\x00y"]
COMPONENTS += ["sub"]
# Links that cannot be resolved and links followed by `..` (issue 11): a loop, a pair of
# links pointing at each other, dangling links inside and out, a link to the root's parent.
LINK_COMPONENTS = ["loop", "ping", "dangling_in", "dangling_out", "link_up", "missing"]
COMPONENTS += LINK_COMPONENTS
SEPARATORS = ["/", "\\"]


def _joined(components: st.SearchStrategy[str], max_size: int = 8) -> st.SearchStrategy[str]:
    return st.tuples(
        st.lists(components, min_size=1, max_size=max_size), st.sampled_from(SEPARATORS)
    ).map(lambda parts_and_separator: parts_and_separator[1].join(parts_and_separator[0]))


component_paths = _joined(st.sampled_from(COMPONENTS))
plain_paths = _joined(st.sampled_from(["a", "b", "sub"]))
any_text = st.one_of(st.text(), st.text(alphabet="ab./\\~:C \x00"), component_paths)


@dataclass(frozen=True)
class PropertyLayout:
    root: str  # os.path.realpath of the root: the oracle's reference
    workspace: Workspace


@pytest.fixture(scope="module")
def prop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PropertyLayout]:
    """One layout for all examples: resolve never writes, so examples cannot disturb it."""
    base = tmp_path_factory.mktemp("property").resolve()
    root, outside = base / "ws", base / "outside"
    for folder in (root / "a", root / "sub", outside):
        folder.mkdir(parents=True)
    (root / "b").write_text("a file: b/x goes below a file\n")
    (outside / "secret.txt").write_text(SECRET)
    _try_symlink(root / "link_out", outside, folder=True)
    _try_symlink(root / "link_in", root / "sub", folder=True)
    _try_symlink(root / "loop", Path("loop"))
    _try_symlink(root / "ping", Path("pong"))
    _try_symlink(root / "pong", Path("ping"))
    _try_symlink(root / "dangling_in", Path("nothing_here"))
    _try_symlink(root / "dangling_out", outside / "nothing_here")
    _try_symlink(root / "link_up", Path(".."), folder=True)
    _try_symlink(root / "sub" / "loop", Path("..", "loop"))  # a loop reached from below
    yield PropertyLayout(os.path.realpath(root), Workspace(root))


def _inside(path: Path, root: str) -> bool:
    """The oracle: os.path, not the workspace's own string prefix check."""
    real = os.path.realpath(path)
    return os.path.commonpath([real, root]) == root


def _inside_or_refused(prop: PropertyLayout, raw: str) -> None:
    try:
        resolved = prop.workspace.resolve(raw)
    except PathOutsideWorkspace:
        return  # any other exception fails the test
    assert _inside(resolved, prop.root), f"{raw!r} -> {resolved}"
    assert str(resolved) == os.path.realpath(os.path.join(prop.root, raw.replace("\\", "/")))
    _same_file_as_the_kernel_finds(prop, raw, resolved)


def _same_file_as_the_kernel_finds(prop: PropertyLayout, raw: str, resolved: Path) -> None:
    """A second oracle, the operating system itself: where it can open the path as
    written, it must reach the very file `resolve` returned (same device and inode).

    os.path.realpath is not enough on its own: before Python 3.13 it stops at a
    symlink loop and leaves the rest as text, which is the bug this guards against.
    """
    try:
        kernel = os.stat(os.path.join(prop.root, raw.replace("\\", "/")))
    except (OSError, ValueError):
        return  # the system cannot reach it either: nothing to compare
    mine = os.stat(resolved)
    assert (kernel.st_dev, kernel.st_ino) == (mine.st_dev, mine.st_ino), f"{raw!r} -> {resolved}"


@PROPERTY_SETTINGS
@given(raw=component_paths)
@example(raw="link_out/../link_out/secret.txt")
@example(raw="link_in/../../outside")
@example(raw="sub/../..")
@example(raw="loop/../link_out/secret.txt")  # issue 11: the loop, then `..`, then a link out
@example(raw="ping/../link_up/outside/secret.txt")
@example(raw="sub/loop/../../link_out")
@example(raw="dangling_in/../link_out")
@example(raw="link_up/ws/loop/../../outside")
def test_resolve_of_generated_paths_stays_inside_or_refuses(prop: PropertyLayout, raw: str) -> None:
    _inside_or_refused(prop, raw)


@PROPERTY_SETTINGS
@given(raw=any_text)
@example(raw="a" * 300)  # a name longer than NAME_MAX
@example(raw="a/" * 3000)  # a path longer than PATH_MAX
def test_resolve_of_any_text_raises_nothing_but_path_outside_workspace(
    prop: PropertyLayout, raw: str
) -> None:
    _inside_or_refused(prop, raw)


@PROPERTY_SETTINGS
@given(raw=st.text(alphabet=st.characters(codec=None)))
@example(raw="\ud800")
def test_resolve_of_text_with_lone_surrogates_raises_nothing_but_path_outside_workspace(
    prop: PropertyLayout, raw: str
) -> None:
    _inside_or_refused(prop, raw)


@PROPERTY_SETTINGS
@given(raw=plain_paths)
def test_resolve_of_plain_names_always_succeeds_inside(prop: PropertyLayout, raw: str) -> None:
    parts = raw.replace("\\", "/").split("/")

    resolved = prop.workspace.resolve(raw)

    assert _inside(resolved, prop.root)
    assert resolved == Path(prop.root, *parts)
    assert prop.workspace.relative(resolved) == "/".join(parts)


@PROPERTY_SETTINGS
@given(
    first=st.sampled_from(["loop", "ping", "dangling_in", "dangling_out", "sub/loop"]),
    rest=st.lists(st.sampled_from(["..", ".", "a", "sub", "link_in", "b", "link_out"]), max_size=5),
)
def test_a_path_through_a_loop_or_a_dangling_link_is_always_refused(
    prop: PropertyLayout, first: str, rest: list[str]
) -> None:
    with pytest.raises(PathOutsideWorkspace):
        prop.workspace.resolve("/".join([first, *rest]))

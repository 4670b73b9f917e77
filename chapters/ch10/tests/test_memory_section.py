"""Chapter 9's memory index as the memory section: the real source, not a double, under the
section's heading and within its cap; two builds in one folder send the same bytes."""

from __future__ import annotations

from pathlib import Path

from chapters.ch09.memory import INDEX_CAP, Memory, MemoryIndex, MemoryStore, MemoryType, Scope
from chapters.ch10.environment import read_environment
from chapters.ch10.prompt import CAPS, read_system_prompt
from chapters.ch10.sections import SectionSource, SystemPrompt
from chapters.ch10.skills import load_skills
from chapters.ch10.tests.support import TODAY, TOOLS, folders


def build(workspace: Path, home: Path, memory: SectionSource) -> SystemPrompt:
    """The prompt a run would send, with `memory` typed as the protocol a run passes."""
    skills = load_skills(workspace, home)
    environment = read_environment(workspace, TODAY)
    return read_system_prompt(
        workspace, home, environment, tools=TOOLS, skills=skills, memory=memory
    )


def test_chapter_9s_memory_index_is_the_memory_section(tmp_path: Path) -> None:
    where = folders(tmp_path)
    store = MemoryStore(where.workspace, where.home)
    store.save(Memory("tabs", "Python files here use tabs", MemoryType.FEEDBACK, "Tabs."))
    store.save(Memory("role", "A backend engineer", MemoryType.USER, "Go.", Scope.USER))
    index = MemoryIndex(store)

    first = build(where.workspace, where.home, memory=index)
    section = first.section("memory")
    assert section.source == "~/.tutorial/memory/ and .tutorial/memory/"
    assert section.text == f"# Memory\n{index.text()}"
    assert "- tabs [feedback]: Python files here use tabs" in section.text
    assert "- role [user]: A backend engineer" in section.text
    assert "Tabs." not in first.text  # bodies are read on demand
    assert not section.was_cut and CAPS["memory"] > INDEX_CAP
    assert build(where.workspace, where.home, memory=index).text == first.text


def test_a_broken_memory_file_leaves_the_section_and_the_build_standing(tmp_path: Path) -> None:
    where = folders(tmp_path)
    broken = where.workspace / ".tutorial" / "memory" / "x.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("no front matter", encoding="utf-8")
    index = MemoryIndex(MemoryStore(where.workspace, where.home))
    prompt = build(where.workspace, where.home, memory=index)
    assert prompt.section("memory").text == ""
    assert [w.split(":")[0] for w in index.warnings] == [".tutorial/memory/x.md"]

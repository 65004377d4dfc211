"""Skills parsed once: repeated calls cost a stat walk; a changed, added or removed SKILL.md or
skill folder is picked up on the next call."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tea_agent_mini.skills.cache import SkillsCache


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_text(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nDo the thing.\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / "skills").mkdir(parents=True)
    return path


def names(cache: SkillsCache) -> dict[str, str]:
    return {name: s.description for name, s in cache.catalog().skills.items()}


def test_repeated_calls_parse_once(home, workspace):
    write_skill(home / "skills", "notes", skill_text("notes", "Take notes."))
    cache = SkillsCache(home, workspace, bundled=False)
    first = cache.catalog()
    assert cache.catalog() is first and cache.catalog() is first
    assert cache.loads == 1 and list(first.skills) == ["notes"]


def test_an_edited_skill_md_is_picked_up(home, workspace):
    path = write_skill(home / "skills", "notes", skill_text("notes", "Take notes."))
    cache = SkillsCache(home, workspace, bundled=False)
    assert names(cache) == {"notes": "Take notes."}
    path.write_text(skill_text("notes", "Take better notes."), encoding="utf-8")
    assert names(cache) == {"notes": "Take better notes."}
    # the same size: the modification time tells (set here, a fast test beats a coarse clock)
    path.write_text(skill_text("notes", "Take faster notes."), encoding="utf-8")
    stamp = path.stat().st_mtime_ns + 5_000_000
    os.utime(path, ns=(stamp, stamp))
    assert names(cache) == {"notes": "Take faster notes."}
    assert cache.loads == 3


def test_a_skill_md_replaced_by_rename_is_picked_up(home, workspace):
    path = write_skill(home / "skills", "notes", skill_text("notes", "Take notes A."))
    cache = SkillsCache(home, workspace, bundled=False)
    assert names(cache) == {"notes": "Take notes A."}
    fresh = path.with_name("SKILL.md.new")
    fresh.write_text(skill_text("notes", "Take notes B."), encoding="utf-8")
    before = path.stat()
    os.utime(fresh, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same time
    os.replace(fresh, path)  # what editors and git do; the inode changes
    assert names(cache) == {"notes": "Take notes B."}


def test_added_and_removed_skills_are_picked_up(home, workspace):
    write_skill(home / "skills", "notes", skill_text("notes", "Take notes."))
    cache = SkillsCache(home, workspace, bundled=False)
    assert list(names(cache)) == ["notes"]
    write_skill(home / "skills", "plans", skill_text("plans", "Make plans."))
    assert sorted(names(cache)) == ["notes", "plans"]
    shutil.rmtree(home / "skills" / "notes")
    assert list(names(cache)) == ["plans"]
    # a folder that gets its SKILL.md only later
    (home / "skills" / "later").mkdir()
    assert list(names(cache)) == ["plans"]
    write_skill(home / "skills", "later", skill_text("later", "Come later."))
    assert sorted(names(cache)) == ["later", "plans"]


def test_a_workspace_skills_folder_made_later_is_picked_up(home, workspace):
    cache = SkillsCache(home, workspace, bundled=False)
    assert names(cache) == {}
    write_skill(workspace / ".tea_agent" / "skills", "local", skill_text("local", "Project."))
    assert names(cache) == {"local": "Project."}
    shutil.rmtree(workspace / ".tea_agent")
    assert names(cache) == {}

"""toolkit_save writes a SKILL.md for each self-made tool, which the skills then find."""

from __future__ import annotations

from pathlib import Path

from tea_agent_mini.skills.authoring import create_skill
from tea_agent_mini.skills.loader import load_skills
from tea_agent_mini.skills.toolskills import generated_tool, tool_skill_name
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.selfmade import toolkit_rollback, toolkit_save

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the text to count"},
        "unique": {"type": "boolean", "default": False},
    },
    "required": ["text"],
}
CODE = "def word_count(ctx, text, unique=False):\n    return len(text.split())\n"


def context(home: Path, workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=home, toolkit=Toolkit.load(["selfmade"]))


def test_saving_a_tool_writes_its_skill(tea_home, workspace):
    ctx = context(tea_home, workspace)
    out = toolkit_save(ctx, "word_count", "Count the words of a text.", SCHEMA, CODE)
    assert "left alone" not in out and "could not" not in out
    skill = load_skills(tea_home, workspace).get("tool-word-count")
    assert skill is not None and skill.source == "user" and generated_tool(skill) == "word_count"
    assert skill.description == "Your own tool word_count: Count the words of a text."
    assert "- `text` (string, required): the text to count" in skill.body
    assert "- `unique` (boolean, optional)" in skill.body
    assert 'Call the tool `word_count` with `{"text": "..."}`.' in skill.body
    assert skill.metadata["metadata"]["version"] == 1


def test_a_new_version_and_a_rollback_rewrite_it(tea_home, workspace):
    ctx = context(tea_home, workspace)
    toolkit_save(ctx, "word_count", "Count the words.", SCHEMA, CODE)
    toolkit_save(ctx, "word_count", "Count the words, or the distinct ones.", SCHEMA, CODE)
    skill = load_skills(tea_home, workspace).get("tool-word-count")
    assert skill.metadata["metadata"]["version"] == 2 and "distinct" in skill.description
    toolkit_rollback(ctx, "word_count", 1)
    skill = load_skills(tea_home, workspace).get("tool-word-count")
    assert skill.metadata["metadata"]["version"] == 1 and "distinct" not in skill.description


def test_a_skill_of_yours_with_that_name_is_left_alone(tea_home, workspace):
    mine = create_skill(tea_home, "tool-word-count", "My own notes.", "Mine.")
    out = toolkit_save(context(tea_home, workspace), "word_count", "Count.", SCHEMA, CODE)
    assert "a skill of yours is named tool-word-count: it was left alone" in out
    assert "My own notes." in mine.read_text()


def test_skill_names_follow_the_skill_rules():
    assert tool_skill_name("word_count") == "tool-word-count"
    assert tool_skill_name("a__b_") == "tool-a-b"
    assert len(tool_skill_name("x" * 64)) == 64

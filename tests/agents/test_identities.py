"""Subagent identity files: the format, where they come from, and what a bad one does."""

from __future__ import annotations

import pytest

from tea_agent_mini.agent.identities import (
    PARENT_ONLY,
    IdentityError,
    load_identities,
    parse_identity,
)

CLAUDE_STYLE = """---
name: code-scout
description: Finds code.
tools: Read, Grep, Glob, Bash
model: haiku
---
You scout code.
"""


def test_the_bundled_identities_load_with_their_tools(tea_home, workspace):
    found = load_identities(tea_home, workspace)
    assert found.problems == {}
    assert {"explorer", "researcher", "reviewer", "worker", "analyst", "coder", "tester"} <= set(
        found.identities
    )
    explorer = found.get("explorer")
    assert explorer is not None and explorer.read_only
    assert explorer.tools == ("toolkit_glob", "toolkit_grep", "toolkit_file", "toolkit_git")
    assert found.get("worker").tools is None  # every tool but the parent-only ones


def test_another_agents_file_format_maps_onto_ours():
    identity = parse_identity(CLAUDE_STYLE)
    assert identity.name == "code-scout"
    assert identity.tools == ("toolkit_file", "toolkit_grep", "toolkit_glob", "toolkit_exec")
    assert identity.model == "cheap"
    assert identity.prompt == "You scout code."


def test_allowed_tools_follow_the_list_order_take_globs_and_never_the_parent_only_ones():
    identity = parse_identity("---\nname: a\ndescription: d\ntools: [mcp_*, toolkit_file]\n---\nx")
    installed = ["toolkit_file", "mcp_db_query", "toolkit_exec", "mcp_db_list"]
    assert identity.allowed(installed) == ["mcp_db_query", "mcp_db_list", "toolkit_file"]
    everything = parse_identity("---\nname: b\ndescription: d\n---\nx")
    assert not set(everything.allowed([*installed, *PARENT_ONLY])) & PARENT_ONLY


def test_user_and_workspace_files_replace_bundled_ones_in_that_order(tea_home, workspace):
    (tea_home / "agents").mkdir()
    (tea_home / "agents" / "explorer.md").write_text(
        "---\nname: explorer\ndescription: mine\n---\nuser prompt", encoding="utf-8"
    )
    local = workspace / ".tea_agent" / "agents"
    local.mkdir(parents=True)
    (local / "ex.md").write_text(
        "---\nname: explorer\ndescription: project's\nmax_turns: 3\n---\nproject prompt",
        encoding="utf-8",
    )
    explorer = load_identities(tea_home, workspace).get("explorer")
    assert explorer is not None
    assert (explorer.description, explorer.source, explorer.max_turns) == (
        "project's",
        "workspace",
        3,
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "must start with YAML front matter"),
        ("---\nname: x\ndescription: d\n", "no closing ---"),
        ("---\nname: [x\n---\nbody", "not valid YAML"),
        ("---\nname: Bad Name\ndescription: d\n---\nbody", "must be lowercase"),
        ("---\nname: x\n---\nbody", "needs a description"),
        ("---\nname: x\ndescription: d\n---\n", "has no prompt"),
        ("---\nname: x\ndescription: d\nmax_turns: 0\n---\nbody", "max_turns must be"),
        ("---\nname: x\ndescription: d\ntools: 5\n---\nbody", "tools must be"),
        ("---\nname: x\ndescription: d\nread_only: maybe\n---\nbody", "read_only must be"),
    ],
)
def test_a_bad_file_names_its_problem(text, problem):
    with pytest.raises(IdentityError, match=problem):
        parse_identity(text)


def test_a_bad_file_is_skipped_and_reported_while_the_others_load(tea_home, workspace):
    (tea_home / "agents").mkdir()
    bad = tea_home / "agents" / "broken.md"
    bad.write_text("---\nname: broken\n---\nbody", encoding="utf-8")
    (tea_home / "agents" / "fine.md").write_text(
        "---\ndescription: ok\n---\nbody", encoding="utf-8"
    )
    found = load_identities(tea_home, workspace)
    assert "needs a description" in found.problems[str(bad)]
    assert found.get("fine") is not None and found.get("broken") is None

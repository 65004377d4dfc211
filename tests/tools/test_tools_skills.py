from __future__ import annotations

import asyncio
import json
from importlib.resources import files
from pathlib import Path

import pytest

from tea_agent_mini.skills.authoring import create_skill
from tea_agent_mini.skills.catalog import relevant_skills_section, search_skills
from tea_agent_mini.skills.loader import (
    SkillFormatError,
    bundled_root,
    load_skills,
    parse_skill,
    read_skill_file,
)
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools import skills as skills_tool
from tea_agent_mini.types import ToolCall

BUNDLED = (
    "code-review",
    "commit-messages",
    "debug-incident",
    "summarize-document",
    "write-a-skill",
)


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_text(name: str, description: str, body: str = "Do the thing.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"


def run(executor: ToolExecutor, **arguments):
    call = ToolCall(id="c1", name="toolkit_skills", arguments=json.dumps(arguments))
    return asyncio.run(executor.run(call))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def executor(home: Path, workspace: Path) -> ToolExecutor:
    return ToolExecutor(Toolkit.load(["skills"]), ToolContext(workspace=workspace, home=home))


# ---- bundled skills ------------------------------------------------------------------------


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_skill_is_valid(name):
    resource = files("tea_agent_mini.skills").joinpath("bundled", name, "SKILL.md")
    text = resource.read_text(encoding="utf-8")
    skill, warnings = parse_skill(text, folder_name=name)
    assert warnings == []
    assert skill.name == name
    assert 40 <= len(skill.description) <= 1024
    assert "Use when" in skill.description
    assert 40 <= len(text.splitlines()) <= 120
    assert skill.body.startswith("# ")
    assert skill.tags and skill.triggers


def test_every_bundled_folder_loads_without_problems():
    catalog = load_skills(None, None)
    folders = sorted(p.name for p in bundled_root().iterdir() if p.is_dir())
    assert set(BUNDLED) <= set(folders)
    assert catalog.problems == []
    assert sorted(catalog.skills) == [f for f in folders if not f.startswith(("_", "."))]
    assert all(s.source == "bundled" for s in catalog.skills.values())


# ---- discovery and override ----------------------------------------------------------------


def test_skills_come_from_three_places_later_ones_override(home, workspace):
    user_root = home / "skills"
    workspace_root = workspace / ".tea_agent" / "skills"
    write_skill(user_root, "code-review", skill_text("code-review", "Our house review rules."))
    write_skill(user_root, "deploy", skill_text("deploy", "Deploy the app (user version)."))
    write_skill(workspace_root, "deploy", skill_text("deploy", "Deploy this project."))
    write_skill(workspace_root, "local-only", skill_text("local-only", "Only here."))

    catalog = load_skills(home, workspace)

    assert catalog.problems == []
    review = catalog.get("code-review")
    assert (review.source, review.description, review.overrides) == (
        "user",
        "Our house review rules.",
        ("bundled",),
    )
    deploy = catalog.get("deploy")
    assert (deploy.source, deploy.description, deploy.overrides) == (
        "workspace",
        "Deploy this project.",
        ("user",),
    )
    assert catalog.get("local-only").source == "workspace"
    assert catalog.get("commit-messages").source == "bundled"
    assert set(BUNDLED) | {"deploy", "local-only"} == set(catalog.skills)


def test_bundled_can_be_left_out(home):
    write_skill(home / "skills", "mine", skill_text("mine", "Mine."))
    assert list(load_skills(home, None, bundled=False).skills) == ["mine"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Just markdown\n", "no YAML front matter"),
        ("---\nname: x\ndescription: y\n", "not closed"),
        ("---\nname: [unclosed\ndescription: y\n---\nbody\n", "not valid YAML"),
        ("---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: no name\n---\nbody\n", "no 'name'"),
        ("---\nname: broken\n---\nbody\n", "no 'description'"),
        ("---\nname: broken\ndescription: '  '\n---\nbody\n", "'description' is empty"),
        ("---\nname: 42\ndescription: number name\n---\nbody\n", "must be a string"),
        ("---\nname: two words\ndescription: spaces\n---\nbody\n", "no spaces"),
    ],
)
def test_bad_front_matter_is_reported_and_others_still_load(home, text, message):
    write_skill(home / "skills", "broken", text)
    write_skill(home / "skills", "good", skill_text("good", "A good one."))

    catalog = load_skills(home, None)

    assert "good" in catalog.skills and "broken" not in catalog.skills
    [problem] = catalog.errors
    assert problem.source == "user"
    assert problem.location.endswith("broken")
    assert message in problem.message


def test_rule_bending_skills_load_with_warnings(home):
    write_skill(home / "skills", "folder-name", skill_text("other-name", "Name differs."))
    write_skill(home / "skills", "caps", skill_text("Caps_Name", "Not the spec's name rule."))
    write_skill(home / "skills", "tags", skill_text("tags", "Bad tags.", extra="tags: 5\n"))
    (home / "skills" / "empty-folder").mkdir()

    catalog = load_skills(home, None, bundled=False)

    assert set(catalog.skills) == {"other-name", "Caps_Name", "tags"}
    assert catalog.get("tags").tags == ()
    messages = " | ".join(p.message for p in catalog.warnings)
    assert "differs from its folder name 'folder-name'" in messages
    assert "should use only a-z" in messages
    assert "tags must be a list" in messages
    assert [p.message for p in catalog.errors] == ["no SKILL.md in this folder"]


def test_same_name_twice_in_one_place_keeps_the_first(home):
    write_skill(home / "skills", "alpha", skill_text("dup", "First."))
    write_skill(home / "skills", "beta", skill_text("dup", "Second."))
    catalog = load_skills(home, None, bundled=False)
    assert catalog.get("dup").description == "First."
    assert any("already defines a skill named 'dup'" in p.message for p in catalog.errors)


def test_tags_and_triggers_accept_lists_strings_and_spec_metadata():
    listed, _ = parse_skill(skill_text("a", "d", extra="tags: [x, y, x]\ntriggers:\n  - go\n"))
    assert (listed.tags, listed.triggers) == (("x", "y"), ("go",))
    comma, _ = parse_skill(skill_text("a", "d", extra="tags: 'x, y'\n"))
    assert comma.tags == ("x", "y")
    nested, _ = parse_skill(
        skill_text("a", "d", extra="license: MIT\nmetadata:\n  tags: 'ops, infra'\n")
    )
    assert nested.tags == ("ops", "infra")
    assert nested.metadata["license"] == "MIT"


def test_crlf_and_bom_are_accepted():
    text = "\ufeff---\r\nname: win\r\ndescription: Written on Windows.\r\n---\r\n\r\nBody\r\n"
    skill, warnings = parse_skill(text)
    assert (skill.name, skill.description, skill.body, warnings) == (
        "win",
        "Written on Windows.",
        "Body",
        [],
    )


# ---- search and the L0 section -------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("write a commit message", "commit-messages"),
        ("the site is down and users see errors", "debug-incident"),
        ("review my pull request", "code-review"),
        ("tl;dr of this report", "summarize-document"),
        ("save this workflow as a skill", "write-a-skill"),
    ],
)
def test_search_ranks_the_matching_bundled_skill_first(query, best):
    matches = search_skills(load_skills(None, None).skills.values(), query)
    assert matches[0].skill.name == best


def test_search_covers_tags_triggers_and_body(home):
    write_skill(
        home / "skills",
        "rotate-cert",
        skill_text(
            "rotate-cert",
            "Renew the TLS certificate.",
            body="Run certbot renew, then reload nginx.",
            extra="tags: [security]\ntriggers: [certificate expired]\n",
        ),
    )
    skills = load_skills(home, None, bundled=False).skills.values()
    assert search_skills(skills, "nginx")[0].fields == ("body",)
    assert search_skills(skills, "expired")[0].fields == ("triggers",)
    assert search_skills(skills, "security")[0].fields == ("tags",)
    assert search_skills(skills, "rotate")[0].fields == ("name",)
    assert search_skills(skills, "kubernetes") == []
    assert search_skills(skills, "   ") == []


def test_a_turn_names_only_the_skills_that_fit_it(home):
    long_description = "Handle releases and tag versions. " + "More detail here. " * 40
    write_skill(
        home / "skills",
        "release",
        "---\nname: release\ndescription: >\n  " + long_description + "\n---\nSECRET BODY\n",
    )
    skills = load_skills(home, None).skills.values()
    section = relevant_skills_section(skills, "cut a release and tag the version", 3)
    lines = section.splitlines()
    assert 'toolkit_skills(action="load", name="<name>")' in lines[0]
    assert lines[1].startswith("- release: Handle releases") and len(lines[1]) < 250
    assert "SECRET BODY" not in section and "code-review" not in section
    assert relevant_skills_section(skills, "what's the weather like?", 3) == ""
    assert relevant_skills_section([], "cut a release", 3) == ""
    # one shared word is a coincidence: "door code" is not a code review
    assert relevant_skills_section(skills, "tell me the warehouse door code", 3) == ""


def test_a_turn_names_at_most_the_limit(home):
    for index in range(5):
        write_skill(
            home / "skills", f"s{index}", skill_text(f"s{index}", f"Deploy service {index}.")
        )
    skills = load_skills(home, None, bundled=False).skills.values()
    section = relevant_skills_section(skills, "deploy the service", 3)
    assert section.count("\n- s") == 3


# ---- create and load -----------------------------------------------------------------------


def test_create_then_load_through_the_tool(executor, home, workspace):
    created = run(
        executor,
        action="create",
        name="release-notes",
        description="Turn merged PRs into release notes. Use when asked for release notes.",
        body="# Release notes\n\n1. List merged PRs.\n2. Group them.",
        tags=["release", "changelog"],
        triggers=["write release notes"],
    )
    assert created.ok, created.error
    path = home / "skills" / "release-notes" / "SKILL.md"
    assert path.is_file()
    skill, warnings = parse_skill(path.read_text(encoding="utf-8"), folder_name="release-notes")
    assert warnings == [] and skill.tags == ("release", "changelog")

    (path.parent / "references").mkdir()
    (path.parent / "references" / "style.md").write_text("Use past tense.", encoding="utf-8")
    loaded = run(executor, action="load", name="release-notes")
    assert loaded.ok
    assert "# Skill: release-notes (user)" in loaded.output
    assert "references/style.md" in loaded.output
    assert loaded.output.endswith("2. Group them.\n\n" + skills_tool.FOLLOW)
    extra = run(executor, action="load", name="release-notes", file="references/style.md")
    assert extra.output == "Use past tense."

    listed = run(executor, action="list")
    assert "- release-notes [user]: Turn merged PRs" in listed.output
    found = run(executor, action="search", query="changelog")
    assert "release-notes" in found.output.splitlines()[1]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "Bad_Name"}, "is not valid"),
        ({"name": "-x"}, "is not valid"),
        ({"name": "a--b"}, "is not valid"),
        ({"description": "  "}, "needs a description"),
        ({"body": ""}, "needs a body"),
        ({"body": "---\nname: x\n---\nbody"}, "only the Markdown"),
    ],
)
def test_create_refuses_invalid_skills(executor, home, arguments, message):
    base = {"action": "create", "name": "ok-name", "description": "Does X.", "body": "Steps."}
    result = run(executor, **{**base, **arguments})
    assert not result.ok
    assert message in result.error
    assert not (home / "skills").exists()


def test_create_needs_overwrite_to_replace(home):
    create_skill(home, "mine", "First version.", "one")
    with pytest.raises(SkillFormatError, match="overwrite=true"):
        create_skill(home, "mine", "Second version.", "two")
    create_skill(home, "mine", "Second version.", "two", overwrite=True)
    assert load_skills(home, None).get("mine").body == "two"


def test_create_that_overrides_a_bundled_skill_says_so(executor):
    result = run(
        executor, action="create", name="code-review", description="House rules.", body="Be kind."
    )
    assert result.ok and "overrides the bundled skill" in result.output
    assert "Be kind." in run(executor, action="load", name="code-review").output


def test_create_is_refused_in_read_only_mode_but_reading_works(home, workspace):
    context = ToolContext(workspace=workspace, home=home, approval="never")
    executor = ToolExecutor(Toolkit.load(["skills"]), context)
    refused = run(executor, action="create", name="x", description="d", body="b")
    assert not refused.ok and "read-only" in refused.error
    assert run(executor, action="load", name="code-review").ok


def test_load_errors_are_helpful(executor, home):
    write_skill(home / "skills", "broken", "no front matter\n")
    unknown = run(executor, action="load", name="code-reveiw")
    assert not unknown.ok and "Did you mean: code-review" in unknown.error
    broken = run(executor, action="load", name="broken")
    assert "could not be read: no YAML front matter" in broken.error
    listed = run(executor, action="list")
    assert "Problems:" in listed.output and "broken" in listed.output


@pytest.mark.parametrize("relative", ["../../config.yaml", "/etc/passwd", "missing.md", ""])
def test_extra_files_stay_inside_the_skill(home, relative):
    write_skill(home / "skills", "s", skill_text("s", "d"))
    (home / "config.yaml").write_text("secret: 1", encoding="utf-8")
    skill = load_skills(home, None).get("s")
    with pytest.raises(SkillFormatError):
        read_skill_file(skill, relative)


def test_extra_files_of_bundled_skills_are_listed_through_resources():
    skill = load_skills(None, None).get("code-review")
    assert skill.files == ()
    assert skill.root.joinpath("SKILL.md").is_file()


def test_a_skill_the_message_names_is_the_one_offered(home):
    for name, description in (
        ("release-notes", "How to write the release notes of this project."),
        ("write-a-skill", "Write a new skill (a SKILL.md pack) from a procedure that worked."),
    ):
        write_skill(
            home / "skills", name, f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"
        )
    skills = load_skills(home, None, bundled=False).skills.values()
    message = "Write the release notes for this project, following the release-notes skill."
    section = relevant_skills_section(skills, message, 3)
    assert section.startswith("The user asked for the skill release-notes. Follow its")
    assert section.endswith("\nSteps.") and "write-a-skill" not in section
    spaced = relevant_skills_section(skills, "use the release notes skill", 3)
    assert spaced == section
    both = relevant_skills_section(skills, "release-notes or write-a-skill?", 3).splitlines()
    assert [line.split(":")[0] for line in both[1:]] == ["- release-notes", "- write-a-skill"]


def test_a_named_skill_too_long_to_include_is_listed_to_load(home):
    body = "Step.\n" * 400
    write_skill(home / "skills", "big-one", f"---\nname: big-one\ndescription: Big.\n---\n{body}")
    skills = load_skills(home, None, bundled=False).skills.values()
    lines = relevant_skills_section(skills, "follow the big-one skill", 3).splitlines()
    assert lines[0].startswith("Skills that may fit") and lines[1] == "- big-one: Big."

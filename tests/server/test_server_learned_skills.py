"""Learned skills over real HTTP: list with provenance, one with its text and older versions,
edit (checked; the old text kept), promote to the user's own skills, delete, bad names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.evaluation.crystallise import learned_dir
from tea_agent_mini.evaluation.learned import LearnedSkillError, LearnedSkills
from tea_agent_mini.skills.authoring import render_skill_md
from tea_agent_mini.skills.loader import load_skills

BODY = "# Count rows\n\n## Steps\n1. Read the file\n2. Count the lines"
META = {
    "learned_from": "topic-1",
    "learned_at": "2025-01-02",
    "score": 5,
    "version": 2,
    "tools": ["toolkit_file", "toolkit_exec"],
}


def write_learned_skill(home: Path, name: str = "count-csv-rows", body: str = BODY) -> Path:
    """A learned skill at version 2, with its version 1 kept, as crystallisation leaves it."""
    folder = learned_dir(home) / name
    (folder / "versions").mkdir(parents=True)
    text = render_skill_md(name, "Count the rows of a CSV file.", body, (), ("count rows",), META)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    old = render_skill_md(name, "Count rows.", "1. Count", (), (), {**META, "version": 1})
    (folder / "versions" / "v1.md").write_text(old, encoding="utf-8")
    return folder


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    return response.json()


def error(response, status: int) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["message"]


def test_list_and_get_show_provenance_text_and_versions(http, tea_home):
    assert ok(http.get("/v1/skills/learned"))["data"] == []
    write_learned_skill(tea_home)
    (listed,) = ok(http.get("/v1/skills/learned"))["data"]
    assert (listed["name"], listed["version"], listed["score"]) == ("count-csv-rows", 2, 5)
    assert (listed["learned_from"], listed["learned_at"]) == ("topic-1", "2025-01-02")
    assert listed["tools"] == ["toolkit_file", "toolkit_exec"]
    assert listed["description"] == "Count the rows of a CSV file." and listed["problem"] == ""
    assert listed["retired"] is False
    detail = ok(http.get("/v1/skills/learned/count-csv-rows"))
    assert detail["text"].startswith("---\nname: count-csv-rows\n")
    assert "Read the file" in detail["text"]
    assert [(v["version"], "1. Count" in v["text"]) for v in detail["versions"]] == [(1, True)]


@pytest.mark.parametrize("name", ["%2e%2e", "%2e", "Bad_Name", "a--b", "-a", "x" * 65])
def test_names_that_are_no_skill_names_are_refused(http, tea_home, name):
    write_learned_skill(tea_home)
    for method in ("GET", "DELETE", "PUT"):
        response = http.request(method, f"/v1/skills/learned/{name}", json={"text": "x"})
        assert "is not a skill name" in error(response, 400)
    assert "is not a skill name" in error(http.post(f"/v1/skills/learned/{name}/promote"), 400)
    assert (learned_dir(tea_home) / "count-csv-rows" / "SKILL.md").is_file()


@pytest.mark.parametrize("name", ["..", "../count-csv-rows", "count-csv-rows/versions", ""])
def test_path_tricks_never_reach_a_folder(tea_home, name):
    folder = write_learned_skill(tea_home)
    skills = LearnedSkills(tea_home)
    for action in (skills.get, skills.delete, skills.promote, skills.versions):
        with pytest.raises(LearnedSkillError) as caught:
            action(name)
        assert caught.value.reason == "invalid"
    assert (folder / "SKILL.md").is_file() and (folder / "versions" / "v1.md").is_file()


def test_unknown_skills_are_404(http):
    assert "no learned skill" in error(http.get("/v1/skills/learned/nothing-here"), 404)
    assert error(http.put("/v1/skills/learned/nothing-here", json={"text": "x"}), 404)
    assert error(http.post("/v1/skills/learned/nothing-here/promote"), 404)
    assert error(http.delete("/v1/skills/learned/nothing-here"), 404)


def test_an_edit_is_checked_and_keeps_the_old_text_as_a_version(http, tea_home):
    folder = write_learned_skill(tea_home)
    before = (folder / "SKILL.md").read_text(encoding="utf-8")
    url = "/v1/skills/learned/count-csv-rows"
    for bad, reason in [
        ("no front matter here", "front matter"),
        ("---\nname: count-csv-rows\n---\nbody", "description"),
        ("---\nname: other-name\ndescription: d\n---\nbody", "must stay 'count-csv-rows'"),
        ("---\nname: [unclosed\n---\nbody", "not valid YAML"),
    ]:
        assert reason in error(http.put(url, json={"text": bad}), 400)
    assert error(http.put(url, json={"text": 3}), 400)
    assert error(http.put(url, json={"text": "x", "extra": 1}), 400)
    assert (folder / "SKILL.md").read_text(encoding="utf-8") == before
    assert sorted(p.name for p in (folder / "versions").iterdir()) == ["v1.md"]

    edited = before.replace("2. Count the lines", "2. Count the lines, minus the header")
    detail = ok(http.put(url, json={"text": edited}))
    assert detail["version"] == 3 and "minus the header" in detail["text"]
    assert "edited_at" in detail["text"]
    assert [v["version"] for v in detail["versions"]] == [2, 1]
    assert (folder / "versions" / "v2.md").read_text(encoding="utf-8") == before
    # what was written reads back as a learned skill of the same name
    skill = load_skills(tea_home, bundled=False).get("count-csv-rows")
    assert skill is not None and skill.source == "learned" and "minus the header" in skill.body
    # the same text again changes nothing
    assert ok(http.put(url, json={"text": detail["text"]}))["version"] == 3
    assert len(list((folder / "versions").iterdir())) == 2


def test_promote_makes_it_the_users_own_and_refuses_a_clash(http, tea_home):
    write_learned_skill(tea_home)
    write_learned_skill(tea_home, "tidy-imports")
    mine = tea_home / "skills" / "tidy-imports"
    mine.mkdir()
    (mine / "SKILL.md").write_text("---\nname: tidy-imports\ndescription: mine\n---\nmine\n")
    assert "already have" in error(http.post("/v1/skills/learned/tidy-imports/promote"), 409)
    assert (learned_dir(tea_home) / "tidy-imports" / "SKILL.md").is_file()

    promoted = ok(http.post("/v1/skills/learned/count-csv-rows/promote"))
    assert promoted["promoted"] is True
    assert not (learned_dir(tea_home) / "count-csv-rows").exists()
    skill = load_skills(tea_home, bundled=False).get("count-csv-rows")
    assert skill is not None and skill.source == "user" and skill.files == ()
    assert skill.metadata["metadata"]["learned_from"] == "topic-1"
    assert "promoted_at" in skill.metadata["metadata"]
    assert [s["name"] for s in ok(http.get("/v1/skills/learned"))["data"]] == ["tidy-imports"]
    assert error(http.get("/v1/skills/learned/count-csv-rows"), 404)


def test_delete_removes_the_skill_and_its_versions(http, tea_home):
    folder = write_learned_skill(tea_home)
    assert ok(http.delete("/v1/skills/learned/count-csv-rows")) == {
        "object": "learned_skill",
        "name": "count-csv-rows",
        "deleted": True,
    }
    assert not folder.exists()
    assert ok(http.get("/v1/skills/learned"))["data"] == []


def test_a_broken_skill_is_listed_with_its_problem_and_can_be_fixed(http, tea_home):
    folder = learned_dir(tea_home) / "broken-one"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("no front matter", encoding="utf-8")
    (listed,) = ok(http.get("/v1/skills/learned"))["data"]
    assert listed["name"] == "broken-one" and "front matter" in listed["problem"]
    fixed = "---\nname: broken-one\ndescription: Works now.\n---\nDo it.\n"
    assert ok(http.put("/v1/skills/learned/broken-one", json={"text": fixed}))["problem"] == ""


class Stats:
    """What ``store.skill_stats`` will offer, for a store that has it."""

    class Record:
        name, uses, successes, failures, last_used, retired = "count-csv-rows", 4, 3, 1, 5.0, True

    def all(self):
        return [self.Record()]

    def get(self, name):
        return self.Record() if name == "count-csv-rows" else None


class BrokenStats:
    def all(self):
        raise StoreError("no such table: skill_stats")

    def get(self, name):
        raise StoreError("no such table: skill_stats")


def test_uses_and_outcomes_come_from_the_stores_skill_stats(http, live, tea_home, monkeypatch):
    write_learned_skill(tea_home)
    (listed,) = ok(http.get("/v1/skills/learned"))["data"]
    assert listed["uses"] is None  # never loaded
    live.runtime.store.skill_stats.used("count-csv-rows")
    live.runtime.store.skill_stats.outcome("count-csv-rows", False)
    (listed,) = ok(http.get("/v1/skills/learned"))["data"]
    assert (listed["uses"], listed["successes"], listed["failures"]) == (1, 0, 1)
    monkeypatch.setattr(live.runtime.store, "skill_stats", Stats(), raising=False)
    (listed,) = ok(http.get("/v1/skills/learned"))["data"]
    assert (listed["uses"], listed["successes"], listed["failures"]) == (4, 3, 1)
    assert listed["retired"] is True and listed["last_used"] == 5.0
    assert ok(http.get("/v1/skills/learned/count-csv-rows"))["uses"] == 4
    monkeypatch.setattr(live.runtime.store, "skill_stats", BrokenStats(), raising=False)
    assert ok(http.get("/v1/skills/learned"))["data"][0]["uses"] is None
    assert ok(http.get("/v1/skills/learned/count-csv-rows"))["uses"] is None


def test_the_list_is_paged(http, tea_home):
    for name in ("alpha-skill", "beta-skill", "gamma-skill"):
        write_learned_skill(tea_home, name)
    first = ok(http.get("/v1/skills/learned?limit=2"))
    assert [s["name"] for s in first["data"]] == ["alpha-skill", "beta-skill"]
    assert first["has_more"] is True
    rest = ok(http.get("/v1/skills/learned?limit=2&offset=2"))
    assert [s["name"] for s in rest["data"]] == ["gamma-skill"] and rest["has_more"] is False
    assert error(http.get("/v1/skills/learned?limit=0"), 400)

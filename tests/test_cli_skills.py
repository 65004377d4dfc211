"""``tea-agent-mini skills learned``: list, show, edit (in $EDITOR or from stdin), promote, delete,
run as the user runs them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tea_agent_mini.evaluation.crystallise import learned_dir
from tests.server.test_server_learned_skills import write_learned_skill
from tests.test_cli import cli

# an "editor" that appends a step to the file it is given, as a user would
EDITOR_SCRIPT = """import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text + "3. Check the header row\\n")
"""


def test_list_and_show(tea_home: Path):
    empty = cli("skills", "learned")
    assert empty.returncode == 0, empty.stderr
    assert "no learned skills yet" in empty.stdout
    write_learned_skill(tea_home)
    listed = cli("skills")  # "learned" and "list" are the defaults
    assert listed.returncode == 0, listed.stderr
    line = listed.stdout.splitlines()[0].split()
    assert line[:4] == ["count-csv-rows", "v2", "5/5", "2025-01-02"]
    assert "no uses recorded" in listed.stdout and "1 learned skill(s)" in listed.stdout
    (data,) = json.loads(cli("skills", "learned", "list", "--json").stdout)
    assert (data["name"], data["version"], data["uses"]) == ("count-csv-rows", 2, None)
    assert data["path"] == str(learned_dir(tea_home) / "count-csv-rows" / "SKILL.md")

    shown = cli("skills", "learned", "show", "count-csv-rows")
    assert shown.returncode == 0, shown.stderr
    assert "# older versions: v1" in shown.stdout and "name: count-csv-rows" in shown.stdout
    detail = json.loads(cli("skills", "learned", "show", "count-csv-rows", "--json").stdout)
    assert [v["version"] for v in detail["versions"]] == [1]


def test_edit_in_the_editor_keeps_the_old_text(tea_home: Path, tmp_path: Path, monkeypatch):
    folder = write_learned_skill(tea_home)
    before = (folder / "SKILL.md").read_text(encoding="utf-8")
    script = tmp_path / "editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    edited = cli("skills", "learned", "edit", "count-csv-rows")
    assert edited.returncode == 0, edited.stderr
    assert "saved count-csv-rows as version 3" in edited.stdout
    assert (folder / "SKILL.md").read_text(encoding="utf-8").endswith("3. Check the header row\n")
    assert (folder / "versions" / "v2.md").read_text(encoding="utf-8") == before

    monkeypatch.setenv("EDITOR", f"{sys.executable} -c 'raise SystemExit(3)'")
    failed = cli("skills", "learned", "edit", "count-csv-rows")
    assert failed.returncode == 1 and "the editor exited with 3" in failed.stderr


def test_edit_from_stdin_refuses_a_broken_text(tea_home: Path):
    folder = write_learned_skill(tea_home)
    before = (folder / "SKILL.md").read_text(encoding="utf-8")
    refused = cli("skills", "learned", "edit", "count-csv-rows", "--stdin", stdin="no front matter")
    assert refused.returncode == 1
    assert "front matter" in refused.stderr and "nothing changed" in refused.stderr
    assert (folder / "SKILL.md").read_text(encoding="utf-8") == before
    same = cli("skills", "learned", "edit", "count-csv-rows", "--stdin", stdin=before)
    assert same.returncode == 0 and "no change" in same.stdout
    fixed = before.replace("Count the lines", "Count the lines, not the header")
    saved = cli("skills", "learned", "edit", "count-csv-rows", "--stdin", stdin=fixed)
    assert saved.returncode == 0, saved.stderr
    assert "not the header" in (folder / "SKILL.md").read_text(encoding="utf-8")


def test_promote_and_delete(tea_home: Path):
    write_learned_skill(tea_home)
    write_learned_skill(tea_home, "tidy-imports")
    promoted = cli("skills", "learned", "promote", "count-csv-rows")
    assert promoted.returncode == 0, promoted.stderr
    assert (tea_home / "skills" / "count-csv-rows" / "SKILL.md").is_file()
    again = cli("skills", "learned", "promote", "count-csv-rows")
    assert again.returncode == 1 and "no learned skill named 'count-csv-rows'" in again.stderr
    deleted = cli("skills", "learned", "delete", "tidy-imports")
    assert deleted.returncode == 0, deleted.stderr
    assert not learned_dir(tea_home).joinpath("tidy-imports").exists()
    assert "no learned skills yet" in cli("skills", "learned").stdout


def test_a_name_is_needed_and_checked():
    missing = cli("skills", "learned", "show")
    assert missing.returncode == 2 and "needs the skill's NAME" in missing.stderr
    bad = cli("skills", "learned", "delete", "../skills")
    assert bad.returncode == 1 and "is not a skill name" in bad.stderr

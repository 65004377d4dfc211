"""The workspace tasks' judges on prepared workspaces: the right effect passes, others fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from teaeval.runner import find_tasks
from teaeval.sandbox import AgentRun, Sandbox
from teaeval.task import Case, JudgeInput, Task, Verdict, has_number, has_word


def answered(text: str) -> AgentRun:
    return AgentRun(0, "", "", 1.0, {"ok": True, "answer": text, "topic_id": "t1"})


def no_cli(args):
    raise AssertionError("this judge needs no CLI")


class Prepared:
    """One task's case laid out in a temp workspace, judged with a given answer."""

    def __init__(self, name: str, tmp_path: Path) -> None:
        self.task: Task = find_tasks([name])[0]
        self.case: Case = self.task.case("test-seed")
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        Sandbox(tmp_path, self.workspace, tmp_path).lay_out(self.case.files, self.workspace)

    def write(self, name: str, text: str) -> None:
        (self.workspace / name).write_text(text, encoding="utf-8")

    def judge(self, answer: str = "") -> Verdict:
        given = JudgeInput(self.workspace, self.workspace, self.case, [answered(answer)], no_cli)
        return self.task.judge(given)


@pytest.fixture
def prepared(tmp_path):
    return lambda name: Prepared(name, tmp_path)


def test_the_same_seed_makes_the_same_case():
    [task] = find_tasks(["count_lines"])
    assert task.case(7) == task.case(7)
    assert {task.case(seed).facts["lines"] for seed in range(20)} != {task.case(7).facts["lines"]}


def test_hello_py(prepared):
    p = prepared("hello_py")
    assert not p.judge().passed
    p.write("hello.py", "print('goodbye')\n")
    assert not p.judge().passed
    p.write("hello.py", "print('Hello, World!')\n")
    assert p.judge().passed


def test_read_number(prepared):
    p = prepared("read_number")
    code = p.case.facts["code"]
    assert str(code) in (p.workspace / "notes.txt").read_text()
    assert p.judge(f"The warehouse door code is {code}.").passed
    assert not p.judge(f"The code is {code + 1}.").passed
    assert not p.judge(f"It is {code}9.").passed


def test_fix_bug(prepared):
    p = prepared("fix_bug")
    verdict = p.judge()
    assert not verdict.passed and "still fails" in verdict.reason
    fixed = (
        (p.workspace / "stats.py")
        .read_text()
        .replace(
            "ordered[middle] + ordered[middle - 1] / 2",
            "(ordered[middle] + ordered[middle - 1]) / 2",
        )
    )
    p.write("stats.py", fixed)
    assert p.judge().passed
    p.write("test_stats.py", "print('no tests')\n")
    assert "changed" in p.judge().reason


def test_find_file(prepared):
    p = prepared("find_file")
    target = p.case.facts["target"]
    assert "heron" in (p.workspace / target).read_text()
    name = target.rsplit("/", 1)[-1]
    assert p.judge(f"It is `{target}`.").passed
    assert not p.judge("It is nowhere.").passed
    others = [path for path in p.case.facts["paths"] if path != target]
    listing = ", ".join([target, *others])
    assert not p.judge(f"Maybe one of {listing}").passed
    assert p.judge(f"The heron is mentioned in {name}.").passed


def test_count_lines(prepared):
    p = prepared("count_lines")
    count = len((p.workspace / "data.txt").read_text().splitlines())
    assert count == p.case.facts["lines"]
    assert p.judge(f"data.txt has {count} lines.").passed
    assert not p.judge(f"data.txt has {count - 1} lines.").passed


def test_write_word(prepared):
    p = prepared("write_word")
    word = p.case.facts["word"]
    assert not p.judge().passed
    p.write("word.txt", f"{word}\n")
    assert p.judge().passed
    p.write("word.txt", f"The word is {word}\n")
    assert not p.judge().passed


def test_rename_function(prepared):
    p = prepared("rename_function")
    assert "still mentions area_sq" in p.judge().reason
    for name in ("geometry.py", "report.py"):
        p.write(name, (p.workspace / name).read_text().replace("area_sq", "square_area"))
    assert p.judge().passed
    p.write("report.py", "def report(side):\n    return 'area=?'\n")
    assert not p.judge().passed


def test_rename_half_done_fails(prepared):
    p = prepared("rename_function")
    geometry = (p.workspace / "geometry.py").read_text().replace("area_sq", "square_area")
    p.write("geometry.py", geometry)
    assert "report.py still mentions area_sq" in p.judge().reason


def test_find_todo(prepared):
    p = prepared("find_todo")
    target = p.case.facts["target"]
    assert "TODO" in (p.workspace / "src" / target).read_text()
    assert p.judge(f"The TODO is in src/{target}.").passed
    other = next(n for n in p.case.facts["names"] if n != target)
    assert not p.judge(f"The TODO is in src/{other}.").passed


def test_run_script(prepared):
    p = prepared("run_script")
    from teaeval.task import run_python

    printed = run_python(p.workspace, ["compute.py"]).stdout.strip()
    assert int(printed) == p.case.facts["total"]
    assert p.judge(f"It prints {printed}.").passed
    assert p.judge(f"It prints {int(printed):,}.").passed
    assert not p.judge("It prints 42.").passed


def test_number_and_word_matching():
    assert has_number("about 1,234 lines", 1234) and has_number("48213.", 48213)
    assert not has_number("148213", 48213) and not has_number("48213.5", 48213)
    assert has_word("It is `birds.txt`.", "birds.txt")
    assert not has_word("old_birds.txt", "birds.txt") and not has_word("tealish", "teal")

"""toolkit_format_code, toolkit_code_review and toolkit_run_tests, with the real programs."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import get_args

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.dev.codereview import toolkit_code_review
from tea_agent_mini.tools.dev.formatting import (
    FORMATTERS,
    FormatterChoice,
    toolkit_format_code,
)
from tea_agent_mini.tools.dev.pyreview import review_source
from tea_agent_mini.tools.dev.testrun import parse_pytest_output, toolkit_run_tests

UGLY = "x=1\ndef f( a ):\n  return a\n"
SEEDED = """import os
import json
from typing import List


def handler(items=[], list=None):  # TODO: stop shadowing
    try:
        return json.dumps(items)
    except:
        return None


def long_one():
    a = 1
    b = 2
    c = 3
    d = 4
    return a + b + c + d
"""
REAL_RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
needs_ruff = pytest.mark.skipif(REAL_RUFF is None, reason="ruff is not installed")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX PATH handling")


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


@pytest.fixture
def only_ruff_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding ruff and nothing else: the other formatters are certainly missing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ruff").symlink_to(REAL_RUFF)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


# ---- toolkit_format_code -------------------------------------------------------------------


@needs_ruff
def test_ruff_formats_python_and_reports_missing_clang_format(ctx, workspace, only_ruff_on_path):
    (workspace / "ugly.py").write_text(UGLY)
    (workspace / "tidy.py").write_text("y = 2\n")
    (workspace / "main.c").write_text("int main(){return 0;}\n")
    out = toolkit_format_code(ctx, ".")
    assert "ruff: reformatted 1 of 2 file(s): ugly.py" in out
    assert "not formatted: 1 C/C++ file(s): clang-format not installed" in out
    assert (workspace / "ugly.py").read_text() == "x = 1\n\n\ndef f(a):\n    return a\n"
    assert (workspace / "main.c").read_text() == "int main(){return 0;}\n"


@needs_ruff
def test_check_mode_writes_nothing(ctx, workspace, only_ruff_on_path):
    (workspace / "ugly.py").write_text(UGLY)
    out = toolkit_format_code(ctx, "ugly.py", formatter="ruff", check=True)
    assert "would reformat" in out and "nothing written" in out
    assert (workspace / "ugly.py").read_text() == UGLY


def test_missing_formatters_are_named(ctx, workspace, empty_path):
    (workspace / "ugly.py").write_text(UGLY)
    with pytest.raises(ToolError, match="Python file.*ruff or black not installed"):
        toolkit_format_code(ctx, ".")
    with pytest.raises(ToolError, match="ruff is not installed .*Installed formatters: none"):
        toolkit_format_code(ctx, "ugly.py", formatter="ruff")
    assert (workspace / "ugly.py").read_text() == UGLY


def test_formatter_choices_are_auto_and_the_known_formatters():
    assert get_args(FormatterChoice) == ("auto", *FORMATTERS)


# ---- toolkit_code_review -------------------------------------------------------------------


def test_builtin_checks_flag_the_seeded_problems():
    findings = {(f.line, f.rule) for f in review_source(SEEDED, "seeded.py", 5)}
    assert findings >= {
        (1, "unused-import"),  # os
        (3, "unused-import"),  # List
        (6, "mutable-default"),
        (6, "shadowed-builtin"),
        (6, "todo"),
        (9, "bare-except"),
        (13, "long-function"),
    }
    assert (2, "unused-import") not in findings  # json is used


@pytest.mark.parametrize(
    ("source", "unused"),
    [
        ('"""Uses json in prose."""\nimport json\n', True),
        ('import json\n\nx: "json.JSONDecoder"\n', False),
        ('from a import b\n\n__all__ = ["b"]\n', False),
        ("from a import b as b\n", False),
        ("import os.path\n\nos.getcwd()\n", False),
    ],
)
def test_unused_import_detection(source, unused):
    rules = [f.rule for f in review_source(source, "m.py")]
    assert ("unused-import" in rules) is unused


def test_syntax_errors_are_reported():
    (finding,) = review_source("def broken(:\n    pass\n", "bad.py")
    assert (finding.line, finding.rule, finding.severity) == (1, "syntax-error", "error")


def test_review_without_ruff(ctx, workspace, empty_path):
    (workspace / "seeded.py").write_text(SEEDED)
    (workspace / "bad.py").write_text("x = (\n")
    out = toolkit_code_review(ctx, ".", max_function_lines=5)
    assert "reviewed 2 Python file(s)" in out
    assert "ruff is not installed" in out
    assert "seeded.py:9: [bare-except]" in out
    assert "seeded.py:1: [unused-import] 'os' is imported but not used" in out
    assert "bad.py:1: [syntax-error]" in out
    assert not list(workspace.rglob("*.pyc"))  # compiling wrote no bytecode


@needs_ruff
def test_review_adds_ruff_findings(ctx, workspace, only_ruff_on_path):
    (workspace / "ruff.toml").write_text('[lint]\nselect = ["F", "E7"]\n')  # project config
    (workspace / "seeded.py").write_text(SEEDED)
    out = toolkit_code_review(ctx, "seeded.py")
    assert "seeded.py:1: [ruff F401]" in out
    assert "seeded.py:1: [unused-import]" not in out  # the same finding is not listed twice
    assert "seeded.py:9: [ruff E722]" in out and "[bare-except]" not in out
    assert "seeded.py:6: [mutable-default]" in out  # B006 is not selected: ours stays
    assert "[ruff I001]" not in out
    assert not (workspace / ".ruff_cache").exists()


# ---- toolkit_run_tests ---------------------------------------------------------------------


def test_run_tests_counts_and_names_failures(ctx, workspace):
    tests = workspace / "tests"
    tests.mkdir()
    (tests / "test_demo.py").write_text(
        "def test_passes():\n    assert 1 + 1 == 2\n\n\ndef test_fails():\n    assert 'a' == 'b'\n"
    )
    out = toolkit_run_tests(ctx, "tests", timeout=60)
    first = out.splitlines()[0]
    assert first.startswith("pytest: 1 passed, 1 failed in ")
    assert first.endswith("(exit code 1: some tests failed)")
    assert "failing tests:\n  tests/test_demo.py::test_fails\n" in out


def test_run_tests_refuses_bad_arguments(ctx):
    with pytest.raises(ToolError, match="does not exist"):
        toolkit_run_tests(ctx, "no_such_dir")
    with pytest.raises(ToolError, match="'missing.py' does not exist"):
        toolkit_run_tests(ctx, "missing.py::test_name")
    with pytest.raises(ToolError, match="cannot split args"):
        toolkit_run_tests(ctx, ".", args="-k 'unclosed")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "FAILED t.py::test_a - assert 0\nERROR t.py::test_b - RuntimeError\n"
            "==== 1 failed, 2 passed, 1 error, 3 skipped, 1 warning in 1.25s ====",
            {"passed": 2, "failed": 1, "errors": 1, "skipped": 3, "warnings": 1},
        ),
        ("2 passed, 1 xfailed, 4 deselected in 0.03s", {"passed": 2, "xfailed": 1}),
        ("ERROR tests/test_x.py\n1 error in 0.10s", {"errors": 1}),
        ("no tests ran in 0.01s", {"passed": 0}),
    ],
)
def test_summary_parsing(output, expected):
    summary = parse_pytest_output(output)
    for key, value in expected.items():
        assert getattr(summary, key) == value
    assert summary.duration is not None
    if "FAILED" in output:
        assert summary.failing == ["t.py::test_a", "t.py::test_b"]

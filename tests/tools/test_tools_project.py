"""toolkit_read_pyproject, toolkit_release_version and toolkit_build on real files."""

from __future__ import annotations

import datetime as dt
import importlib.util
import shutil
from pathlib import Path

import pytest

from tea_agent_mini import _version
from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.dev.project import detect_kind, toolkit_build, toolkit_read_pyproject
from tea_agent_mini.tools.dev.release import bump, toolkit_release_version
from tea_agent_mini.tools.files.diffs import toolkit_diff

ROOT = Path(__file__).resolve().parents[2]
TODAY = dt.date.today().isoformat()
STATIC = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "demo"
version = "1.2.3"  # keep in sync
dependencies = []

[tool.other]
version = "9.9.9"
"""


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


# ---- toolkit_read_pyproject ----------------------------------------------------------------


def test_reads_this_repository(tea_home):
    ctx = ToolContext(workspace=ROOT, home=tea_home)
    info = toolkit_read_pyproject(ctx)
    assert info["name"] == "tea_agent_mini"
    assert info["version"] == _version.__version__
    assert info["version_source"] == "tea_agent_mini/_version.py __version__"
    assert any(dep.startswith("httpx") for dep in info["dependencies"])
    assert info["build_backend"] == "hatchling.build"
    assert {"ruff", "pytest", "hatch"} <= set(info["tool_sections"])
    assert info["scripts"] == {"tea-agent-mini": "tea_agent_mini.__main__:main"}
    raw = toolkit_read_pyproject(ctx, raw=True)
    assert raw["data"]["tool"]["ruff"]["line-length"] == 100


def test_read_pyproject_reports_parse_errors(ctx, workspace):
    (workspace / "pyproject.toml").write_text("[project\nname = 'x'\n")
    with pytest.raises(ToolError, match="cannot parse pyproject.toml"):
        toolkit_read_pyproject(ctx)


# ---- toolkit_release_version ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "part", "expected"),
    [
        ("1.2.3", "patch", "1.2.4"),
        ("1.2.3", "minor", "1.3.0"),
        ("1.2.3", "major", "2.0.0"),
        ("0.9", "patch", "0.9.1"),
        ("2.0.0rc1", "minor", "2.1.0"),
    ],
)
def test_bump(version, part, expected):
    assert bump(version, part) == expected


def test_release_bumps_pyproject_and_creates_changelog(ctx, workspace):
    (workspace / "pyproject.toml").write_text(STATIC)
    out = toolkit_release_version(ctx, "minor", changelog="Add search\n- Fix crash")
    assert "version 1.2.3 -> 1.3.0 in pyproject.toml" in out
    text = (workspace / "pyproject.toml").read_text()
    assert 'version = "1.3.0"  # keep in sync' in text
    assert 'version = "9.9.9"' in text  # other tables are left alone
    assert (workspace / "CHANGELOG.md").read_text() == (
        f"# Changelog\n\n## [1.3.0] - {TODAY}\n\n- Add search\n- Fix crash\n"
    )


def test_release_prepends_to_an_existing_changelog_and_can_be_undone(ctx, workspace):
    (workspace / "pyproject.toml").write_text(STATIC)
    old_log = "# Changelog\n\nAll notable changes.\n\n## [1.2.3] - 2020-01-01\n\n- Old\n"
    (workspace / "CHANGELOG.md").write_text(old_log)
    toolkit_release_version(ctx, "set", version="2.0.0", changelog="Big release")
    log = (workspace / "CHANGELOG.md").read_text()
    assert log.startswith(
        f"# Changelog\n\nAll notable changes.\n\n## [2.0.0] - {TODAY}\n\n- Big release\n\n"
        "## [1.2.3] - 2020-01-01"
    )
    toolkit_diff(ctx, "undo")
    assert (workspace / "CHANGELOG.md").read_text() == old_log
    assert 'version = "1.2.3"' in (workspace / "pyproject.toml").read_text()


def test_release_edits_the_hatch_version_file(ctx, workspace):
    (workspace / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndynamic = ["version"]\n\n'
        '[tool.hatch.version]\npath = "demo/_version.py"\n'
    )
    (workspace / "demo").mkdir()
    (workspace / "demo/_version.py").write_text("__version__ = '0.1.0'\n")
    out = toolkit_release_version(ctx, "patch")
    assert "version 0.1.0 -> 0.1.1 in demo/_version.py" in out
    assert (workspace / "demo/_version.py").read_text() == "__version__ = '0.1.1'\n"
    assert f"## [0.1.1] - {TODAY}\n\n- Release 0.1.1\n" in (workspace / "CHANGELOG.md").read_text()


def test_release_finds_a_package_version_without_pyproject(ctx, workspace):
    (workspace / "src/pkg").mkdir(parents=True)
    (workspace / "src/pkg/__init__.py").write_text('"""Doc."""\n__version__ = "3.4.5"\n')
    toolkit_release_version(ctx, "major")
    assert '__version__ = "4.0.0"' in (workspace / "src/pkg/__init__.py").read_text()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"part": "set"}, "needs a version"),
        ({"part": "set", "version": "1.2.3"}, "already 1.2.3"),
        ({"part": "huge"}, "unknown part"),
    ],
)
def test_release_refusals(ctx, workspace, kwargs, message):
    (workspace / "pyproject.toml").write_text(STATIC)
    with pytest.raises(ToolError, match=message):
        toolkit_release_version(ctx, **kwargs)
    assert (workspace / "pyproject.toml").read_text() == STATIC
    assert not (workspace / "CHANGELOG.md").exists()


def test_release_without_any_version(ctx):
    with pytest.raises(ToolError, match="no version found"):
        toolkit_release_version(ctx)


# ---- toolkit_build -------------------------------------------------------------------------


def test_detect_kind(workspace):
    assert detect_kind(workspace) is None
    (workspace / "package.json").write_text("{}")
    assert detect_kind(workspace) == "npm"
    (workspace / "Makefile").write_text("all:\n")
    assert detect_kind(workspace) == "make"
    (workspace / "pyproject.toml").write_text(STATIC)
    assert detect_kind(workspace) == "python"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_build_runs_the_target(ctx, workspace):
    (workspace / "Makefile").write_text("all:\n\techo built > out.txt\nother:\n\techo other\n")
    out = toolkit_build(ctx)
    assert out.startswith("build (make):") and "exit code: 0" in out
    assert (workspace / "out.txt").read_text() == "built\n"
    failing = toolkit_build(ctx, target="missing-target")
    assert "exit code: 2" in failing and "missing-target" in failing


def test_missing_build_tool_is_named(ctx, workspace, tmp_path, monkeypatch):
    (workspace / "Makefile").write_text("all:\n")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(ToolError, match="make is not installed"):
        toolkit_build(ctx)
    with pytest.raises(ToolError, match="invalid target"):
        toolkit_build(ctx, target="all; rm -rf /")


@pytest.mark.skipif(
    importlib.util.find_spec("hatchling") is None, reason="needs the hatchling backend"
)
def test_python_build_makes_a_wheel_offline(ctx, workspace):
    (workspace / "pyproject.toml").write_text(STATIC.replace('"demo"', '"demo_pkg"'))
    (workspace / "demo_pkg").mkdir()
    (workspace / "demo_pkg/__init__.py").write_text("")
    out = toolkit_build(ctx, kind="python", target="wheel", no_isolation=True, timeout=120)
    assert "exit code: 0" in out, out
    assert "artifacts: dist/demo_pkg-1.2.3-py" in out
    assert list((workspace / "dist").glob("demo_pkg-1.2.3-*.whl"))

"""build_mini.py: static checks, whitelist listing, reproducible builds, and the venv proof.

Most cases run against a small synthetic project (the real hook and build helpers copied in, a
toy package with one shipped and one excluded tool), so each check can be made to fail on
purpose. The real tree is checked and built too; the full venv proof installs the runtime
dependencies from PyPI (about 15 s here) and can be skipped with TEA_AGENT_SKIP_WHEEL_PROOF=1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_MINI = ROOT / "build_mini.py"
CAN_BUILD = all(importlib.util.find_spec(name) for name in ("build", "hatchling"))
needs_backend = pytest.mark.skipif(
    not CAN_BUILD, reason="needs the `build` and `hatchling` packages installed (offline build)"
)

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.18"]
build-backend = "hatchling.build"

[project]
name = "tea_agent_mini"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = ["httpx>=0.24", "PyYAML>=5.4", "requests>=2.28", "starlette>=0.27",
                "uvicorn>=0.22", "python-multipart>=0.0.6"]

[project.optional-dependencies]
test = ["pytest>=7.4", "openai>=1.30"]

[project.scripts]
tea-agent-mini = "tea_agent_mini.__main__:main"

[tool.hatch.version]
path = "tea_agent_mini/_version.py"

[tool.hatch.build.hooks.custom]
path = "hatch_build.py"

[tool.hatch.build.targets.wheel]
packages = ["tea_agent_mini"]

[tool.hatch.build.targets.sdist]
include = ["tea_agent_mini", "tests", "pyproject.toml"]
"""

TOOL_MODULE = """\
from __future__ import annotations

from tea_agent_mini.toolkit.registry import tool

PARAMETERS = {{"type": "object", "properties": {{}}}}
REQUIRES = {requires!r}


@tool({name!r}, "a test tool", PARAMETERS, requires=REQUIRES)
def run(ctx):
    {body}
"""

PACKAGE_FILES = {
    "tea_agent_mini/__init__.py": '"""Toy package."""\n',
    "tea_agent_mini/_version.py": '__version__ = "9.8.7"\n',
    "tea_agent_mini/__main__.py": "import sys\n\n\ndef main():\n    return 0\n",
    "tea_agent_mini/toolkit/__init__.py": "",
    "tea_agent_mini/toolkit/registry.py": "def tool(name, description, parameters, **kw):\n"
    "    return lambda func: func\n",
    "tea_agent_mini/toolkit/manifest.py": (
        'SHIPPED: dict[str, str] = {"files.read": "toolkit_file"}\n'
        'EXCLUDED: dict[str, str] = {"browser": "needs playwright", "ocr": "needs PIL"}\n'
    ),
    "tea_agent_mini/tools/__init__.py": "",
    "tea_agent_mini/tools/files/__init__.py": "",
    "tea_agent_mini/tools/files/read.py": TOOL_MODULE.format(
        name="toolkit_file", requires=(), body="import json\n    return json.dumps({})"
    ),
    "tea_agent_mini/tools/browser.py": TOOL_MODULE.format(
        name="toolkit_browser", requires=("playwright",), body="import playwright\n    return 1"
    ),
    "tea_agent_mini/server/__init__.py": "",
    "tea_agent_mini/server/static/index.html": "<!doctype html><title>t</title>\n",
    "tea_agent_mini/server/static/app.js": "console.log('t');\n",
    "tea_agent_mini/skills/__init__.py": "",
    "tea_agent_mini/skills/bundled/demo/SKILL.md": "---\nname: demo\n---\nA demo skill.\n",
    "tests/test_nothing.py": "def test_nothing():\n    assert True\n",
    "pyproject.toml": PYPROJECT,
}


def make_project(base: Path) -> Path:
    project = base / "project"
    for rel, text in PACKAGE_FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    shutil.copy2(ROOT / "hatch_build.py", project / "hatch_build.py")
    shutil.copytree(
        ROOT / "scripts" / "buildlib",
        project / "scripts" / "buildlib",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def build_mini(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    return subprocess.run(
        [sys.executable, str(BUILD_MINI), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def report_of(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout)


def test_check_passes_on_a_clean_project(project: Path) -> None:
    result = build_mini("--root", str(project), "--check", "--json")
    report = report_of(result)
    assert result.returncode == 0, report["failures"]
    assert report["ok"] and report["failures"] == []
    assert report["tools"]["count"] == 1
    assert report["tools"]["excluded"] == {"tea_agent_mini/tools/browser.py": "needs playwright"}
    assert "artifacts" not in report  # --check builds nothing
    assert not (project / "dist").exists()


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        (
            "tea_agent_mini/extra.py",
            "def f():\n    if True:\n        import numpy\n",
            "imports numpy, which the package must never use",
        ),
        ("tea_agent_mini/gui.py", "import tkinter\n", "imports tkinter, which the package"),
        (
            "tea_agent_mini/dyn.py",
            "import importlib\nx = importlib.import_module('pydantic')\n",
            "imports pydantic, which the package must never use",
        ),
        ("tea_agent_mini/trans.py", "import anyio\n", "imports anyio, outside the stdlib"),
        (
            "tea_agent_mini/eager.py",
            "import pg8000.native\n\n\ndef connect():\n    import pg8000\n",
            "imports pg8000.native (an optional extra) when the module loads",
        ),
        (
            "tea_agent_mini/tools/files/uses_excluded.py",
            "from ..browser import run\n",
            "imports tea_agent_mini.tools.browser, which is excluded in the wheel",
        ),
        (
            "tea_agent_mini/lost.py",
            "import tea_agent_mini.nothere\n",
            "imports tea_agent_mini.nothere, which is missing in the wheel",
        ),
        ("tea_agent_mini/broken.py", "def f(:\n", "broken.py: SyntaxError"),
        (
            "tea_agent_mini/toolkit/manifest.py",
            'SHIPPED = {"files.read": "f", "browser": "b"}\nEXCLUDED = {}\n',
            "tool toolkit_browser requires playwright, outside the runtime dependencies: "
            "move browser to EXCLUDED",
        ),
        (
            "tea_agent_mini/toolkit/manifest.py",
            'SHIPPED = {"files.read": "f", "ghost.x": "g"}\nEXCLUDED = {"browser": "b"}\n',
            "SHIPPED names ghost.x, but tea_agent_mini/tools/ghost/x.py does not exist",
        ),
        (
            "tea_agent_mini/toolkit/manifest.py",
            'SHIPPED = {"files.read": "f"}\nEXCLUDED = {"files.read": "x", "browser": "b"}\n',
            "files.read is in both SHIPPED and EXCLUDED",
        ),
        (
            "tea_agent_mini/toolkit/manifest.py",
            "SHIPPED = dict(files='f')\nEXCLUDED = {}\n",
            "SHIPPED must be a literal dict",
        ),
        (
            "tea_agent_mini/tools/files/write.py",
            "from tea_agent_mini.toolkit.registry import tool\n\n\n"
            "@tool('toolkit_write', 'd', {})\ndef w(ctx):\n    return 1\n",
            "tool module files.write is in neither SHIPPED nor EXCLUDED",
        ),
        (
            "tea_agent_mini/tools/dynamic.py",
            "from tea_agent_mini.toolkit.registry import tool\nNEEDS = compute()\n\n\n"
            "@tool('toolkit_dyn', 'd', {}, requires=NEEDS)\ndef d(ctx):\n    return 1\n",
            "requires is not a literal",
        ),
        (
            "tea_agent_mini/__main__.py",
            "def not_main():\n    return 0\n",
            "defines no top-level main",
        ),
    ],
)
def test_check_fails_with_the_reason(project: Path, rel: str, text: str, expected: str) -> None:
    (project / rel).write_text(text, encoding="utf-8")
    result = build_mini("--root", str(project), "--check", "--json")
    report = report_of(result)
    assert result.returncode == 1
    assert any(expected in failure for failure in report["failures"]), report["failures"]


def test_check_fails_without_static_files(project: Path) -> None:
    shutil.rmtree(project / "tea_agent_mini/server/static")
    report = report_of(build_mini("--root", str(project), "--check", "--json"))
    assert any("server/static/ is missing or empty" in f for f in report["failures"])


def test_check_fails_on_an_undeclared_runtime_dependency(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('"requests>=2.28"', '"requests>=2.28", "numpy"')
    )
    report = report_of(build_mini("--root", str(project), "--check", "--json"))
    expected = (
        "dependencies: pyproject declares numpy, which is not a known mini runtime dependency"
    )
    assert expected in report["failures"]


def test_type_checking_imports_are_not_runtime_imports(project: Path) -> None:
    (project / "tea_agent_mini/typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numpy\nelse:\n"
        "    import json\n",
        encoding="utf-8",
    )
    result = build_mini("--root", str(project), "--check", "--json")
    assert result.returncode == 0, report_of(result)["failures"]


def test_list_shows_included_and_excluded_tools(project: Path) -> None:
    result = build_mini("--root", str(project), "--list", "--json")
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["shipped"] == {"files.read": ["toolkit_file"]}
    assert listing["excluded"] == {"tea_agent_mini/tools/browser.py": "needs playwright"}
    assert listing["excluded_not_in_tree"] == {"ocr": "needs PIL"}
    text = build_mini("--root", str(project), "--list").stdout
    assert "+ files.read" in text and "toolkit_file" in text
    assert "- tea_agent_mini/tools/browser.py" in text and "needs playwright" in text


def test_list_on_the_real_tree() -> None:
    result = build_mini("--list", "--json")
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["count"] == sum(len(tools) for tools in listing["shipped"].values()) > 0
    assert "toolkit_file" in listing["shipped"]["files.files"]


def test_check_on_the_real_tree() -> None:
    result = build_mini("--check", "--json")
    report = report_of(result)
    assert result.returncode == 0, "\n".join(report["failures"])


def wheel_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


@needs_backend
def test_two_builds_are_identical_and_apply_the_whitelist(project: Path, tmp_path: Path) -> None:
    ocr = project / "tea_agent_mini/tools/ocr"  # an excluded tool family that is a subpackage
    ocr.mkdir()
    (ocr / "__init__.py").write_text(
        TOOL_MODULE.format(name="toolkit_ocr", requires=("PIL",), body="import PIL\n    return 1")
    )
    (ocr / "engine.py").write_text("import PIL\n")
    outputs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        result = build_mini("--root", str(project), "--no-proof", "--out-dir", str(out), "--json")
        report = report_of(result)
        assert result.returncode == 0, report["failures"]
        outputs.append(out)
    for name in ("tea_agent_mini-9.8.7-py3-none-any.whl", "tea_agent_mini-9.8.7.tar.gz"):
        assert (outputs[0] / name).read_bytes() == (outputs[1] / name).read_bytes(), name
    names = wheel_names(outputs[0] / "tea_agent_mini-9.8.7-py3-none-any.whl")
    assert "tea_agent_mini/tools/files/read.py" in names
    assert "tea_agent_mini/tools/browser.py" not in names
    assert not [n for n in names if n.startswith("tea_agent_mini/tools/ocr")]
    assert "tea_agent_mini/server/static/index.html" in names
    assert "tea_agent_mini/skills/bundled/demo/SKILL.md" in names
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "hatch_build"))]


@needs_backend
def test_the_backend_applies_the_whitelist_on_its_own(project: Path, tmp_path: Path) -> None:
    """`python -m build` without build_mini.py still leaves excluded tools out."""
    out = tmp_path / "plain"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(project)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    names = wheel_names(out / "tea_agent_mini-9.8.7-py3-none-any.whl")
    assert "tea_agent_mini/tools/files/read.py" in names
    assert "tea_agent_mini/tools/browser.py" not in names


@needs_backend
def test_wheel_inspection_fails_when_the_hook_is_bypassed(project: Path, tmp_path: Path) -> None:
    """The wheel is opened and checked, not trusted: with the hook gone, browser.py leaks."""
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.hatch.build.hooks.custom]\n", ""))
    pyproject.write_text(pyproject.read_text().replace('path = "hatch_build.py"\n', ""))
    out = tmp_path / "out"
    report = report_of(
        build_mini("--root", str(project), "--no-proof", "--out-dir", str(out), "--json")
    )
    assert not report["ok"]
    assert (
        "wheel contents: tea_agent_mini/tools/browser.py: excluded by the toolkit whitelist "
        "but present" in report["failures"]
    )


@needs_backend
def test_size_budget_fails_the_build(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("--root", str(project), "--no-proof", "--out-dir", str(out), "--json")
    report = report_of(build_mini(*args, "--budget-kb", "1"))
    assert not report["ok"]
    assert any(f.startswith("wheel size: the wheel is") for f in report["failures"])


@needs_backend
def test_real_tree_builds_reproducibly(tmp_path: Path) -> None:
    digests = []
    for n in (1, 2):
        out = str(tmp_path / f"o{n}")
        # the size budget is judged by the full build below; here only the bytes matter
        result = build_mini("--no-proof", "--out-dir", out, "--budget-kb", "100000", "--json")
        report = report_of(result)
        assert result.returncode == 0, "\n".join(report["failures"])
        digests.append(
            (report["artifacts"]["wheel"]["sha256"], report["artifacts"]["sdist"]["sha256"])
        )
    assert digests[0] == digests[1]
    # the wheel's long description is the user guide, not the developers' README
    wheel = next((tmp_path / "o1").glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode()
    guide = (ROOT / "README.mini.md").read_text(encoding="utf-8")
    assert "Description-Content-Type: text/markdown" in metadata
    assert guide.strip().splitlines()[2] in metadata and "Run the tests" not in metadata


@needs_backend
@pytest.mark.skipif(
    os.environ.get("TEA_AGENT_SKIP_WHEEL_PROOF") == "1", reason="TEA_AGENT_SKIP_WHEEL_PROOF=1"
)
@pytest.mark.timeout(600)
def test_real_wheel_proof_in_a_fresh_venv(tmp_path: Path) -> None:
    result = build_mini("--out-dir", str(tmp_path / "dist"), "--json", timeout=600)
    report = report_of(result)
    steps = {c["name"]: c for c in report["checks"] if c["name"].startswith("proof: ")}
    proof_failures = [f for f in report["failures"] if f.startswith("proof")]
    assert steps and not proof_failures, "\n".join(report["failures"])
    assert set(steps) == {
        "proof: install",
        "proof: import location",
        "proof: --version",
        "proof: tools --json",
        "proof: scripted model",
        "proof: serve /health and /",
        "proof: chat turn with a tool call",
    }
    assert all(step["ok"] for step in steps.values())
    assert report["installed"]["package_bytes"] > 0
    assert "pip" not in report["installed"]["per_dist"]
    assert steps["proof: --version"]["detail"] == f"tea-agent-mini {report['version']}"
    # and the build as a whole (static checks, wheel contents, size budget) passes
    assert result.returncode == 0, "\n".join(report["failures"])

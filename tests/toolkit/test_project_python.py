"""Which Python the build and test tools run: the project's virtualenv first, never the compiled
executable itself. Real virtualenvs, made with ``python -m venv``."""

from __future__ import annotations

import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit import programs
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import project_python, python_has
from tea_agent_mini.tools.dev.testrun import toolkit_run_tests


def make_venv(where: Path, *, see_our_packages: bool = False) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    if see_our_packages:
        # the venv's site-packages gets a .pth naming ours, so it can import pytest
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
        Path(purelib, "outer.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


needs_posix = pytest.mark.skipif(sys.platform.startswith("win"), reason="bin/ layout of venvs")


@needs_posix
def test_a_virtualenv_in_the_project_or_above_it_wins(workspace, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    project = workspace / "app" / "src"
    project.mkdir(parents=True)
    assert project_python(project, workspace) == sys.executable
    python = make_venv(workspace / "app" / ".venv")
    assert project_python(project, workspace) == str(python)
    assert project_python(workspace / "app" / ".venv" / "x.py", workspace) == str(python)
    # a venv above the workspace root is not the project's
    assert project_python(workspace, workspace / "app") != str(python)


@needs_posix
def test_the_active_virtualenv_comes_next(workspace, tmp_path, monkeypatch):
    python = make_venv(tmp_path / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    assert project_python(workspace, workspace) == str(python)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "not-a-venv"))
    assert project_python(workspace, workspace) == sys.executable


def test_a_compiled_executable_looks_for_python_on_path(workspace, tea_home, tmp_path, monkeypatch):
    # inside a Nuitka binary sys.executable is the binary itself; it cannot run "-m pytest"
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setattr(programs, "running_compiled", lambda: True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert project_python(workspace, workspace) == str(bin_dir / "python3")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert project_python(workspace, workspace) is None
    ctx = ToolContext(workspace=workspace, home=tea_home)
    with pytest.raises(ToolError, match="no Python interpreter found"):
        toolkit_run_tests(ctx, ".")


@needs_posix
def test_run_tests_uses_the_projects_venv(workspace, tea_home, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    (workspace / "test_where.py").write_text(
        "import sys\n\ndef test_where():\n    assert '.venv' in sys.prefix, sys.prefix\n"
    )
    ctx = ToolContext(workspace=workspace, home=tea_home)
    python = make_venv(workspace / ".venv")
    assert not python_has(str(python), "pytest")
    with pytest.raises(ToolError, match=r"pytest is not installed for .*\.venv/bin/python"):
        toolkit_run_tests(ctx, ".", timeout=60)

    make_venv(workspace / ".venv", see_our_packages=True)
    assert python_has(str(python), "pytest")
    out = toolkit_run_tests(ctx, "test_where.py", timeout=120)
    assert out.splitlines()[0].startswith("pytest: 1 passed in "), out

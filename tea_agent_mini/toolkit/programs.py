"""External programs (git, ruff, black, pytest, make ...): find them and run them.

A program counts as installed when it is on PATH at call time. Runs go through
``shell/runner.py``, so they get the activity-aware timeout, output bounds and cancellation of
the turn, like toolkit_exec.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell.orphans import JobTable
from tea_agent_mini.shell.runner import OUTPUT_LIMIT, CommandResult, run_command
from tea_agent_mini.toolkit.context import ToolContext

DEFAULT_TIMEOUT = 120.0
VENV_NAMES = (".venv", "venv", "env")
PROBE_TIMEOUT = 30.0


def find_program(name: str) -> str | None:
    """Full path of ``name`` on the current PATH, or None."""
    return shutil.which(name)


def require_program(name: str, purpose: str) -> str:
    """Full path of ``name``; raises ToolError saying it is missing and what needed it."""
    found = find_program(name)
    if found is None:
        raise ToolError(f"{name} is not installed (not found on PATH); it is needed to {purpose}")
    return found


def running_compiled() -> bool:
    """True inside a compiled executable (Nuitka sets ``__compiled__`` in every compiled
    module; PyInstaller-style freezers set ``sys.frozen``): ``sys.executable`` is then the
    executable itself, not a Python that can run ``-m pytest``."""
    return "__compiled__" in globals() or bool(getattr(sys, "frozen", False))


def _venv_python(venv: Path) -> Path | None:
    if not (venv / "pyvenv.cfg").is_file():
        return None
    for candidate in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
        if candidate.is_file():
            return candidate
    return None


def project_python(start: Path, root: Path) -> str | None:
    """The Python that runs the project at ``start``: a virtualenv (``.venv``, ``venv``,
    ``env``) in ``start`` or a folder above it up to ``root``, else the active
    ``$VIRTUAL_ENV``, else this interpreter (unless compiled), else python3/python on PATH."""
    folder = start if start.is_dir() else start.parent
    while True:
        for name in VENV_NAMES:
            found = _venv_python(folder / name)
            if found is not None:
                return str(found)
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    active = os.environ.get("VIRTUAL_ENV")
    found = _venv_python(Path(active)) if active else None
    if found is not None:
        return str(found)
    if not running_compiled() and sys.executable:
        return sys.executable
    return shutil.which("python3") or shutil.which("python")


def require_python(start: Path, root: Path, purpose: str) -> str:
    python = project_python(start, root)
    if python is None:
        raise ToolError(f"no Python interpreter found (no virtualenv, none on PATH) to {purpose}")
    return python


def python_has(python: str, module: str) -> bool:
    """Whether ``python`` can import ``module`` (asked in a subprocess unless it is this one)."""
    if python == sys.executable and not running_compiled():
        return importlib.util.find_spec(module) is not None
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    try:
        result = subprocess.run(
            [python, "-c", probe], capture_output=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def command_line(argv: Sequence[str]) -> str:
    """``argv`` quoted for the shell that ``run_command`` uses on this platform."""
    if os.name == "posix":
        return shlex.join(argv)
    return subprocess.list2cmdline(list(argv))


def run_program(
    ctx: ToolContext,
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    output_limit: int = OUTPUT_LIMIT,
) -> CommandResult:
    """Run ``argv`` (no shell expansion) in ``cwd`` (default: the workspace)."""
    directory = cwd if cwd is not None else ctx.resolve(".")
    return run_command(
        command_line(argv),
        directory,
        timeout,
        output_limit,
        cancel=ctx.cancel_event,
        jobs=JobTable.at(ctx.home),
    )


def tail(text: str, limit: int = 4000) -> str:
    """The last ``limit`` characters of ``text``, cut at a line start, marked when cut."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < limit // 2:
        cut = cut[newline + 1 :]
    return f"[... {len(text) - len(cut):,} earlier characters omitted ...]\n{cut}"

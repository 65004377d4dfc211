"""Run the standard backend (hatchling via ``python -m build``) reproducibly."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .whitelist import PACKAGE

# 2024-01-01T00:00:00Z: used when the tree is not a git checkout (an unpacked sdist, say).
DEFAULT_EPOCH = 1704067200
# Variables that would make the backend skip our hook or write somewhere else.
HATCH_OVERRIDES = ("HATCH_BUILD_NO_HOOKS", "HATCH_BUILD_HOOKS_ONLY", "HATCH_BUILD_LOCATION")


class BuildError(Exception):
    """The backend failed; the message carries its output."""


@dataclass(frozen=True)
class Artifacts:
    wheel: Path
    sdist: Path
    epoch: int
    isolated: bool
    seconds: float


def read_version(root: Path) -> str:
    tree = ast.parse((root / PACKAGE / "_version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    raise BuildError(f"{PACKAGE}/_version.py defines no __version__")


def source_date_epoch(root: Path, env: dict[str, str] | None = None) -> int:
    """$SOURCE_DATE_EPOCH if set, else the last commit's time, else a fixed default."""
    env = os.environ if env is None else env
    if env.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        return int(env["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return DEFAULT_EPOCH
    return int(out) if out.isdigit() else DEFAULT_EPOCH


def can_build_offline() -> bool:
    """Whether ``build`` and ``hatchling`` are importable here, so no build env is needed."""
    return all(importlib.util.find_spec(name) for name in ("build", "hatchling"))


def missing_frontend() -> str:
    if importlib.util.find_spec("build") is None:
        return "the `build` package is not installed (pip install build, or .[build])"
    return ""


def build(root: Path, out_dir: Path, *, isolated: bool | None = None) -> Artifacts:
    """Build the sdist, then the wheel from it, into ``out_dir``. Raises BuildError."""
    problem = missing_frontend()
    if problem:
        raise BuildError(problem)
    if isolated is None:
        isolated = not can_build_offline()
    version = read_version(root)
    epoch = source_date_epoch(root)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{PACKAGE}-{version}-py3-none-any.whl"
    sdist = out_dir / f"{PACKAGE}-{version}.tar.gz"
    for stale in (wheel, sdist):
        stale.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in HATCH_OVERRIDES}
    env["SOURCE_DATE_EPOCH"] = str(epoch)
    command = [sys.executable, "-m", "build", "--outdir", str(out_dir), str(root)]
    if not isolated:
        command.insert(3, "--no-isolation")
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-25:]
        raise BuildError("python -m build failed:\n" + "\n".join(tail))
    for artifact in (wheel, sdist):
        if not artifact.is_file():
            raise BuildError(f"the backend did not produce {artifact.name}")
    return Artifacts(wheel, sdist, epoch, isolated, seconds)

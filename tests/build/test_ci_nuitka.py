"""scripts/ci_nuitka.sh --decide: the Nuitka build runs in CI only when one of its inputs
changed in the commit range. Each case is a real git repository with real commits."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_SCRIPT = ROOT / "scripts" / "ci_nuitka.sh"


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


def commit(repo: Path, rel: str) -> str:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{rel} {len(git(repo, 'log', '--oneline', '--all') or '')}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"change {rel}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None or shutil.which("bash") is None:
        pytest.skip("needs git and bash")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(CI_SCRIPT, repo / "scripts" / "ci_nuitka.sh")
    git(repo, "init", "-q")
    commit(repo, "README.md")
    return repo


def decide(repo: Path, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CI_")}
    result = subprocess.run(
        ["bash", str(repo / "scripts" / "ci_nuitka.sh"), "--decide"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**full, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    "rel",
    [
        "build_nuitka.py",
        "pyproject.toml",
        "tea_agent_mini/server/static/index.html",
        "tea_agent_mini/server/static/css/app.css",
        "tea_agent_mini/skills/bundled/code-review/SKILL.md",
        "scripts/buildlib/nuitka_build.py",
    ],
)
def test_ci_builds_when_an_input_changed(repo: Path, rel: str) -> None:
    commit(repo, rel)
    assert decide(repo) == f"nuitka: build: {rel} changed since HEAD~1"


@pytest.mark.parametrize(
    "rel", ["README.md", "tea_agent_mini/server/app.py", "tests/test_x.py", "build_mini.py"]
)
def test_ci_skips_when_no_input_changed(repo: Path, rel: str) -> None:
    commit(repo, rel)
    assert decide(repo).startswith("nuitka: skip: nothing that goes into the executable")


def test_ci_base_widens_the_range(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    commit(repo, "pyproject.toml")
    commit(repo, "README.md")
    assert decide(repo).startswith("nuitka: skip:")
    assert decide(repo, CI_BASE=base) == f"nuitka: build: pyproject.toml changed since {base}"


def test_ci_builds_without_a_base_commit(repo: Path) -> None:
    assert decide(repo) == "nuitka: build: no commit HEAD~1 to compare with"


@pytest.mark.parametrize(("value", "expected"), [("always", "build"), ("never", "skip")])
def test_ci_decision_can_be_forced(repo: Path, value: str, expected: str) -> None:
    commit(repo, "README.md" if value == "always" else "build_nuitka.py")
    assert decide(repo, CI_NUITKA=value) == f"nuitka: {expected}: CI_NUITKA={value}"

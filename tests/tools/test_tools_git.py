"""toolkit_git and toolkit_git_commit against a real repository in a temp directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.git.git import parse_status, toolkit_git, toolkit_git_commit

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def hermetic_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system git config (signing, hooks, aliases) leaks into the tests."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q")
    git(workspace, "symbolic-ref", "HEAD", "refs/heads/main")
    git(workspace, "config", "user.name", "Test User")
    git(workspace, "config", "user.email", "test@example.com")
    (workspace / "a.txt").write_text("one\n")
    (workspace / "old.txt").write_text("to be renamed\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first commit")
    return workspace


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_status_groups_changes(ctx, repo):
    (repo / "a.txt").write_text("one\ntwo\n")
    (repo / "new.txt").write_text("new\n")
    git(repo, "add", "new.txt")
    git(repo, "mv", "old.txt", "renamed.txt")
    (repo / 'odd "name" é.txt').write_text("x\n")
    out = toolkit_git(ctx, "status")
    assert out.startswith("branch: main")
    assert (
        "staged (will be committed) (2):\n  added: new.txt\n  renamed: old.txt -> renamed.txt"
        in out
    )
    assert "not staged (1):\n  modified: a.txt" in out
    assert 'untracked (1):\n  odd "name" é.txt' in out


def test_clean_status(ctx, repo):
    assert toolkit_git(ctx, "status") == "branch: main\nworking tree clean"


def test_commit_stages_files_and_returns_the_hash(ctx, repo):
    (repo / "a.txt").write_text("changed\n")
    (repo / "other.txt").write_text("left alone\n")
    out = toolkit_git_commit(ctx, "Change a\n\nWith a body.", files=["a.txt"])
    head = git(repo, "rev-parse", "HEAD").strip()
    assert out.startswith(f"committed {head[:12]} on main: Change a\n")
    assert "author: Test User <test@example.com>" in out and "a.txt" in out
    assert git(repo, "log", "-1", "--format=%B").strip() == "Change a\n\nWith a body."
    assert git(repo, "status", "--porcelain") == "?? other.txt\n"


def test_commit_all_includes_new_and_deleted_files(ctx, repo):
    (repo / "fresh.txt").write_text("fresh\n")
    (repo / "old.txt").unlink()
    toolkit_git_commit(ctx, "Everything", all=True)
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "show", "--name-status", "--format=", "HEAD").split("\n")[:2] == [
        "A\tfresh.txt",
        "D\told.txt",
    ]


def test_commit_without_identity_uses_a_fallback(ctx, repo):
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    (repo / "a.txt").write_text("by the agent\n")
    out = toolkit_git_commit(ctx, "Agent commit", files=["a.txt"])
    assert "author: tea-agent <tea-agent@localhost>" in out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"message": "   "}, "message is empty"),
        ({"message": "nothing"}, "nothing to commit"),
    ],
)
def test_commit_refusals(ctx, repo, kwargs, message):
    before = git(repo, "rev-parse", "HEAD")
    with pytest.raises(ToolError, match=message):
        toolkit_git_commit(ctx, **kwargs)
    assert git(repo, "rev-parse", "HEAD") == before


def test_commit_refuses_paths_outside_the_workspace(ctx, repo):
    with pytest.raises(WorkspaceError):
        toolkit_git_commit(ctx, "escape", files=["../elsewhere.txt"])


def test_log_diff_show_and_branch(ctx, repo):
    (repo / "a.txt").write_text("one\nsecond line\n")
    diff = toolkit_git(ctx, "diff")
    assert "+second line" in diff and "--- a/a.txt" in diff
    assert toolkit_git(ctx, "diff", staged=True) == "(no differences)"
    toolkit_git_commit(ctx, "Second", files=["a.txt"])
    log = toolkit_git(ctx, "log")
    lines = log.strip().splitlines()
    assert len(lines) == 2 and lines[0].endswith("Second") and lines[1].endswith("first commit")
    assert "Test User" in lines[0]
    assert toolkit_git(ctx, "log", max_count=1, path="old.txt").strip().endswith("first commit")
    show = toolkit_git(ctx, "show")
    assert "Second" in show and "+second line" in show
    assert "+second line" not in toolkit_git(ctx, "show", stat=True)
    ranged = toolkit_git(ctx, "diff", ref="HEAD~1..HEAD", stat=True)
    assert "a.txt" in ranged and "1 file changed" in ranged
    assert "* main" in toolkit_git(ctx, "branch")


def test_option_injection_through_ref_is_refused(ctx, repo):
    with pytest.raises(ToolError, match="invalid ref"):
        toolkit_git(ctx, "diff", ref="--output=/tmp/pwned")


def test_outside_a_repository(ctx, workspace):
    with pytest.raises(ToolError, match="not a git repository.*git init"):
        toolkit_git(ctx, "status")


def test_parse_status_handles_quoting():
    status = parse_status(
        "## main...origin/main [ahead 1]\n"
        'R  "tab\\there.txt" -> plain.txt\n'
        'AM "caf\\303\\251.txt"\n'
        "UU both.txt\n"
        "?? new dir/\n"
    )
    assert status.branch == "main...origin/main [ahead 1]"
    assert status.staged == [("renamed", "tab\there.txt -> plain.txt"), ("added", "café.txt")]
    assert status.unstaged == [("modified", "café.txt")]
    assert status.conflicts == ["both.txt"] and status.untracked == ["new dir/"]

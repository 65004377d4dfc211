"""Read-only git in a hostile repository runs none of the programs its config names.

Every program the fixture repository names is a script that touches a marker file named after
itself; the control test shows plain git does run them, the others that toolkit_git does not.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.git.git import toolkit_git
from tea_agent_mini.tools.git.gitsafe import (
    ConfigEntry,
    no_fetching,
    parse_config_listing,
    repository_overrides,
)
from tea_agent_mini.types import ToolCall

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or os.name != "posix", reason="needs git and /bin/sh scripts"
)
PROGRAMS = (
    *("fsmonitor", "textconv", "diffcmd", "external", "clean", "smudge", "process", "pager"),
    *("pagerdiff", "ssh", "cred", "alt", "askpass", "editor", "gpg"),
)
HOOKS = ("post-index-change", "pre-commit", "post-checkout", "reference-transaction")


@pytest.fixture(autouse=True)
def hermetic_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_DIR"):
        monkeypatch.delenv(name, raising=False)


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=check,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    return done.stdout


def init(repo: Path) -> None:
    git(repo, "init", "-q")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.com")


def script(path: Path, marks: Path, then: str = "cat") -> str:
    path.write_text(f'#!/bin/sh\ntouch "{marks / path.name}"\n{then}\n')
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    path = tmp_path / "marks"
    path.mkdir()
    return path


@pytest.fixture
def evil(tmp_path: Path, marks: Path) -> dict[str, str]:
    """The marker scripts, by name; hooks live in evil/hooks."""
    folder = tmp_path / "evil"
    (folder / "hooks").mkdir(parents=True)
    for hook in HOOKS:
        script(folder / "hooks" / hook, marks)
    return {name: script(folder / name, marks) for name in PROGRAMS} | {"hooks": str(folder)}


def sign_head(repo: Path) -> None:
    """Rewrite HEAD as a commit with a (bogus) signature, for log.showSignature to check."""
    raw = git(repo, "cat-file", "commit", "HEAD")
    headers, _, message = raw.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----"
    commit = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=f"{headers}\n{signature}\n\n{message}",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "HEAD", commit)


def hostile_config(evil: dict[str, str]) -> str:
    return f"""[core]
\tfsmonitor = {evil["fsmonitor"]}
\thooksPath = {evil["hooks"]}/hooks
\tpager = {evil["pager"]}
\tsshCommand = {evil["ssh"]}
\talternateRefsCommand = {evil["alt"]}
\taskPass = {evil["askpass"]}
\teditor = {evil["editor"]}
[diff "evil"]
\ttextconv = {evil["textconv"]}
[diff "evilcmd"]
\tcommand = {evil["diffcmd"]}
[diff]
\texternal = {evil["external"]}
\tsubmodule = diff
[filter "evil"]
\tclean = {evil["clean"]}
\tsmudge = {evil["smudge"]}
\trequired = true
[filter "evilproc"]
\tprocess = {evil["process"]}
[pager]
\tdiff = {evil["pagerdiff"]}
[credential]
\thelper = {evil["cred"]}
[gpg]
\tprogram = {evil["gpg"]}
[log]
\tshowSignature = true
"""


@pytest.fixture
def hostile(workspace: Path, evil: dict[str, str]) -> Path:
    """Committed files with attributes naming the evil drivers, then the evil config, then
    changes: a.txt edited, same.txt rewritten unchanged (so git must hash it), b.txt staged."""
    init(workspace)
    (workspace / ".gitattributes").write_text(
        "*.txt filter=evil diff=evil\np.dat filter=evilproc diff=evilcmd\n"
    )
    (workspace / "a.txt").write_text("one\n")
    (workspace / "same.txt").write_text("same\n")
    (workspace / "p.dat").write_text("data\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first commit")
    (workspace / "a.txt").write_text("one\nchanged\n")
    git(workspace, "commit", "-q", "-am", "change a")
    sign_head(workspace)
    (workspace / "b.txt").write_text("bee\n")
    git(workspace, "add", "b.txt")
    with (workspace / ".git" / "config").open("a") as config:
        config.write(hostile_config(evil))
    (workspace / "a.txt").write_text("one\nchanged\ntwo\n")
    (workspace / "p.dat").write_text("data\nmore\n")
    same = workspace / "same.txt"
    same.write_text("same\n")
    os.utime(same, (same.stat().st_atime + 10, same.stat().st_mtime + 10))
    return workspace


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def ran(marks: Path) -> set[str]:
    return {path.name for path in marks.iterdir()}


def test_plain_git_runs_the_hostile_programs(hostile, marks):
    for args in (["status"], ["diff"], ["show"], ["log", "-1"]):
        git(hostile, "--no-pager", *args, check=False)
    expected = {"fsmonitor", "clean", "process", "textconv", "gpg", "post-index-change"}
    assert expected <= ran(marks)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"action": "status"}, "not staged (2):\n  modified: a.txt\n  modified: p.dat"),
        ({"action": "status"}, "staged (will be committed) (1):\n  added: b.txt"),
        ({"action": "diff"}, "+two"),
        ({"action": "diff", "path": "p.dat"}, "+more"),
        ({"action": "diff", "stat": True}, "a.txt"),
        ({"action": "diff", "staged": True}, "+bee"),
        ({"action": "diff", "ref": "HEAD~1"}, "+changed"),
        ({"action": "log"}, "change a"),
        ({"action": "log", "path": "a.txt"}, "first commit"),
        ({"action": "branch"}, "main"),
        ({"action": "show"}, "+changed"),
        ({"action": "show", "stat": True}, "a.txt"),
    ],
)
def test_read_only_actions_run_nothing_and_still_answer(ctx, hostile, marks, arguments, expected):
    assert expected in toolkit_git(ctx, **arguments)
    assert ran(marks) == set()


def test_read_only_mode_through_the_executor(hostile, marks, tea_home):
    ctx = ToolContext(workspace=hostile, home=tea_home, approval="never")
    executor = ToolExecutor(Toolkit.load(["git.git"]), ctx)
    for action in ("status", "diff", "log", "branch", "show"):
        arguments = json.dumps({"action": action})
        result = asyncio.run(
            executor.run(ToolCall(id="c1", name="toolkit_git", arguments=arguments))
        )
        assert result.ok, result.error
    commit = ToolCall(id="c2", name="toolkit_git_commit", arguments='{"message": "x"}')
    assert "read-only mode" in asyncio.run(executor.run(commit)).error
    assert ran(marks) == set()


def test_submodules_are_not_entered(ctx, workspace, evil, marks):
    init(workspace)
    sub = workspace / "sub"
    sub.mkdir()
    init(sub)
    (sub / ".gitattributes").write_text("* filter=evil\n")
    (sub / "s.txt").write_text("same\n")
    git(sub, "add", ".")
    git(sub, "commit", "-q", "-m", "sub")
    git(workspace, "add", "sub")
    git(workspace, "commit", "-q", "-m", "top")
    git(sub, "config", "filter.evil.clean", evil["clean"])
    os.utime(sub / "s.txt", (0, 0))
    git(workspace, "status", check=False)
    assert ran(marks) == {"clean"}  # plain git status does enter it
    (marks / "clean").unlink()
    assert toolkit_git(ctx, "status").endswith("working tree clean")
    (sub / "s.txt").write_text("new\n")
    git(sub, "-c", "filter.evil.clean=", "commit", "-q", "-am", "moved on")
    assert "modified: sub" in toolkit_git(ctx, "status")
    assert "+Subproject commit" in toolkit_git(ctx, "diff")
    assert ran(marks) == set()


def test_show_does_not_fetch_a_missing_object(ctx, workspace, tmp_path, marks, monkeypatch):
    # many users allow the file protocol since git 2.38.1; a fetch must stay off all the same
    for name, value in [("COUNT", "1"), ("KEY_0", "protocol.file.allow"), ("VALUE_0", "always")]:
        monkeypatch.setenv(f"GIT_CONFIG_{name}", value)
    uploadpack = script(tmp_path / "uploadpack", marks, then="exit 1")
    init(workspace)
    (workspace / "f.txt").write_text("one\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "one")
    blob = git(workspace, "rev-parse", "HEAD:f.txt").strip()
    (workspace / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", str(workspace)),
        ("remote.origin.promisor", "true"),
        ("remote.origin.uploadpack", uploadpack),
    ]:
        git(workspace, "config", key, value)
    git(workspace, "--no-pager", "show", check=False)
    assert ran(marks) == {"uploadpack"}  # plain git runs the repository's one to fetch it
    (marks / "uploadpack").unlink()
    with pytest.raises(ToolError, match="git show failed"):
        toolkit_git(ctx, "show")
    assert ran(marks) == set()


def test_listing_is_parsed_with_scopes():
    data = b"local\0core.bare\nfalse\0global\0pager.log\0local\0a.b\nx\ny\0"
    assert parse_config_listing(data) == [
        ConfigEntry("local", "core.bare", "false"),
        ConfigEntry("global", "pager.log", None),
        ConfigEntry("local", "a.b", "x\ny"),
    ]


def test_repository_keys_give_way_to_the_users_own():
    entries = [
        ConfigEntry("global", "filter.lfs.process", "git-lfs filter-process"),
        ConfigEntry("local", "filter.lfs.process", "evil"),
        ConfigEntry("local", "filter.x.clean", "evil"),
        ConfigEntry("global", "credential.helper", "store"),
        ConfigEntry("local", "credential.https://host.helper", "evil"),
        ConfigEntry("worktree", "credential.helper", "evil"),
        ConfigEntry("local", "pager.log", None),
        ConfigEntry("local", "core.pager", "evil"),
        ConfigEntry("global", "core.editor", "vim"),
        ConfigEntry("local", "user.name", "not a program"),
    ]
    assert repository_overrides(entries) == [
        "core.pager=cat",
        "credential.helper=",
        "credential.helper=store",
        "credential.https://host.helper=",
        "filter.lfs.process=git-lfs filter-process",
        "filter.x.clean=",
        "pager.log=false",
    ]


def test_no_protocol_is_allowed_whoever_allowed_it():
    entries = [
        ConfigEntry("command", "protocol.file.allow", "always"),
        ConfigEntry("local", "protocol.ext.allow", "always"),
        ConfigEntry("local", "protocol.allow", "always"),
    ]
    assert no_fetching(entries) == [
        "protocol.allow=never",
        "protocol.ext.allow=never",
        "protocol.file.allow=never",
    ]


def test_a_key_that_cannot_be_overridden_is_refused():
    with pytest.raises(ToolError, match="refuses"):
        repository_overrides([ConfigEntry("local", "filter.a=b.clean", "evil")])

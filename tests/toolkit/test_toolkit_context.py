from __future__ import annotations

import os
from pathlib import Path

import pytest

from tea_agent_mini.errors import ConfigError, ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_relative_paths_start_at_the_workspace(ctx: ToolContext, workspace: Path):
    assert ctx.resolve("a/b.txt") == Path(os.path.realpath(workspace)) / "a" / "b.txt"
    assert ctx.resolve(".") == Path(os.path.realpath(workspace))
    inside = str(workspace / "x.txt")
    assert ctx.resolve(inside) == Path(os.path.realpath(inside))


@pytest.mark.parametrize("path", ["../outside.txt", "a/../../outside.txt", "/etc/passwd"])
def test_paths_outside_the_workspace_are_refused(ctx: ToolContext, path: str):
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ctx.resolve(path)


def test_a_symlink_pointing_outside_is_refused(ctx: ToolContext, workspace: Path, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "linkdir").symlink_to(tmp_path)
    with pytest.raises(WorkspaceError):
        ctx.resolve("link.txt")
    with pytest.raises(WorkspaceError):
        ctx.resolve("linkdir/secret.txt")


def test_allow_outside_workspace(workspace: Path, tmp_path: Path):
    ctx = ToolContext(workspace=workspace, home=tmp_path, allow_outside_workspace=True)
    assert ctx.resolve("../x") == Path(os.path.realpath(tmp_path / "x"))


def test_must_exist(ctx: ToolContext, workspace: Path):
    (workspace / "here.txt").write_text("x")
    assert ctx.resolve("here.txt", must_exist=True).name == "here.txt"
    with pytest.raises(ToolError, match="does not exist"):
        ctx.resolve("gone.txt", must_exist=True)


def test_unknown_approval_policy_is_a_config_error(workspace: Path):
    with pytest.raises(ConfigError):
        ToolContext(workspace=workspace, home=workspace, approval="sometimes")


def test_state_in_memory_is_per_topic(workspace: Path):
    a = ToolContext(workspace=workspace, home=workspace, topic_id="a")
    a.state_set("k", [1, 2])
    assert a.state_get("k") == [1, 2]
    assert a.state_get("other", "dflt") == "dflt"
    a.topic_id = "b"
    assert a.state_get("k") is None


def test_state_goes_to_the_store_when_there_is_one(workspace: Path, tmp_path: Path):
    from tea_agent_mini.store import Store

    store = Store.open(tmp_path / "chat.db")
    try:
        ctx = ToolContext(workspace=workspace, home=tmp_path, store=store, topic_id="t1")
        ctx.state_set("k", {"v": 1})
        assert store.state.get("topic:t1", "k") == {"v": 1}
        assert ctx.state_get("k") == {"v": 1}
        assert ctx.state_get("missing", 7) == 7
    finally:
        store.close()

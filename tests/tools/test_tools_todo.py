from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.todo import toolkit_todo


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home, topic_id="t1")


def test_add_update_and_render(ctx):
    assert toolkit_todo(ctx, "list") == "The todo list is empty."
    toolkit_todo(ctx, "add", items=["read the code", "write tests"], text="ship it")
    out = toolkit_todo(ctx, "update", id=1, status="done")
    out = toolkit_todo(ctx, "update", id=2, status="in_progress", text="write more tests")
    assert out == (
        "Todo (1/3 done):\n"
        "[x] 1. read the code\n"
        "[>] 2. write more tests  (in progress)\n"
        "[ ] 3. ship it"
    )


def test_only_one_item_is_in_progress(ctx):
    toolkit_todo(ctx, "add", items=["a", "b"])
    toolkit_todo(ctx, "update", id=1, status="in_progress")
    out = toolkit_todo(ctx, "update", id=2, status="in_progress")
    assert "[ ] 1. a\n[>] 2. b  (in progress)" in out


def test_remove_clear_and_ids_keep_growing(ctx):
    toolkit_todo(ctx, "add", items=["a", "b", "c"])
    out = toolkit_todo(ctx, "remove", id=2)
    assert "2. b" not in out and "3. c" in out
    assert "4. d" in toolkit_todo(ctx, "add", text="d")
    assert toolkit_todo(ctx, "clear") == "The todo list is empty."


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"action": "add"}, "needs 'items'"),
        ({"action": "update", "id": 9, "status": "done"}, "no todo item with id 9"),
        ({"action": "update", "status": "done"}, "needs 'id'"),
        ({"action": "update", "id": 1}, "needs 'status'"),
        ({"action": "update", "id": 1, "status": "blocked"}, "status must be one of"),
        ({"action": "remove", "id": 5}, "no todo item with id 5 (ids: 1)"),
        ({"action": "explode"}, "unknown action"),
    ],
)
def test_user_errors(ctx, kwargs, fragment):
    toolkit_todo(ctx, "add", text="only")
    with pytest.raises(ToolError) as info:
        toolkit_todo(ctx, **kwargs)
    assert fragment in str(info.value)


def test_lists_are_per_topic(ctx):
    toolkit_todo(ctx, "add", text="topic one task")
    ctx.topic_id = "t2"
    assert toolkit_todo(ctx, "list") == "The todo list is empty."


def test_the_list_survives_a_restart_in_the_store(workspace, tmp_path):
    db = tmp_path / "chat.db"
    with Store.open(db) as store:
        ctx = ToolContext(workspace=workspace, home=tmp_path, store=store, topic_id="abc")
        toolkit_todo(ctx, "add", items=["persist me", "and me"])
        toolkit_todo(ctx, "update", id=2, status="done")
    with Store.open(db) as store:
        ctx = ToolContext(workspace=workspace, home=tmp_path, store=store, topic_id="abc")
        assert toolkit_todo(ctx, "list") == "Todo (1/2 done):\n[ ] 1. persist me\n[x] 2. and me"

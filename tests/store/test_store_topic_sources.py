"""Topic sources (migration 7): which front end made a topic, the listing filter, bulk delete."""

from __future__ import annotations

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.store.database import Database
from tea_agent_mini.store.migrations import MIGRATIONS, migrate
from tea_agent_mini.types import Message

BEFORE_SOURCES = [m for m in MIGRATIONS if m[0] < 7]


def test_older_topics_become_ui_topics_except_those_of_tasks(empty_target):
    path = empty_target
    db = Database.open(path)
    try:
        migrate(db, BEFORE_SOURCES)
        for topic_id in ("chat", "task"):
            db.execute(
                "INSERT INTO topics (id, created_at, updated_at) VALUES (?, 1, 1)", (topic_id,)
            )
        db.execute(
            "INSERT INTO tasks (name, kind, schedule, prompt, topic_id, created_at, updated_at, "
            "anchor_at) VALUES ('t', 'prompt', 'interval:60', 'p', 'task', 1, 1, 1)"
        )
    finally:
        db.close()
    with Store.open(path) as store:
        assert store.topics.get("chat").source == "ui"
        assert store.topics.get("task").source == "task"
        assert [t.id for t in store.topics.recent(sources=("task",))] == ["task"]


def test_create_records_the_source_and_list_filters_by_it(store):
    ui = store.topics.create("mine")
    api = store.topics.create("client", source="api")
    cli = store.topics.create("terminal", source="cli")
    assert store.topics.get(api.id).source == "api" and ui.source == "ui"
    assert [t.id for t in store.topics.recent(sources=("ui",))] == [ui.id]
    assert {t.id for t in store.topics.recent(sources=("api", "cli"))} == {api.id, cli.id}
    assert len(store.topics.recent()) == 3


def test_an_unknown_source_is_refused(store):
    with pytest.raises(StoreError, match="unknown topic source"):
        store.topics.create("x", source="web")


def test_delete_many_returns_the_ids_that_existed(store):
    kept = store.topics.create("kept")
    gone = [store.topics.create(f"gone {i}", source="api") for i in range(3)]
    store.messages.add(gone[0].id, Message(role="user", content="bye"))
    ids = [t.id for t in gone]
    assert store.topics.delete_many([*ids, "missing", ids[0]]) == ids
    assert [t.id for t in store.topics.recent()] == [kept.id]
    assert store.messages.count(gone[0].id) == 0

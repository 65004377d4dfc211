"""Topics: create, read, list order and search, updates, delete with cascade, restart."""

from __future__ import annotations

import re

import pytest

from tea_agent_mini.store import Store, topic_scope
from tea_agent_mini.types import Message


def test_create_and_get(store):
    topic = store.topics.create("First", profile="coder")
    assert re.fullmatch("[0-9a-f]{32}", topic.id)
    assert topic.created_at == topic.updated_at > 0
    assert store.topics.get(topic.id) == topic


def test_get_missing_returns_none(store):
    assert store.topics.get("nope") is None


def test_ids_are_unique(store):
    ids = {store.topics.create().id for _ in range(50)}
    assert len(ids) == 50


def test_list_is_newest_updated_first(store):
    a = store.topics.create("a")
    b = store.topics.create("b")
    c = store.topics.create("c")
    assert [t.id for t in store.topics.recent()] == [c.id, b.id, a.id]
    store.messages.add(a.id, Message(role="user", content="bump"))
    assert [t.id for t in store.topics.recent()] == [a.id, c.id, b.id]
    store.topics.touch(b.id)
    assert [t.id for t in store.topics.recent()] == [b.id, a.id, c.id]


def test_list_limit_and_offset(store):
    made = [store.topics.create(str(i)) for i in range(5)]
    newest_first = [t.id for t in reversed(made)]
    assert [t.id for t in store.topics.recent(limit=2)] == newest_first[:2]
    assert [t.id for t in store.topics.recent(limit=2, offset=2)] == newest_first[2:4]
    assert store.topics.recent(limit=10, offset=5) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("plan", ["Trip plan", "PLANNING"]),
        ("100%", ["100% done"]),
        ("a_b", ["a_b"]),
        ("_", ["a_b"]),
        ("%", ["100% done"]),
        ("nothing", []),
    ],
)
def test_list_query_matches_titles_literally_and_ignoring_case(store, query, expected):
    for title in ["Trip plan", "PLANNING", "100% done", "a_b", "axb", "1000 done"]:
        store.topics.create(title)
    assert sorted(t.title for t in store.topics.recent(query=query)) == sorted(expected)


def test_message_count(store):
    topic = store.topics.create()
    for i in range(3):
        store.messages.add(topic.id, Message(role="user", content=str(i)))
    assert store.topics.get(topic.id).message_count == 3
    assert store.topics.recent()[0].message_count == 3


def test_rename(store):
    topic = store.topics.create("old")
    assert store.topics.rename(topic.id, "new") is True
    assert store.topics.get(topic.id).title == "new"
    assert store.topics.rename("missing", "x") is False


def test_add_usage_accumulates(store):
    topic = store.topics.create()
    store.topics.add_usage(topic.id, 100, 20)
    store.topics.add_usage(topic.id, 50, 5)
    got = store.topics.get(topic.id)
    assert (got.prompt_tokens, got.completion_tokens) == (150, 25)
    assert store.topics.add_usage("missing", 1, 1) is False


def test_system_prompt_set_and_clear(store):
    topic = store.topics.create()
    assert store.topics.get(topic.id).system_prompt is None
    store.topics.set_system_prompt(topic.id, "Be brief.")
    assert store.topics.get(topic.id).system_prompt == "Be brief."
    store.topics.set_system_prompt(topic.id, None)
    assert store.topics.get(topic.id).system_prompt is None


def test_exists_and_system_prompt_read_without_counting_messages(store, statements):
    topic = store.topics.create()
    store.messages.add(topic.id, Message(role="user", content="hi"))
    assert store.topics.exists(topic.id) and not store.topics.exists("nope")
    assert store.topics.system_prompt(topic.id) is None
    store.topics.set_system_prompt(topic.id, "Be brief.")
    statements.clear()
    assert store.topics.system_prompt(topic.id) == "Be brief."
    assert store.topics.system_prompt("nope") is None
    store.topics.exists(topic.id)
    assert statements and not any("messages" in sql for sql, _ in statements)


def test_archived_topics_are_hidden_from_list(store):
    kept = store.topics.create("kept")
    hidden = store.topics.create("hidden")
    assert store.topics.set_archived(hidden.id) is True
    assert [t.id for t in store.topics.recent()] == [kept.id]
    assert {t.id for t in store.topics.recent(include_archived=True)} == {kept.id, hidden.id}
    assert store.topics.get(hidden.id).archived is True
    store.topics.set_archived(hidden.id, False)
    assert len(store.topics.recent()) == 2


def test_delete_cascades_to_messages_and_topic_state(store):
    doomed = store.topics.create("doomed")
    other = store.topics.create("other")
    for topic in (doomed, other):
        store.messages.add(topic.id, Message(role="user", content="hello"))
        store.state.put(topic_scope(topic.id), "todo", ["x"])
    assert store.topics.delete(doomed.id) is True
    assert store.topics.get(doomed.id) is None
    assert store.messages.of_topic(doomed.id) == []
    assert store.messages.count(doomed.id) == 0
    assert (
        store.db.query_one("SELECT COUNT(*) FROM messages WHERE topic_id = ?", (doomed.id,))[0] == 0
    )
    assert store.state.items(topic_scope(doomed.id)) == {}
    assert store.messages.count(other.id) == 1
    assert store.state.get(topic_scope(other.id), "todo") == ["x"]
    assert store.topics.delete(doomed.id) is False


def test_topic_resumes_after_restart(store_target):
    path = store_target
    store = Store.open(path)
    topic = store.topics.create("resumable", profile="default")
    store.topics.add_usage(topic.id, 10, 3)
    sent = [
        store.messages.add(topic.id, Message(role="user", content="remember 42")),
        store.messages.add(topic.id, Message(role="assistant", content="ok", reasoning="noted")),
    ]
    store.state.put(topic_scope(topic.id), "plan", {"step": 2})
    before = store.topics.get(topic.id)
    store.close()

    with Store.open(path) as reopened:
        assert reopened.topics.get(topic.id) == before
        assert reopened.messages.of_topic(topic.id) == sent
        assert reopened.state.get(topic_scope(topic.id), "plan") == {"step": 2}
        more = reopened.messages.add(topic.id, Message(role="user", content="and now?"))
        assert more.id > sent[-1].id

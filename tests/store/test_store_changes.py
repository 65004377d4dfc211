"""Change counters and notifications on PostgreSQL (migration 16): the memory caches read again
after a change to the memories only, not after any write anywhere, and a scheduler hears of
another instance's new task at once."""

from __future__ import annotations

import threading

import pytest

from tea_agent_mini.store import Store


@pytest.fixture
def two(postgres_url):
    """Two stores on one PostgreSQL database: two instances."""
    with Store.open(postgres_url) as a, Store.open(postgres_url) as b:
        yield a, b


def test_a_memory_written_elsewhere_is_seen_and_other_writes_keep_the_snapshot(two):
    a, b = two
    a.memories.add("the deploy target is a Raspberry Pi")
    assert [m.content for m in b.memories.active()] == ["the deploy target is a Raspberry Pi"]
    version = b.memories.version()
    topic = a.topics.create("busy elsewhere")
    a.state.put("topic:" + topic.id, "todo", ["x"])  # writes, but not to the memories
    assert b.memories.version() == version
    assert b.memories.active() is b.memories.active()  # the same snapshot, not read again
    a.memories.add("the user prefers tabs")
    assert b.memories.version() != version
    assert {m.content for m in b.memories.active()} == {
        "the deploy target is a Raspberry Pi",
        "the user prefers tabs",
    }


def test_an_access_stamp_is_not_a_change(two):
    a, b = two
    memory = a.memories.add("stamped")
    b.memories.active()
    version = b.memories.version()
    a.memories.touch_accessed([memory.id])
    assert b.memories.version() == version


def test_a_deleted_memory_leaves_the_other_instances_cache(two):
    a, b = two
    memory = a.memories.add("soon gone")
    assert [m.id for m in b.memories.active()] == [memory.id]
    a.memories.soft_delete(memory.id)
    assert b.memories.active() == []


def test_a_task_added_on_one_instance_wakes_the_other(two):
    a, b = two
    heard = threading.Event()
    unsubscribe = b.tasks.on_change(heard.set)
    try:
        assert heard.wait(10)  # listening has begun: whatever came before, look now
        heard.clear()
        a.tasks.add(
            name="report", kind="prompt", schedule="interval:60", next_run_at=None, prompt="hi"
        )
        assert heard.wait(10)
    finally:
        unsubscribe()


def test_a_statement_that_changes_no_task_wakes_nobody(two):
    a, b = two
    heard = threading.Event()
    unsubscribe = b.tasks.on_change(heard.set)
    try:
        assert heard.wait(10)
        heard.clear()
        a.db.execute("UPDATE tasks SET enabled = 1 WHERE id = -1")
        assert not heard.wait(1.5)
    finally:
        unsubscribe()

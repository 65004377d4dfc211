"""The JSON key/value state table."""

from __future__ import annotations

import pytest

from tea_agent_mini.errors import StoreError


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -3,
        2.5,
        "",
        "中文 ✓",
        [],
        {},
        [1, "two", None, {"three": [3.0]}],
        {"todos": [{"text": "write tests", "done": False}], "nested": {"a": {"b": [1, 2]}}},
    ],
)
def test_json_values_round_trip(store, value):
    store.state.put("settings", "k", value)
    assert store.state.get("settings", "k", default="absent") == value


def test_missing_key_returns_default(store):
    assert store.state.get("settings", "nope") is None
    assert store.state.get("settings", "nope", default=7) == 7


def test_set_replaces(store):
    store.state.put("s", "k", 1)
    store.state.put("s", "k", {"v": 2})
    assert store.state.get("s", "k") == {"v": 2}
    assert store.db.query_one("SELECT COUNT(*) FROM state")[0] == 1


def test_scopes_are_separate(store):
    store.state.put("topic:a", "todo", ["a"])
    store.state.put("topic:b", "todo", ["b"])
    store.state.put("topic:a", "plan", "p")
    assert store.state.items("topic:a") == {"plan": "p", "todo": ["a"]}
    assert store.state.items("topic:b") == {"todo": ["b"]}
    assert store.state.items("topic:c") == {}


def test_delete_and_clear(store):
    store.state.put("s", "a", 1)
    store.state.put("s", "b", 2)
    store.state.put("t", "a", 3)
    assert store.state.delete("s", "a") is True
    assert store.state.delete("s", "a") is False
    assert store.state.items("s") == {"b": 2}
    assert store.state.clear("s") == 1
    assert store.state.items("s") == {}
    assert store.state.get("t", "a") == 3


@pytest.mark.parametrize("value", [object(), {1, 2}, float("nan"), b"bytes"])
def test_non_json_values_are_refused(store, value):
    with pytest.raises(StoreError, match="JSON"):
        store.state.put("s", "k", value)
    assert store.state.get("s", "k") is None

"""The reads that keep per-turn memory work flat: vector sign codes kept in step with the store,
the selection pool, stale vectors; each answered through an index."""

from __future__ import annotations

import pytest

from tea_agent_mini.store import Store
from tea_agent_mini.vectors import pack, sign_code

T0 = 1_700_000_000.0
DAY = 86400.0


def code(vector) -> int:
    return int.from_bytes(sign_code(pack(vector)), "little")


def held(store, model="m") -> dict[int, int]:
    codes = store.memories.codes.current(model)
    return dict(zip(codes.ids, codes.codes, strict=True))


def plan(store, sql, params=()) -> str:
    return " ".join(row[3] for row in store.db.query("EXPLAIN QUERY PLAN " + sql, params))


def test_codes_follow_adds_new_vectors_edits_and_deletes(store):
    repo = store.memories
    a = repo.add("a", embedding=[0.6, -0.8], embedding_model="m", now=T0)
    b = repo.add("b", embedding=[-1.0, 0.0], embedding_model="m", now=T0)
    other = repo.add("c", embedding=[1.0, 0.0], embedding_model="other", now=T0)
    bare = repo.add("d", now=T0)
    assert held(store) == {a.id: code([0.6, -0.8]), b.id: code([-1.0, 0.0])}
    first = store.memories.codes.current("m")
    assert store.memories.codes.current("m") is first  # nothing changed: nothing re-read

    repo.set_embedding(bare.id, [-0.6, -0.8], "m")
    repo.set_embedding(other.id, [0.0, -1.0], "m")
    repo.update(a.id, content="a, edited")  # new content: its old vector no longer counts
    repo.soft_delete(b.id)
    assert held(store) == {bare.id: code([-0.6, -0.8]), other.id: code([0.0, -1.0])}
    assert held(store, "other") == {}


def test_codes_see_what_another_connection_wrote(store_target):
    path = store_target
    with Store.open(path) as one, Store.open(path) as two:
        kept = one.memories.add("kept", embedding=[1.0, 0.0], embedding_model="m", now=T0)
        assert held(two) == {kept.id: code([1.0, 0.0])}
        added = one.memories.add("added", embedding=[0.0, -1.0], embedding_model="m", now=T0)
        one.memories.soft_delete(kept.id)
        assert held(two) == {added.id: code([0.0, -1.0])}


def test_nearest_and_vectors_of_the_candidates(store, statements):
    repo = store.memories
    near = repo.add("near", embedding=[0.9, 0.1, -0.4], embedding_model="m", now=T0)
    far = repo.add("far", embedding=[-0.9, -0.1, 0.4], embedding_model="m", now=T0)
    gone = repo.add("gone", embedding=[0.9, 0.1, -0.4], embedding_model="m", expires_at=T0 + 1)
    codes = repo.codes.current("m")
    assert codes.nearest(sign_code(pack([1.0, 0.2, -0.3])), 2) == [near.id, gone.id]
    statements.clear()
    found = dict(repo.codes.vectors([near.id, far.id, gone.id], "m", T0 + 5))
    if store.db.dialect == "sqlite":
        wanted = "SEARCH memories USING INTEGER PRIMARY KEY (rowid=?)"
        assert plan(store, *statements[-1]) == wanted
    assert set(found) == {near.id, far.id}  # the expired one is no candidate
    assert found[near.id] == pack([0.9, 0.1, -0.4])


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)  # SQLite's query plans
def test_loading_the_codes_reads_only_an_index(store):
    store.memories.add("a", embedding=[1.0, 0.0], embedding_model="m", now=T0)
    statements: list[str] = []
    store.db._conn.set_trace_callback(statements.append)
    store.memories.codes.current("m")
    store.db._conn.set_trace_callback(None)
    (load,) = [s for s in statements if "embedding_code FROM" in s]
    assert "COVERING INDEX memories_codes" in plan(store, load)


def test_selection_pool_holds_what_selection_can_pick(store):
    repo = store.memories
    made = {}
    for n in range(12):  # CRITICAL, newest last
        made[("critical", n)] = repo.add(f"rule {n}", priority=0, now=T0 + n)
    for priority in (1, 2, 3):
        for importance in (1, 5):
            for n in range(4):
                memory = repo.add(
                    f"p{priority} i{importance} n{n}",
                    priority=priority,
                    importance=importance,
                    now=T0 - n * DAY,
                )
                made[(priority, importance, n)] = memory
    expired = repo.add("expired", priority=1, importance=5, expires_at=T0 + 1, now=T0 + 1)
    old = made[(3, 1, 3)]
    pool = repo.selection_pool(
        [old.id, expired.id], T0 + 10, critical=10, per_group=2, groups=[(1, 5), (3, 1)]
    )
    expected = [made[("critical", n)].id for n in range(2, 12)]
    expected += [made[(1, 5, n)].id for n in (0, 1)] + [made[(3, 1, n)].id for n in (0, 1, 3)]
    assert [m.id for m in pool] == sorted(expected)


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)  # SQLite's query plans
def test_selection_pool_walks_indexes(store):
    statements: list[str] = []
    store.db._conn.set_trace_callback(statements.append)
    store.memories.selection_pool([1, 2], T0, critical=10, per_group=3, groups=[(1, 5), (2, 3)])
    store.db._conn.set_trace_callback(None)
    for sql in (s for s in statements if s.lstrip().startswith("SELECT")):
        text = plan(store, sql)
        assert "SCAN m" not in text and "USE TEMP B-TREE" not in text, text
        if "UNION ALL" in sql:
            assert "memories_ranked" in text
        else:  # the relevant ones, by id
            assert text.startswith("SEARCH m USING INTEGER PRIMARY KEY"), text


def test_needing_embedding_finds_stale_vectors_without_reading_every_row(store, statements):
    repo = store.memories
    current = repo.add("current", embedding=[1.0], embedding_model="new", now=T0)
    old = repo.add("old", embedding=[1.0], embedding_model="old", now=T0)
    bare = repo.add("bare", now=T0)
    repo.add("expired", expires_at=T0 + 1, now=T0)
    assert [m.id for m in repo.needing_embedding("new", 10, T0 + 5)] == [bare.id, old.id]
    assert [m.id for m in repo.needing_embedding("new", 1, T0 + 5)] == [bare.id]
    assert current.id not in {m.id for m in repo.needing_embedding("new", 10, T0 + 5)}
    if store.db.dialect == "sqlite":  # its query plans
        statements.clear()
        repo.needing_embedding("new", 10, T0)
        text = plan(store, *statements[-1])
        assert "COVERING INDEX memories_codes" in text, text

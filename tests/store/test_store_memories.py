"""Memories in the store: rows, filters, soft delete, expiry, keyword search on FTS5 and LIKE,
the live snapshot and its invalidation."""

from __future__ import annotations

import sqlite3

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.store.memories import MemoryRepository
from tea_agent_mini.vectors import unpack

T0 = 1_700_000_000.0
DAY = 86400.0


@pytest.fixture(params=["index", "like"])
def repo(request, store):
    """The store's repository on both keyword paths: the index (FTS5, or tsvector on
    PostgreSQL) and LIKE."""
    if request.param == "index":
        assert store.memories.uses_fts  # this SQLite has FTS5; the index case must really use it
        return store.memories
    forced = MemoryRepository(store.db, use_fts=False)
    assert not forced.uses_fts
    return forced


def test_add_and_get_round_trip(store):
    memory = store.memories.add(
        "Prefers tabs over spaces",
        priority=1,
        importance=4,
        category="preference",
        tags=["style", "editor"],
        expires_at=T0 + DAY,
        pinned=True,
        source_topic="topic-1",
        embedding=[0.6, 0.8],
        embedding_model="m",
        now=T0,
    )
    assert memory.id > 0 and memory.content == "Prefers tabs over spaces"
    assert (memory.priority, memory.importance, memory.category) == (1, 4, "preference")
    assert memory.tags == ("style", "editor") and memory.pinned
    assert memory.created_at == memory.updated_at == T0 and memory.expires_at == T0 + DAY
    assert memory.source_topic == "topic-1" and memory.deleted_at is None
    assert memory.embedding_model == "m" and memory.embedding_dim == 2
    assert list(unpack(memory.embedding)) == pytest.approx([0.6, 0.8])
    assert len(memory.content_hash) == 64
    assert store.memories.get(memory.id) == memory


@pytest.mark.parametrize("bad", [{"priority": 4}, {"priority": -1}, {"importance": 0}])
def test_out_of_range_values_are_refused(store, bad):
    with pytest.raises(StoreError):
        store.memories.add("x", **bad)


def test_empty_content_is_refused(store):
    with pytest.raises(StoreError, match="content"):
        store.memories.add("   ")


def test_update_bumps_updated_at_unless_told_not_to(store):
    memory = store.memories.add("a fact", now=T0)
    changed = store.memories.update(memory.id, importance=5, now=T0 + 10)
    assert changed.importance == 5 and changed.updated_at == T0 + 10
    quiet = store.memories.update(memory.id, priority=3, bump=False)
    assert quiet.priority == 3 and quiet.updated_at == T0 + 10


def test_new_content_rehashes_and_drops_the_vector(store):
    memory = store.memories.add("old text", embedding=[1.0, 0.0], embedding_model="m", now=T0)
    changed = store.memories.update(memory.id, content="new text", now=T0 + 1)
    assert changed.content == "new text" and changed.content_hash != memory.content_hash
    assert changed.embedding is None
    assert (changed.embedding_model, changed.embedding_dim) == ("", 0)


def test_update_refuses_unknown_fields(store):
    memory = store.memories.add("x")
    with pytest.raises(StoreError, match="created_at"):
        store.memories.update(memory.id, created_at=1.0)


def test_soft_delete_hides_but_keeps_the_row(store):
    memory = store.memories.add("temporary", now=T0)
    assert store.memories.soft_delete(memory.id, now=T0 + 5) == 1
    assert store.memories.soft_delete(memory.id) == 0
    assert store.memories.get(memory.id) is None
    kept = store.memories.get(memory.id, include_deleted=True)
    assert kept is not None and kept.deleted_at == T0 + 5
    assert store.memories.matching(now=T0 + 6) == []
    assert [m.id for m in store.memories.matching(include_inactive=True)] == [memory.id]
    assert store.memories.update(memory.id, importance=5) is None


def test_list_orders_by_priority_then_newest_and_filters(store):
    add = store.memories.add
    low = add("low one", priority=3, category="fact", now=T0)
    high_old = add("high old", priority=1, category="preference", tags=["ui"], now=T0)
    high_new = add("high new", priority=1, category="preference", now=T0 + 1)
    crit = add("critical", priority=0, category="instruction", pinned=True, now=T0)
    ids = [m.id for m in store.memories.matching(now=T0 + 2)]
    assert ids == [crit.id, high_new.id, high_old.id, low.id]
    assert [m.id for m in store.memories.matching(category="fact", now=T0)] == [low.id]
    assert [m.id for m in store.memories.matching(priority=1, now=T0 + 2)] == [
        high_new.id,
        high_old.id,
    ]
    assert [m.id for m in store.memories.matching(pinned=True, now=T0)] == [crit.id]
    assert [m.id for m in store.memories.matching(tag="UI", now=T0)] == [high_old.id]
    assert len(store.memories.matching(limit=2, offset=1, now=T0 + 2)) == 2


def test_expired_memories_leave_the_active_set(store):
    soon = store.memories.add("dentist on friday", expires_at=T0 + DAY, now=T0)
    store.memories.add("lives in Berlin", now=T0)
    assert {m.id for m in store.memories.matching(now=T0)} >= {soon.id}
    assert soon.id not in {m.id for m in store.memories.matching(now=T0 + 2 * DAY)}
    assert soon.id not in {m.id for m in store.memories.active(T0 + 2 * DAY)}
    assert soon.id in {m.id for m in store.memories.active(T0)}  # time may go back in tests
    assert store.memories.find_by_hash(soon.content_hash, now=T0 + 2 * DAY) is None
    gone = store.memories.add("forgotten", now=T0)
    store.memories.soft_delete(gone.id)
    later = store.memories.matching(include_expired=True, now=T0 + 2 * DAY)
    assert soon.id in {m.id for m in later} and gone.id not in {m.id for m in later}


def test_find_by_hash_ignores_case_and_spacing(store):
    memory = store.memories.add("Use  Python 3.11")
    probe = store.memories.add("use python 3.11")
    assert probe.content_hash == memory.content_hash
    assert store.memories.find_by_hash(memory.content_hash).id == probe.id  # newest first


def test_touch_accessed_sets_the_stamp_only(store):
    memory = store.memories.add("x", now=T0)
    assert store.memories.touch_accessed([memory.id], when=T0 + 50) == 1
    touched = store.memories.get(memory.id)
    assert touched.last_accessed_at == T0 + 50 and touched.updated_at == T0


def test_set_embedding_and_needing_embedding(store):
    bare = store.memories.add("no vector yet")
    old = store.memories.add("old model", embedding=[1.0, 0.0], embedding_model="old")
    current = store.memories.add("current", embedding=[0.0, 1.0], embedding_model="new")
    assert [m.id for m in store.memories.needing_embedding("new", 10)] == [bare.id, old.id]
    assert store.memories.set_embedding(bare.id, [0.5, 0.5], "new")
    assert [m.id for m in store.memories.needing_embedding("new", 10)] == [old.id]
    assert set(store.memories.codes.current("new").ids) == {bare.id, current.id}
    assert store.memories.get(bare.id).embedding_dim == 2


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("green tea", "The user drinks green tea every morning"),
        ("Tea", "The user drinks green tea every morning"),
        ("绿茶", "用户每天早上喝绿茶"),
        ("早上喝茶", "用户每天早上喝绿茶"),
        ("raspberry deployment", "Deploys the service to a Raspberry Pi"),
    ],
)
def test_keyword_search_on_both_paths(repo, query, expected):
    for text in [
        "The user drinks green tea every morning",
        "用户每天早上喝绿茶",
        "Deploys the service to a Raspberry Pi",
        "Their cat is called Miso",
    ]:
        repo.add(text, now=T0)
    hits = repo.search_keyword(query, limit=5, now=T0)
    assert hits and hits[0][0].content == expected
    assert all(0 < score <= 1 for _, score in hits)
    assert "Their cat is called Miso" not in [m.content for m, _ in hits]


def test_keyword_score_is_the_share_of_query_terms(repo):
    both = repo.add("alpha beta gamma", now=T0)
    one = repo.add("alpha delta", now=T0)
    scores = repo.keyword_scores("alpha beta", now=T0)
    assert scores == {both.id: 1.0, one.id: 0.5}
    assert list(scores) == [both.id, one.id]


def test_ranking_skips_terms_too_common_to_rank_cheaply(store, statements, monkeypatch):
    from tea_agent_mini.store import memory_keywords

    monkeypatch.setattr(memory_keywords, "RANK_BUDGET", 3)
    repo = store.memories
    common = [repo.add(f"common note {n}", now=T0) for n in range(5)]
    both = repo.add("common rare", now=T0)
    statements.clear()
    scores = repo.keyword_scores("rare common", now=T0)
    assert scores == {both.id: 1.0}  # found by its rare term, scored on both
    # ranked by bm25 (SQLite) or ts_rank (PostgreSQL), on the rare term alone
    (ranked,) = [params for sql, params in statements if "rank" in sql.split("ORDER BY")[-1]]
    assert ranked[0] in ('"rare"', "'rare'") and "common" not in str(ranked)
    # every term too common: the newest matches, still scored by their share of the terms
    newest = repo.keyword_scores("common", limit=2, now=T0)
    assert list(newest) == [both.id, common[-1].id]


def test_keyword_search_skips_deleted_and_expired(repo):
    gone = repo.add("python packaging notes", now=T0)
    expired = repo.add("python meetup reminder", expires_at=T0 + 1, now=T0)
    live = repo.add("python style guide", now=T0)
    repo.soft_delete(gone.id)
    hits = repo.search_keyword("python", now=T0 + 10)
    assert [m.id for m, _ in hits] == [live.id]
    assert expired.id not in [m.id for m, _ in hits]


def test_edited_content_is_searched_by_its_new_words(repo):
    memory = repo.add("likes jazz", now=T0)
    repo.update(memory.id, content="likes techno", now=T0 + 1)
    assert repo.search_keyword("jazz", now=T0 + 2) == []
    assert [m.id for m, _ in repo.search_keyword("techno", now=T0 + 2)] == [memory.id]


def test_like_fallback_when_the_fts_table_is_missing(store_target):
    path = store_target
    with Store.open(path) as store:
        store.memories.add("remember the milk", now=T0)
        store.db.execute("DROP TABLE memories_fts")
    with Store.open(path) as store:
        assert not store.memories.uses_fts
        assert store.memories.stats(T0).keyword_backend == "like"
        store.memories.add("buy oat milk", now=T0)
        hits = store.memories.search_keyword("milk", now=T0)
        assert sorted(m.content for m, _ in hits) == ["buy oat milk", "remember the milk"]


def test_fts_index_out_of_step_is_rebuilt(store_target):
    path = store_target
    with Store.open(path) as store:
        # written without indexing, as an SQLite without FTS5 would
        MemoryRepository(store.db, use_fts=False).add("written while FTS was unavailable")
    with Store.open(path) as store:
        assert store.memories.uses_fts
        hits = store.memories.search_keyword("unavailable")
        assert [m.content for m, _ in hits] == ["written while FTS was unavailable"]


def test_active_snapshot_follows_writes_incrementally(store):
    repo = store.memories
    a = repo.add("first", now=T0)
    first = repo.active(T0)
    assert [m.id for m in first] == [a.id]
    assert repo.active(T0) is first  # unchanged: the very same list
    b = repo.add("second", now=T0)
    assert [m.id for m in repo.active(T0)] == [a.id, b.id]
    repo.update(a.id, content="first, edited", now=T0)
    repo.soft_delete(b.id)
    assert [(m.id, m.content) for m in repo.active(T0)] == [(a.id, "first, edited")]


def test_active_snapshot_sees_other_connections(store_target):
    path = store_target
    with Store.open(path) as one, Store.open(path) as two:
        one.memories.add("from one", now=T0)
        assert [m.content for m in two.memories.active(T0)] == ["from one"]
        two.memories.add("from two", now=T0)
        assert sorted(m.content for m in one.memories.active(T0)) == ["from one", "from two"]


def test_stats_counts(store):
    repo = store.memories
    repo.add("a", priority=0, category="instruction", pinned=True, now=T0)
    repo.add("b", priority=2, category="fact", embedding=[1.0], embedding_model="m", now=T0)
    repo.add("c", priority=2, category="fact", expires_at=T0 + 1, now=T0)
    gone = repo.add("d", now=T0)
    repo.soft_delete(gone.id)
    stats = repo.stats(T0 + 5)
    assert stats.active == 2 and stats.pinned == 1 and stats.expired == 1 and stats.deleted == 1
    assert stats.by_priority == {0: 1, 2: 1}
    assert stats.by_category == {"instruction": 1, "fact": 1}
    assert stats.embedded == {"m": 1}


def test_memories_survive_reopening(store_target):
    path = store_target
    with Store.open(path) as store:
        memory = store.memories.add("persistent", tags=["x"], now=T0)
    with Store.open(path) as store:
        assert store.memories.get(memory.id) == memory


MEMORY_COLUMNS = [
    "id", "content", "priority", "importance", "category", "tags", "content_hash", "embedding",
    "embedding_model", "embedding_dim", "expires_at", "pinned", "created_at", "updated_at",
    "last_accessed_at", "source_topic", "deleted_at", "changed_at", "embedding_code",
]  # fmt: skip


def test_migrations_build_the_memories_schema(tmp_path):  # SQLite; PostgreSQL: test_store_postgres
    path = tmp_path / "chat.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(memories)")]
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(memories)")}
        fts = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
    finally:
        conn.close()
    assert columns == MEMORY_COLUMNS
    assert {"memories_by_hash", "memories_live", "memories_by_change"} <= indexes
    assert {"memories_codes", "memories_ranked"} <= indexes
    assert fts is not None and "fts5" in fts[0].lower()


def test_migration_six_gives_stored_vectors_their_codes(empty_target):
    from tea_agent_mini.store.database import Database
    from tea_agent_mini.store.migrations import MIGRATIONS, migrate
    from tea_agent_mini.vectors import pack, sign_code

    path = empty_target
    db = Database.open(path)
    try:
        migrate(db, MIGRATIONS[:5])  # a file from before the codes
        vectors = {"one": [0.6, -0.8], "two": [-1.0, 0.0], "bare": None, "odd": b"\x00" * 5}
        for content, vector in vectors.items():
            blob = pack(vector) if isinstance(vector, list) else vector
            db.execute(
                "INSERT INTO memories (content, content_hash, embedding, embedding_model, "
                "created_at, updated_at) VALUES (?, ?, ?, 'm', 0, 0)",
                (content, content, blob),
            )
    finally:
        db.close()
    with Store.open(path) as store:
        rows = store.db.query("SELECT content, embedding, embedding_code FROM memories")
        codes = {row[0]: row[2] for row in rows}
        assert codes["one"] == sign_code(pack([0.6, -0.8])) == bytes([0b10])
        assert codes["two"] == bytes([0b01])
        assert codes["bare"] is None and codes["odd"] is None  # no vector, a damaged one

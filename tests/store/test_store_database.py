"""The connection layer: transactions and error translation on both backends; SQLite's pragmas,
WAL and refusal of foreign files (tests on tmp_path: only SQLite has a file)."""

from __future__ import annotations

import sqlite3

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store


def test_open_creates_parent_directories(tmp_path):
    path = tmp_path / "a" / "b" / "chat.db"
    with Store.open(path) as store:
        assert store.path == path
    assert path.is_file()


@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)  # SQLite's PRAGMAs
def test_connection_pragmas(store):
    assert store.db.query_one("PRAGMA journal_mode")[0] == "wal"
    assert store.db.query_one("PRAGMA foreign_keys")[0] == 1
    assert store.db.query_one("PRAGMA synchronous")[0] == 1  # NORMAL
    assert store.db.query_one("PRAGMA busy_timeout")[0] > 0


def test_wal_mode_is_persistent_and_close_checkpoints(tmp_path):
    path = tmp_path / "chat.db"
    store = Store.open(path)
    store.topics.create("kept")
    store.close()
    wal = path.with_name("chat.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT title FROM topics").fetchall() == [("kept",)]
    finally:
        conn.close()


def test_close_twice_and_use_after_close(store_target):
    store = Store.open(store_target)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.topics.recent()


def test_driver_errors_become_store_errors(store):
    with pytest.raises(StoreError, match="no such table|does not exist") as info:
        store.db.query("SELECT * FROM nowhere")
    if store.db.dialect == "sqlite":
        assert isinstance(info.value.__cause__, sqlite3.Error)
    else:
        import pg8000

        assert isinstance(info.value.__cause__, pg8000.Error)
    assert store.location in str(info.value)


def test_transaction_commits(store):
    with store.transaction():
        a = store.topics.create("a")
        b = store.topics.create("b")
    assert {t.id for t in store.topics.recent()} == {a.id, b.id}


def test_transaction_rolls_back_on_error(store):
    kept = store.topics.create("kept")
    with pytest.raises(RuntimeError), store.transaction():
        store.topics.create("lost")
        store.topics.rename(kept.id, "renamed")
        raise RuntimeError("boom")
    assert [t.title for t in store.topics.recent()] == ["kept"]


def test_nested_transaction_rolls_back_only_the_inner_block(store):
    with store.transaction():
        store.topics.create("outer")
        with pytest.raises(RuntimeError), store.transaction():
            store.topics.create("inner")
            raise RuntimeError("inner fails")
        store.topics.create("after")
    assert sorted(t.title for t in store.topics.recent()) == ["after", "outer"]


def test_store_usable_after_failed_transaction(store):
    with pytest.raises(StoreError), store.transaction():
        store.db.execute("INSERT INTO nowhere VALUES (1)")
    store.topics.create("fine")
    assert [t.title for t in store.topics.recent()] == ["fine"]


@pytest.mark.parametrize(
    "payload",
    [
        b"this is my diary, not a database\n" * 10,
        b"\x00\x01\x02\x03" * 100,
        b"SQLite format 2\x00" + b"\x00" * 200,
    ],
)
def test_non_sqlite_file_is_refused_and_left_untouched(tmp_path, payload):
    path = tmp_path / "chat.db"
    path.write_bytes(payload)
    before = path.stat().st_mtime_ns
    with pytest.raises(StoreError, match="not an SQLite database") as info:
        Store.open(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == payload
    assert path.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.db"]


def test_damaged_sqlite_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "chat.db"
    # right magic, garbage everywhere else: SQLite itself must reject it
    payload = b"SQLite format 3\x00" + b"\xff" * 4080
    path.write_bytes(payload)
    with pytest.raises(StoreError) as info:
        Store.open(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == payload


def test_directory_at_the_path_is_refused(tmp_path):
    (tmp_path / "chat.db").mkdir()
    with pytest.raises(StoreError, match="directory"):
        Store.open(tmp_path / "chat.db")


def test_empty_file_is_initialised(tmp_path):
    path = tmp_path / "chat.db"
    path.write_bytes(b"")
    with Store.open(path) as store:
        assert store.topics.create("x").title == "x"

"""Schema versioning on both backends: fresh databases, older ones, newer ones, foreign ones. The
tests on ``tmp_path`` build SQLite files by hand (the schema migration 1 shipped, a newer or a
foreign file) and check that a refused file is left byte for byte as it was: SQLite only."""

from __future__ import annotations

import sqlite3

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.store.database import Database
from tea_agent_mini.store.migrations import MIGRATIONS, migrate, schema_version
from tea_agent_mini.types import Message

LATEST = MIGRATIONS[-1][0]

# The version-1 schema exactly as migration 1 first shipped it. A frozen copy: users' files hold
# this, so test_migration_one_still_builds_the_shipped_schema fails if migration 1 is edited.
V1_SCHEMA = """
CREATE TABLE topics (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL,
    updated_at REAL NOT NULL, profile TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
    system_prompt TEXT, archived INTEGER NOT NULL DEFAULT 0);
CREATE INDEX topics_by_update ON topics (updated_at);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE, role TEXT NOT NULL,
    content TEXT, parts TEXT, reasoning TEXT, tool_calls TEXT, tool_call_id TEXT, name TEXT,
    tokens INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
CREATE INDEX messages_by_topic ON messages (topic_id, id);
CREATE TABLE state (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    updated_at REAL NOT NULL, PRIMARY KEY (scope, key)) WITHOUT ROWID;
PRAGMA user_version = 1;
"""


def _tables(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {r[0] for r in rows} - {"sqlite_sequence"}


def _user_version(path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def _make_v1_schema(path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.executescript(V1_SCHEMA)
    finally:
        conn.close()


def _make_v1(path) -> None:
    _make_v1_schema(path)
    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t1', 'old', 1.0, 2.0)"
        )
        conn.execute(
            "INSERT INTO messages (topic_id, role, content, created_at) "
            "VALUES ('t1', 'user', 'from v1', 1.5)"
        )
        conn.commit()
    finally:
        conn.close()


def test_migrations_are_numbered_one_to_n_with_unique_names():
    assert [v for v, _, _ in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    names = [name for _, name, _ in MIGRATIONS]
    assert len(set(names)) == len(names)


def _schema(path) -> dict[str, list[tuple]]:
    """Columns of every table and index, as SQLite reports them (whitespace-independent)."""
    conn = sqlite3.connect(path)
    try:
        objects = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
        return {
            name: conn.execute(f"PRAGMA {kind}_xinfo('{name}')").fetchall()
            for kind, name in objects
        }
    finally:
        conn.close()


def test_migration_one_still_builds_the_shipped_schema(tmp_path):
    by_hand = tmp_path / "hand.db"
    _make_v1_schema(by_hand)
    migrated = tmp_path / "migrated.db"
    db = Database.open(migrated)
    try:
        migrate(db, MIGRATIONS[:1])
    finally:
        db.close()
    assert _schema(migrated) == _schema(by_hand)


def test_fresh_file_migrates_from_version_zero(tmp_path):
    path = tmp_path / "chat.db"
    with Store.open(path):
        pass
    assert _user_version(path) == LATEST
    assert {"topics", "messages", "state"} <= _tables(path)


def test_a_fresh_database_migrates_from_version_zero(empty_target):
    with Store.open(empty_target) as store:
        assert store.db.schema_version() == LATEST
        assert {"topics", "messages", "state", "memories", "tasks"} <= set(store.db.tables())


def test_reopening_does_not_migrate_again(empty_target):
    Store.open(empty_target).close()
    db = Database.open(empty_target)
    try:
        assert migrate(db) == LATEST
    finally:
        db.close()


def _at_version_one(target) -> None:
    db = Database.open(target)
    try:
        migrate(db, MIGRATIONS[:1])
        db.execute(
            "INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t1', 'old', 1, 2)"
        )
    finally:
        db.close()


def test_a_database_at_version_one_runs_the_missing_migrations_in_order(empty_target):
    _at_version_one(empty_target)
    future = [
        *MIGRATIONS,
        (LATEST + 1, "pinned_topics", _add_pinned),
        (LATEST + 2, "notes", _create_notes),
    ]
    db = Database.open(empty_target)
    try:
        assert migrate(db, future) == 1
        assert schema_version(db) == LATEST + 2
        assert db.query_one("SELECT pinned FROM topics WHERE id = 't1'")[0] == 1
        assert db.query("SELECT * FROM notes") == []
    finally:
        db.close()


def test_a_failing_migration_rolls_back_and_keeps_the_earlier_ones(empty_target):
    _at_version_one(empty_target)

    def broken(db: Database) -> None:
        db.execute("CREATE TABLE half_done (x TEXT)")
        db.execute("THIS IS NOT SQL")

    future = [*MIGRATIONS, (LATEST + 1, "notes", _create_notes), (LATEST + 2, "broken", broken)]
    db = Database.open(empty_target)
    try:
        with pytest.raises(StoreError, match=rf"migration {LATEST + 2} \(broken\)"):
            migrate(db, future)
        assert schema_version(db) == LATEST + 1
        assert "half_done" not in db.tables() and "notes" in db.tables()
    finally:
        db.close()


def test_a_newer_database_is_refused(empty_target):
    Store.open(empty_target).close()
    db = Database.open(empty_target)
    try:
        with db.transaction():
            db.record_migration(LATEST + 5, "from_the_future")
    finally:
        db.close()
    with pytest.raises(StoreError, match="only knows") as info:
        Store.open(empty_target)
    message = str(info.value)
    assert str(LATEST + 5) in message and "upgrade" in message


def test_a_database_someone_else_made_is_refused(empty_target):
    db = Database.open(empty_target)
    try:
        db.execute("CREATE TABLE topics (topic_id INTEGER PRIMARY KEY, title TEXT)")
    finally:
        db.close()
    with pytest.raises(StoreError, match="did not create") as info:
        Store.open(empty_target)
    assert "topics" in str(info.value)
    db = Database.open(empty_target)
    try:
        assert db.tables() == ["topics"] and db.schema_version() == 0  # left as it was
    finally:
        db.close()


def test_reopens_a_hand_made_v1_file(tmp_path):
    path = tmp_path / "chat.db"
    _make_v1(path)
    with Store.open(path) as store:
        topic = store.topics.get("t1")
        assert topic is not None and topic.title == "old" and topic.message_count == 1
        assert [m.content for m in store.messages.of_topic("t1")] == ["from v1"]
        store.messages.add("t1", Message(role="assistant", content="from now"))
    assert _user_version(path) == LATEST


def _add_pinned(db: Database) -> None:
    db.execute("ALTER TABLE topics ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0")
    db.execute("UPDATE topics SET pinned = 1 WHERE title = 'old'")


def _create_notes(db: Database) -> None:
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")


def test_older_file_runs_only_the_missing_migrations_in_order(tmp_path):
    path = tmp_path / "chat.db"
    _make_v1(path)
    future = [
        *MIGRATIONS,
        (LATEST + 1, "pinned_topics", _add_pinned),
        (LATEST + 2, "notes", _create_notes),
    ]
    db = Database.open(path)
    try:
        assert migrate(db, future) == 1
        assert schema_version(db) == LATEST + 2
        assert db.query_one("SELECT pinned FROM topics WHERE id = 't1'")[0] == 1
        assert db.query("SELECT * FROM notes") == []
    finally:
        db.close()


def test_newer_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "chat.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.execute(f"PRAGMA user_version = {LATEST + 5}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer|only knows") as info:
        Store.open(path)
    message = str(info.value)
    assert str(path) in message and str(LATEST + 5) in message and "upgrade" in message
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "chat.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE topics (topic_id INTEGER PRIMARY KEY, title TEXT)")
    conn.execute("INSERT INTO topics (title) VALUES ('someone else''s')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="did not create") as info:
        Store.open(path)
    assert "topics" in str(info.value)
    assert path.read_bytes() == before

"""The migrations of the tables that several instances on one PostgreSQL share (13-16; see
``migrations.py`` for the list and the rules): turns, shared files, turn commands and change
counters. The tables are made on SQLite too, where they stay empty, so that both backends have
one schema; the change counters' triggers are PostgreSQL's alone."""

from __future__ import annotations

from .database import Database

__all__ = ["change_counters", "shared_files", "shared_turns", "turn_commands"]


def shared_turns(db: Database) -> None:
    # the turns of several server instances on one PostgreSQL (turn_log.py); unused on SQLite
    db.execute(
        """CREATE TABLE turn_events (
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            id INTEGER NOT NULL,
            turn TEXT NOT NULL,
            event TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (topic_id, id)
        )"""
    )
    db.execute(
        """CREATE TABLE turn_queue (
            id TEXT PRIMARY KEY,
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            item TEXT NOT NULL,
            created_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX turn_queue_by_topic ON turn_queue (topic_id, created_at)")
    db.execute(
        """CREATE TABLE session_leases (
            topic_id TEXT PRIMARY KEY REFERENCES topics (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            turn TEXT,
            expires_at REAL NOT NULL
        )"""
    )


def shared_files(db: Database) -> None:
    # files several instances on one PostgreSQL share (config profiles, self-made tools), with
    # a version counter the others check at each turn (store/shared.py); unused on SQLite
    db.execute(
        """CREATE TABLE shared_files (
            path TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            content TEXT,
            version INTEGER NOT NULL,
            origin TEXT NOT NULL DEFAULT '',
            updated_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX shared_files_by_version ON shared_files (version)")


def turn_commands(db: Database) -> None:
    # an abort or an answer for a turn that runs on another instance (server/turn_commands.py):
    # a row, as an answer may be longer than a notification's payload; unused on SQLite
    db.execute(
        """CREATE TABLE turn_commands (
            id TEXT PRIMARY KEY,
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            command TEXT NOT NULL,
            created_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX turn_commands_by_owner ON turn_commands (owner)")


# the columns of memories whose change the instances' memory caches must see: all but the
# access stamp, which selection writes at each turn
_MEMORY_COLUMNS = (
    "content, priority, importance, category, tags, content_hash, embedding, embedding_model, "
    "embedding_dim, expires_at, pinned, updated_at, source_topic, deleted_at, changed_at, "
    "embedding_code"
)


def change_counters(db: Database) -> None:
    # PostgreSQL only (one SQLite file has PRAGMA data_version): a counter per table that
    # the instances' caches check instead of any commit anywhere, and a notification
    # (pg_listen.CHANGES: the table's name, then the writer's Database.origin) for those
    # that wait: the schedulers of the other instances
    if db.dialect != "postgresql":
        return
    db.execute("CREATE TABLE store_changes (name TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    db.execute(
        """CREATE FUNCTION tea_store_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO store_changes (name, version) VALUES (TG_TABLE_NAME, 1)
                ON CONFLICT (name) DO UPDATE SET version = store_changes.version + 1;
            PERFORM pg_notify('tea_changes', TG_TABLE_NAME || ' '
                || COALESCE(current_setting('tea.origin', true), ''));
            RETURN NULL;
        END $$"""
    )
    # per row, not per statement: a statement that changes nothing (a scheduler finding no
    # due task) must not wake the other instances, whose look would wake this one again
    for table, update in (("memories", f"UPDATE OF {_MEMORY_COLUMNS}"), ("tasks", "UPDATE")):
        db.execute(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR {update} OR DELETE "
            f"ON {table} FOR EACH ROW EXECUTE FUNCTION tea_store_changed()"
        )

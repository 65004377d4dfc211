"""Schema migrations: named, ordered functions. ``PRAGMA user_version`` records the last one run.

To change the schema, append ``(next_version, "what_it_does", function)`` to :data:`MIGRATIONS`;
the function receives the :class:`Database` inside a transaction. Never edit a migration that has
shipped: users' files have already run it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ..errors import StoreError
from .database import Database

log = logging.getLogger(__name__)

Migration = tuple[int, str, Callable[[Database], None]]


def _core_tables(db: Database) -> None:
    db.execute(
        """CREATE TABLE topics (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            profile TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            system_prompt TEXT,
            archived INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX topics_by_update ON topics (updated_at)")
    # AUTOINCREMENT: ids are never reused after delete_after, so clients may cache them
    db.execute(
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            content TEXT,
            parts TEXT,
            reasoning TEXT,
            tool_calls TEXT,
            tool_call_id TEXT,
            name TEXT,
            tokens INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX messages_by_topic ON messages (topic_id, id)")
    db.execute(
        """CREATE TABLE state (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (scope, key)
        ) WITHOUT ROWID"""
    )


MIGRATIONS: list[Migration] = [
    (1, "core_tables", _core_tables),
]
"""Every migration in order; versions run 1, 2, 3 ... without gaps."""


def schema_version(db: Database) -> int:
    row = db.query_one("PRAGMA user_version")
    return int(row[0]) if row else 0


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Run every migration newer than the file's version; return the version it started at.

    Raises:
        StoreError: the file is newer than this code, is an SQLite file some other program made,
            or a migration failed (that migration is rolled back, earlier ones stay).
    """
    latest = migrations[-1][0] if migrations else 0
    start = schema_version(db)
    if start > latest:
        raise StoreError(
            f"the store {db.path} has schema version {start}, but this tea_agent_mini only knows "
            f"up to {latest}; upgrade tea_agent_mini or point TEA_AGENT_HOME elsewhere"
        )
    if start == 0:
        _refuse_foreign_schema(db)
    for version, name, apply in migrations:
        if version <= start:
            continue
        try:
            with db.transaction():
                # re-read under the write lock: another process may have migrated meanwhile
                if schema_version(db) >= version:
                    continue
                log.info("migrating %s to schema %d (%s)", db.path, version, name)
                apply(db)
                db.execute(f"PRAGMA user_version = {int(version)}")
        except StoreError as exc:
            raise StoreError(f"migration {version} ({name}) failed: {exc}") from exc
    return start


def _refuse_foreign_schema(db: Database) -> None:
    rows = db.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
        "ESCAPE '\\' ORDER BY name"
    )
    if rows:
        names = ", ".join(row[0] for row in rows[:5])
        raise StoreError(
            f"{db.path} is an SQLite database that tea_agent_mini did not create "
            f"(tables: {names}); refusing to change it "
            "(move it aside or point TEA_AGENT_HOME elsewhere)"
        )

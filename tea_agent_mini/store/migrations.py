"""Schema migrations: named, ordered functions, the same on both backends. The database records
the last one run: ``PRAGMA user_version`` on SQLite, the ``schema_migrations`` table on
PostgreSQL (see ``Database.record_migration``).

To change the schema, append ``(next_version, "what_it_does", function)`` to :data:`MIGRATIONS`;
the function receives the :class:`Database` inside a transaction. Write SQLite's DDL (keywords
and types in capitals): on PostgreSQL ``dialect.py`` translates it. Never edit a migration that
has shipped: users' databases have already run it. The tables several instances share
(13-16) are in ``migrations_shared.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ..errors import StoreError
from .database import Database
from .migrations_shared import change_counters, shared_files, shared_turns, turn_commands

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


def _memories(db: Database) -> None:
    db.execute(
        """CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content TEXT NOT NULL,
            priority INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 3),
            importance INTEGER NOT NULL DEFAULT 3 CHECK (importance BETWEEN 1 AND 5),
            category TEXT NOT NULL DEFAULT 'general',
            tags TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL,
            embedding BLOB,
            embedding_model TEXT NOT NULL DEFAULT '',
            embedding_dim INTEGER NOT NULL DEFAULT 0,
            expires_at REAL,
            pinned INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_accessed_at REAL,
            source_topic TEXT,
            deleted_at REAL,
            changed_at REAL NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX memories_by_hash ON memories (content_hash)")
    db.execute("CREATE INDEX memories_live ON memories (deleted_at, priority, updated_at)")
    # changed_at: when the row last changed in any way but an access stamp, so the in-memory
    # snapshot of live memories can catch up by reading only the rows changed since
    db.execute("CREATE INDEX memories_by_change ON memories (changed_at)")
    # Keyword index over precomputed terms (words, CJK bigrams); rowid = memories.id. Optional:
    # without FTS5 in this SQLite build the repository searches with LIKE instead. On
    # PostgreSQL it becomes a table with a tsvector of the terms (dialect.py).
    try:
        db.execute("CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, tokenize = 'unicode61')")
    except StoreError as exc:
        if "fts5" not in str(exc).lower():
            raise
        log.info("SQLite has no FTS5 here; memory keyword search will use LIKE")


def _tasks(db: Database) -> None:
    db.execute(
        """CREATE TABLE tasks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            kind TEXT NOT NULL CHECK (kind IN ('shell', 'prompt')),
            schedule TEXT NOT NULL,
            tz TEXT,
            command TEXT,
            prompt TEXT,
            topic_id TEXT REFERENCES topics (id) ON DELETE SET NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            anchor_at REAL NOT NULL,
            next_run_at REAL,
            last_run_at REAL,
            grace_seconds REAL NOT NULL DEFAULT 600,
            timeout REAL NOT NULL DEFAULT 300,
            notify INTEGER NOT NULL DEFAULT 0,
            lease_owner TEXT,
            lease_until REAL NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX tasks_due ON tasks (enabled, next_run_at)")
    db.execute(
        """CREATE TABLE task_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
            status TEXT NOT NULL CHECK (status IN
                ('running', 'ok', 'failed', 'missed', 'timeout', 'skipped')),
            scheduled_for REAL,
            started_at REAL,
            ended_at REAL,
            exit_code INTEGER,
            output TEXT NOT NULL DEFAULT '',
            error TEXT,
            topic_id TEXT
        )"""
    )
    db.execute("CREATE INDEX task_runs_by_task ON task_runs (task_id, id)")


def _context_levels(db: Database) -> None:
    # L2 ring and L3 summary of the history levels; why tables: see context/records.py
    db.execute(
        """CREATE TABLE context_pairs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            user_message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
            answer_message_id INTEGER,
            user_text TEXT NOT NULL,
            answer_text TEXT NOT NULL,
            thinking TEXT NOT NULL DEFAULT '',
            files TEXT NOT NULL DEFAULT '[]',
            tools TEXT NOT NULL DEFAULT '[]',
            terms TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            UNIQUE (topic_id, user_message_id)
        )"""
    )
    # deleting a message looks its pairs up by this column (the cascade above)
    db.execute("CREATE INDEX context_pairs_by_message ON context_pairs (user_message_id)")
    db.execute(
        """CREATE TABLE context_summaries (
            topic_id TEXT PRIMARY KEY REFERENCES topics (id) ON DELETE CASCADE,
            content TEXT NOT NULL DEFAULT '',
            tool_recap TEXT NOT NULL DEFAULT '{}',
            pairs_covered INTEGER NOT NULL DEFAULT 0,
            last_message_id INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL,
            failures INTEGER NOT NULL DEFAULT 0,
            retry_at REAL NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT ''
        ) WITHOUT ROWID"""
    )


def _user_turns(db: Database) -> None:
    # the start of the last n user turns without walking the topic (messages.recent_turns)
    db.execute("CREATE INDEX messages_user_turns ON messages (topic_id, id) WHERE role = 'user'")


def _memory_codes(db: Database) -> None:
    # sign codes of the vectors for the first pass of vector search; see store/memory_codes.py
    db.execute("ALTER TABLE memories ADD COLUMN embedding_code BLOB")
    _fill_codes(db)
    # covering: a start loads every code without touching the rows (and their vectors)
    db.execute(
        "CREATE INDEX memories_codes "
        "ON memories (embedding_model, deleted_at, expires_at, embedding_code)"
    )
    # the strongest memories of each priority and importance, newest first, for selection
    db.execute(
        "CREATE INDEX memories_ranked ON memories (deleted_at, priority, importance, updated_at)"
    )


def _fill_codes(db: Database) -> None:
    """Codes for the vectors already stored, read in chunks (a store may hold many)."""
    from ..vectors import sign_code

    after = 0
    while rows := db.query(
        "SELECT id, embedding FROM memories WHERE id > ? AND embedding IS NOT NULL "
        "ORDER BY id LIMIT 2000",
        (after,),
    ):
        for memory_id, blob in rows:
            if blob and len(blob) % 4 == 0:  # a damaged vector gets no code: never a candidate
                code = sign_code(bytes(blob))
                db.execute("UPDATE memories SET embedding_code = ? WHERE id = ?", (code, memory_id))
        after = int(rows[-1][0])


def _topic_sources(db: Database) -> None:
    # which front end made each topic (store/topics.py SOURCES). Older topics were all listed in
    # the web UI, so they stay there, except the sessions of scheduled tasks.
    db.execute("ALTER TABLE topics ADD COLUMN source TEXT NOT NULL DEFAULT 'ui'")
    db.execute(
        "UPDATE topics SET source = 'task' "
        "WHERE id IN (SELECT topic_id FROM tasks WHERE topic_id IS NOT NULL) "
        "OR id IN (SELECT topic_id FROM task_runs WHERE topic_id IS NOT NULL)"
    )
    db.execute("CREATE INDEX topics_by_source ON topics (source, updated_at)")


def _message_outcomes(db: Database) -> None:
    # how a turn ended (on its last assistant message) and how each tool call went, so a
    # stopped or failed turn reads back as it was shown; see types.Message
    db.execute("ALTER TABLE messages ADD COLUMN status TEXT")
    db.execute("ALTER TABLE messages ADD COLUMN error TEXT")
    db.execute("ALTER TABLE messages ADD COLUMN duration REAL")


def _agents(db: Database) -> None:
    # subagents and teammates: a child topic names its parent and the identity it runs as;
    # agents exchange messages through inboxes; teammates outlive a process (store/agents.py)
    db.execute("ALTER TABLE topics ADD COLUMN parent_id TEXT")
    db.execute("ALTER TABLE topics ADD COLUMN agent TEXT")
    db.execute("CREATE INDEX topics_by_parent ON topics (parent_id) WHERE parent_id IS NOT NULL")
    db.execute(
        """CREATE TABLE agent_messages (
            id INTEGER PRIMARY KEY,
            created_at REAL NOT NULL,
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            data TEXT,
            read_at REAL
        )"""
    )
    db.execute("CREATE INDEX agent_messages_inbox ON agent_messages (recipient, read_at, id)")
    db.execute(
        """CREATE TABLE teammates (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL,
            prompt TEXT NOT NULL,
            agent TEXT,
            topic_id TEXT,
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )


def _learning(db: Database) -> None:
    # the durable queue of follow-up jobs (store/jobs.py), how finished tasks went and what
    # they taught (store/evaluations.py)
    db.execute(
        """CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            topic_id TEXT REFERENCES topics (id) ON DELETE CASCADE,
            payload TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            owner TEXT NOT NULL DEFAULT '',
            error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX jobs_by_status ON jobs (status, id)")
    db.execute("CREATE INDEX jobs_by_topic ON jobs (topic_id) WHERE topic_id IS NOT NULL")
    db.execute(
        """CREATE TABLE evaluations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            topic_id TEXT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
            user_message_id INTEGER NOT NULL,
            user_text TEXT NOT NULL DEFAULT '',
            tools TEXT NOT NULL DEFAULT '[]',
            outcome TEXT NOT NULL CHECK (outcome IN ('success', 'partial', 'failed')),
            quality INTEGER NOT NULL CHECK (quality BETWEEN 1 AND 5),
            reason TEXT NOT NULL DEFAULT '',
            iterations INTEGER NOT NULL DEFAULT 0,
            tool_calls INTEGER NOT NULL DEFAULT 0,
            errors INTEGER NOT NULL DEFAULT 0,
            error_text TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            finish_reason TEXT,
            source TEXT NOT NULL CHECK (source IN ('heuristic', 'model', 'user')),
            rating TEXT CHECK (rating IN ('good', 'bad')),
            comment TEXT,
            lesson_id INTEGER,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (topic_id, user_message_id)
        )"""
    )
    db.execute(
        """CREATE TABLE lessons (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            evaluation_id INTEGER REFERENCES evaluations (id) ON DELETE SET NULL,
            topic_id TEXT REFERENCES topics (id) ON DELETE SET NULL,
            category TEXT NOT NULL DEFAULT 'general',
            mistake TEXT NOT NULL,
            instead TEXT NOT NULL,
            terms TEXT NOT NULL DEFAULT '',
            embedding BLOB,
            embedding_model TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'heuristic',
            created_at REAL NOT NULL
        )"""
    )


def _prompt_versions(db: Database) -> None:
    # versions of the agent's guidelines (store/prompts.py); version 0, the built-in text, is
    # never stored. One active version at most (none active: the built-in text is in use).
    db.execute(
        """CREATE TABLE prompt_versions (
            version INTEGER PRIMARY KEY,
            created_at REAL NOT NULL,
            text TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('proposed', 'active', 'retired')),
            parent INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL CHECK (source IN ('user', 'evolved')),
            activated_at REAL
        )"""
    )
    db.execute(
        "CREATE UNIQUE INDEX prompt_versions_active ON prompt_versions (status) "
        "WHERE status = 'active'"
    )
    # the version of the guidelines a turn ran with, on the user message that opened it
    db.execute("ALTER TABLE messages ADD COLUMN prompt_version INTEGER")
    db.execute(
        "CREATE INDEX messages_by_prompt_version ON messages (prompt_version) "
        "WHERE prompt_version IS NOT NULL"
    )


def _skill_stats(db: Database) -> None:
    # how each skill went: loads and the outcomes of the tasks that loaded it (skillstats.py)
    db.execute(
        """CREATE TABLE skill_stats (
            name TEXT PRIMARY KEY,
            uses INTEGER NOT NULL DEFAULT 0,
            successes INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            last_used REAL
        )"""
    )


MIGRATIONS: list[Migration] = [
    (1, "core_tables", _core_tables),
    (2, "memories", _memories),
    (3, "tasks", _tasks),
    (4, "context_levels", _context_levels),
    (5, "user_turns", _user_turns),
    (6, "memory_codes", _memory_codes),
    (7, "topic_sources", _topic_sources),
    (8, "message_outcomes", _message_outcomes),
    (9, "agents", _agents),
    (10, "learning", _learning),
    (11, "prompt_versions", _prompt_versions),
    (12, "skill_stats", _skill_stats),
    (13, "shared_turns", shared_turns),
    (14, "shared_files", shared_files),
    (15, "turn_commands", turn_commands),
    (16, "change_counters", change_counters),
]
"""Every migration in order; versions run 1, 2, 3 ... without gaps."""


def schema_version(db: Database) -> int:
    return db.schema_version()


def migrate(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Run every migration newer than the database's version; return the version it started at.

    Raises:
        StoreError: the database is newer than this code, holds tables some other program made,
            or a migration failed (that migration is rolled back, earlier ones stay).
    """
    latest = migrations[-1][0] if migrations else 0
    start = db.schema_version()
    if start > latest:
        raise StoreError(
            f"the store {db.location} has schema version {start}, but this tea_agent_mini only "
            f"knows up to {latest}; upgrade tea_agent_mini or {db.elsewhere}"
        )
    if start == 0:
        with db.transaction():
            # under the write lock: an instance starting at the same time may have just
            # created the first tables, and then its version is recorded too
            if db.schema_version() == 0:
                _refuse_foreign_schema(db)
    for version, name, apply in migrations:
        if version <= start:
            continue
        try:
            with db.transaction():
                # re-read under the write lock: another process may have migrated meanwhile
                if db.schema_version() >= version:
                    continue
                log.info("migrating %s to schema %d (%s)", db.location, version, name)
                apply(db)
                db.record_migration(version, name)
        except StoreError as exc:
            raise StoreError(f"migration {version} ({name}) failed: {exc}") from exc
    return start


def _refuse_foreign_schema(db: Database) -> None:
    names = db.tables()
    if names:
        kind = "an SQLite database" if db.dialect == "sqlite" else "a database"
        raise StoreError(
            f"{db.location} is {kind} that tea_agent_mini did not create "
            f"(tables: {', '.join(names[:5])}); refusing to change it ({db.elsewhere})"
        )

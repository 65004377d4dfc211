"""Versions of the agent's guidelines (the versioned block of the system prompt), and which
version each turn ran with.

Version 0 is the built-in text; it is never stored (its text depends on the prompt profile, which
``context/guidelines.py`` knows). Stored versions count up from 1, each ``proposed`` (made by the
evolve pass, not in use), ``active`` (in use: one at most) or ``retired`` (was active once).
``parent`` is the version a version was made from. No active row means version 0 is in use.

A turn's version is written on the user message that opened it (``messages.prompt_version``,
NULL for turns from before versions were recorded), so outcomes can be grouped by version:
:meth:`PromptVersionRepository.turn_outcomes`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StoreError
from .database import Database, Row

__all__ = ["OUTCOMES", "PromptVersion", "PromptVersionRepository", "TurnOutcomes"]

STATUSES = ("proposed", "active", "retired")
SOURCES = ("builtin", "user", "evolved")
OUTCOMES = ("completed", "stopped", "failed")
_COLUMNS = "version, created_at, text, note, status, parent, source, activated_at"


@dataclass(frozen=True)
class PromptVersion:
    """One version of the guidelines. ``parent`` is None only for version 0 (built in)."""

    version: int
    text: str
    status: str
    source: str
    parent: int | None = None
    note: str = ""
    created_at: float = 0.0
    activated_at: float | None = None


@dataclass(frozen=True)
class TurnOutcomes:
    """How the turns that ran with one version ended (``unknown``: running, or never ended)."""

    turns: int = 0
    completed: int = 0
    stopped: int = 0
    failed: int = 0

    @property
    def unknown(self) -> int:
        return self.turns - self.completed - self.stopped - self.failed


class PromptVersionRepository:
    """Add, read and activate versions; record and count the turns of each."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, text: str, *, source: str, parent: int, note: str = "") -> PromptVersion:
        """Store ``text`` as a new ``proposed`` version made from ``parent``."""
        if source not in SOURCES[1:]:
            raise StoreError(f"a stored prompt version's source is user or evolved, not {source!r}")
        cursor = self._db.execute(
            "INSERT INTO prompt_versions (created_at, text, note, status, parent, source) "
            "VALUES (?, ?, ?, 'proposed', ?, ?)",
            (self._db.now(), text, note, int(parent), source),
        )
        added = self.get(int(cursor.lastrowid or 0))
        assert added is not None
        return added

    def get(self, version: int) -> PromptVersion | None:
        row = self._db.query_one(
            f"SELECT {_COLUMNS} FROM prompt_versions WHERE version = ?", (int(version),)
        )
        return _version(row) if row else None

    def newest(self, limit: int = 50, offset: int = 0) -> list[PromptVersion]:
        """Stored versions, newest first."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM prompt_versions ORDER BY version DESC LIMIT ? OFFSET ?",
            (max(0, int(limit)), max(0, int(offset))),
        )
        return [_version(row) for row in rows]

    def active(self) -> PromptVersion | None:
        """The version in use, or None when it is the built-in one."""
        row = self._db.query_one(f"SELECT {_COLUMNS} FROM prompt_versions WHERE status = 'active'")
        return _version(row) if row else None

    def activate(self, version: int) -> None:
        """Make ``version`` the one in use (0: the built-in text); the one before is retired.

        Raises:
            StoreError: no stored version ``version``.
        """
        with self._db.transaction() as tx:
            if version and self.get(version) is None:
                raise StoreError(f"no prompt version {version}")
            tx.execute("UPDATE prompt_versions SET status = 'retired' WHERE status = 'active'")
            if version:
                tx.execute(
                    "UPDATE prompt_versions SET status = 'active', activated_at = ? "
                    "WHERE version = ?",
                    (tx.now(), int(version)),
                )

    def record_turn(self, message_id: int, version: int) -> None:
        """Note that the turn opened by user message ``message_id`` runs with ``version``."""
        self._db.execute(
            "UPDATE messages SET prompt_version = ? WHERE id = ?", (int(version), int(message_id))
        )

    def turn_version(self, message_id: int) -> int | None:
        row = self._db.query_one("SELECT prompt_version FROM messages WHERE id = ?", (message_id,))
        return None if row is None or row[0] is None else int(row[0])

    def turn_outcomes(self) -> dict[int, TurnOutcomes]:
        """For each version that ran turns: how many, and how they ended. A turn's outcome is
        the status of the first assistant message that records one (``completed``, ``stopped``
        or ``failed``) before the topic's next user message."""
        rows = self._db.query(
            """SELECT u.prompt_version AS version, (
                   SELECT a.status FROM messages a
                   WHERE a.topic_id = u.topic_id AND a.id > u.id AND a.role = 'assistant'
                     AND a.status IS NOT NULL
                     AND a.id < COALESCE((
                         SELECT MIN(n.id) FROM messages n
                         WHERE n.topic_id = u.topic_id AND n.role = 'user' AND n.id > u.id
                     ), 9223372036854775807)
                   ORDER BY a.id LIMIT 1
               ) AS outcome
               FROM messages u WHERE u.prompt_version IS NOT NULL AND u.role = 'user'"""
        )
        counts: dict[int, dict[str, int]] = {}
        for row in rows:
            tally = counts.setdefault(int(row["version"]), dict.fromkeys(("turns", *OUTCOMES), 0))
            tally["turns"] += 1
            if row["outcome"] in OUTCOMES:
                tally[row["outcome"]] += 1
        return {version: TurnOutcomes(**tally) for version, tally in counts.items()}


def _version(row: Row) -> PromptVersion:
    return PromptVersion(
        version=int(row["version"]),
        text=row["text"],
        status=row["status"],
        source=row["source"],
        parent=int(row["parent"]),
        note=row["note"],
        created_at=row["created_at"],
        activated_at=row["activated_at"],
    )

"""A small JSON key/value table: per-topic tool state (todo lists, plans) and runtime settings.

Keys live in a ``scope``; per-topic state uses :func:`topic_scope` so that deleting the topic
deletes its state too.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import StoreError
from .database import Database

TOPIC_PREFIX = "topic:"


def topic_scope(topic_id: str) -> str:
    """The scope holding one topic's state."""
    return f"{TOPIC_PREFIX}{topic_id}"


class StateRepository:
    """JSON values by (scope, key). Values must be JSON-serialisable."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, scope: str, key: str, default: Any = None) -> Any:
        row = self._db.query_one(
            "SELECT value FROM state WHERE scope = ? AND key = ?", (scope, key)
        )
        return _decode(scope, key, row[0]) if row else default

    def put(self, scope: str, key: str, value: Any) -> None:
        """Store ``value`` (replacing any earlier one).

        Raises:
            StoreError: ``value`` cannot be encoded as JSON.
        """
        try:
            encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"state {scope}/{key} is not JSON-serialisable: {exc}") from exc
        self._db.execute(
            "INSERT INTO state (scope, key, value, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            (scope, key, encoded, self._db.now()),
        )

    def delete(self, scope: str, key: str) -> bool:
        cursor = self._db.execute("DELETE FROM state WHERE scope = ? AND key = ?", (scope, key))
        return cursor.rowcount > 0

    def items(self, scope: str) -> dict[str, Any]:
        rows = self._db.query("SELECT key, value FROM state WHERE scope = ? ORDER BY key", (scope,))
        return {row[0]: _decode(scope, row[0], row[1]) for row in rows}

    def by_key(self, key: str) -> dict[str, Any]:
        """``key``'s value in every scope that has one, by scope."""
        rows = self._db.query("SELECT scope, value FROM state WHERE key = ? ORDER BY scope", (key,))
        return {row[0]: _decode(row[0], key, row[1]) for row in rows}

    def clear(self, scope: str) -> int:
        """Delete every key of ``scope``; return how many there were."""
        return self._db.execute("DELETE FROM state WHERE scope = ?", (scope,)).rowcount


def _decode(scope: str, key: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"state {scope}/{key} is damaged in the store: {exc}") from exc

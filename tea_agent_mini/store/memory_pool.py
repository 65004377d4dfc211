"""The few memories a turn's selection looks at, read through indexes.

Selection (``memory/select.py``) ranks memories by relevance × importance × recency × priority.
A memory that is not relevant to the turn can still be picked for a tier floor or, without a
query, by that product alone; within one priority and importance, a newer memory never scores
below an older one. So the newest few of each (priority, importance) group, the newest CRITICAL
ones and the relevant ones hold every memory selection can pick, and the store size stops
mattering: the reads below cost the same for 50 memories or 50,000.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .database import Database
from .memory_records import SELECT_MEMORIES, Memory, memory_from_row

__all__ = ["by_ids", "selection_pool"]

_ACTIVE = "m.deleted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)"
# Unary + keeps SQLite from walking an index of these columns instead of looking the ids up.
_BY_ID_ACTIVE = "+m.deleted_at IS NULL AND (+m.expires_at IS NULL OR +m.expires_at > ?)"
_CHUNK = 500


def by_ids(db: Database, ids: Iterable[int], now: float) -> dict[int, Memory]:
    """The active memories among ``ids``, by id."""
    wanted = sorted({int(i) for i in ids})
    found: dict[int, Memory] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = db.query(
            f"{SELECT_MEMORIES} WHERE m.id IN ({marks}) AND {_BY_ID_ACTIVE}", [*chunk, now]
        )
        found.update((row[0], memory_from_row(row)) for row in rows)
    return found


def selection_pool(
    db: Database,
    ids: Iterable[int],
    now: float,
    *,
    critical: int,
    per_group: int,
    groups: Sequence[tuple[int, int]],
) -> list[Memory]:
    """The active memories among ``ids``, the newest ``critical`` CRITICAL ones, and the newest
    ``per_group`` of each (priority, importance) in ``groups``; each once, in id order.

    One statement; each part is a short walk down the ``memories_ranked`` index.
    """
    newest = (
        f"SELECT * FROM ({SELECT_MEMORIES} WHERE {_ACTIVE} AND m.priority = ?{{importance}} "
        "ORDER BY m.updated_at DESC, m.id DESC LIMIT ?)"
    )
    parts = [newest.format(importance="")]
    params: list[Any] = [now, 0, max(0, critical)]
    for priority, importance in groups:
        parts.append(newest.format(importance=" AND m.importance = ?"))
        params += [now, int(priority), int(importance), max(0, per_group)]
    pool = {row[0]: memory_from_row(row) for row in db.query(" UNION ALL ".join(parts), params)}
    pool.update(by_ids(db, (i for i in ids if i not in pool), now))
    return [pool[memory_id] for memory_id in sorted(pool)]

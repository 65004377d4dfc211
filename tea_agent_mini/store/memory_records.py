"""The records of the memory store: `Memory`, `MemoryStats`, row decoding, and the snapshot of
live memories that :class:`~.memories.MemoryRepository` keeps between calls."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .database import Row

__all__ = ["SELECT_MEMORIES", "Memory", "MemoryStats", "Snapshot", "memory_from_row"]

COLUMNS = (
    "id, content, priority, importance, category, tags, content_hash, embedding, "
    "embedding_model, embedding_dim, expires_at, pinned, created_at, updated_at, "
    "last_accessed_at, source_topic, deleted_at"
)
SELECT_MEMORIES = (
    "SELECT " + ", ".join(f"m.{name}" for name in COLUMNS.split(", ")) + " FROM memories m"
)


# Not frozen: selection builds thousands per turn and frozen dataclasses construct ~4x slower.
# Treat instances as read-only; :meth:`MemoryRepository.active` hands the same ones to every caller.
@dataclass(slots=True)
class Memory:
    """One stored memory. ``embedding`` is the packed float32 BLOB (see ``vectors.unpack``)."""

    id: int
    content: str
    priority: int = 2
    importance: int = 3
    category: str = "general"
    tags: tuple[str, ...] = ()
    content_hash: str = ""
    embedding: bytes | None = field(default=None, repr=False, compare=False)
    embedding_model: str = ""
    embedding_dim: int = 0
    expires_at: float | None = None
    pinned: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    last_accessed_at: float | None = None
    source_topic: str | None = None
    deleted_at: float | None = None


@dataclass(frozen=True)
class MemoryStats:
    active: int
    by_priority: dict[int, int]
    by_category: dict[str, int]
    pinned: int
    expired: int
    deleted: int
    embedded: dict[str, int]  # model name -> how many active memories carry its vectors
    keyword_backend: str  # "fts5", "tsvector" (PostgreSQL) or "like"
    embedder: str = ""  # the embedder in use, filled in by the memory manager


class Snapshot:
    """The live (not soft-deleted) memories as of ``seen``, the latest ``changed_at`` read, and
    the active subset at a given time (cached while no expiry falls in between)."""

    def __init__(self, data_version: int) -> None:
        self.data_version = data_version
        self.writes = -1
        self.seen = -math.inf
        self._live: dict[int, Memory] = {}
        self._state: tuple[list[Memory], tuple[float, float]] = ([], (math.inf, -math.inf))

    def apply(self, rows: Iterable[Row]) -> None:
        """Fold in rows of ``SELECT <COLUMNS>, changed_at``; soft-deleted ones leave."""
        changed = False
        for row in rows:
            values = tuple(row)
            memory = memory_from_row(values[:-1])
            if memory.deleted_at is None:
                self._live[memory.id] = memory
            else:
                self._live.pop(memory.id, None)
            self.seen = max(self.seen, values[-1])
            changed = True
        if changed:
            self._state = ([], (math.inf, -math.inf))

    def at(self, now: float) -> list[Memory]:
        """The active memories at ``now``; the same list while the subset stays the same."""
        active, (start, until) = self._state
        if start <= now < until:
            return active
        live = self._live.values()
        active = [m for m in live if m.expires_at is None or m.expires_at > now]
        past = [m.expires_at for m in live if m.expires_at is not None and m.expires_at <= now]
        future = [m.expires_at for m in active if m.expires_at is not None]
        self._state = (active, (max(past, default=-math.inf), min(future, default=math.inf)))
        return active


def _decode_tags(raw: str | None) -> tuple[str, ...]:
    if not raw or raw == "[]":
        return ()
    try:
        return tuple(str(tag) for tag in json.loads(raw))
    except ValueError:
        return ()


def memory_from_row(row: Row | Sequence[Any]) -> Memory:
    """A Memory from a row of ``SELECT_MEMORIES`` (values in :data:`COLUMNS` order)."""
    # positional: by name costs a dict lookup per field on hot paths
    (mid, content, priority, importance, category, tags, digest, blob, model, dim, expires_at,
     pinned, created_at, updated_at, accessed_at, topic, deleted_at) = tuple(row)  # fmt: skip
    return Memory(
        mid, content, priority, importance, category, _decode_tags(tags), digest, blob, model,
        dim, expires_at, bool(pinned), created_at, updated_at, accessed_at, topic, deleted_at,
    )  # fmt: skip

"""Long-term memories: the rows, their keyword index (FTS5, or LIKE without it) and vectors.

A memory is *active* while it is not soft-deleted and not expired. Times are epoch seconds; the
caller may pass ``now`` (the memory manager injects its clock) or let the database stamp them.
``updated_at`` moves only when what a memory says changes (content, priority, importance ...),
never for access stamps or re-embedding, because decay and recency are measured from it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..terms import content_hash
from ..vectors import pack, sign_code
from .database import Database, like_pattern
from .memory_codes import MemoryCodes, code_of
from .memory_keywords import KeywordIndex
from .memory_pool import by_ids, selection_pool
from .memory_records import SELECT_MEMORIES as _SELECT
from .memory_records import Memory, MemoryStats, Snapshot, memory_from_row

if TYPE_CHECKING:
    from .memory_pgvector import PgVectorPass

__all__ = ["Memory", "MemoryRepository", "MemoryStats"]

log = logging.getLogger(__name__)

_EDITABLE = frozenset(
    {"content", "priority", "importance", "category", "tags", "expires_at", "pinned"}
    | {"source_topic"}
)
_ACTIVE = "m.deleted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)"
_SELECT_CHANGED = _SELECT.replace(" FROM ", ", m.changed_at FROM ", 1)


class MemoryRepository:
    """Add, change, find and soft-delete memories.

    ``use_fts=False`` forces the LIKE fallback for keyword search; otherwise FTS5 is used when
    this SQLite has it (see :class:`KeywordIndex`).
    """

    def __init__(self, db: Database, *, use_fts: bool = True) -> None:
        self._db = db
        self.keywords = KeywordIndex(db, use_fts=use_fts)
        self._writes = 0  # bumped after every committed write that :meth:`active` must see
        self._snapshot: Snapshot | None = None
        self._snapshot_lock = threading.Lock()
        self.codes = MemoryCodes(db, lambda: self._writes)
        self._pgvector: PgVectorPass | None = None
        if getattr(db, "has_pgvector", False):
            from .memory_pgvector import PgVectorPass

            self._pgvector = PgVectorPass(db)  # type: ignore[arg-type]

    # -- writing ---------------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        priority: int = 2,
        importance: int = 3,
        category: str = "general",
        tags: Iterable[str] = (),
        expires_at: float | None = None,
        pinned: bool = False,
        source_topic: str | None = None,
        embedding: Sequence[float] | None = None,
        embedding_model: str = "",
        now: float | None = None,
    ) -> Memory:
        """Insert a memory and index it; ``embedding`` should already be normalised.

        Raises:
            StoreError: empty content, or priority/importance out of range.
        """
        if not content.strip():
            raise StoreError("a memory needs some content")
        stamp = self._stamp(now)
        blob = pack(embedding) if embedding is not None else None
        dim = len(embedding) if embedding is not None else 0
        tag_list = list(tags)
        with self._writing() as (tx, changed):
            cursor = tx.execute(
                "INSERT INTO memories (content, priority, importance, category, tags, "
                "content_hash, embedding, embedding_code, embedding_model, embedding_dim, "
                "expires_at, pinned, created_at, updated_at, source_topic, changed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (content, int(priority), int(importance), category, _tags_json(tag_list),
                 content_hash(content), blob, code_of(blob), embedding_model if blob else "",
                 dim, expires_at, int(bool(pinned)), stamp, stamp, source_topic, changed),
            )  # fmt: skip
            memory_id = int(cursor.lastrowid or 0)
            self.keywords.add(memory_id, content)
        memory = self.get(memory_id)
        assert memory is not None
        return memory

    def update(
        self, memory_id: int, *, now: float | None = None, bump: bool = True, **changes: Any
    ) -> Memory | None:
        """Change some of content, priority, importance, category, tags, expires_at, pinned,
        source_topic. New content drops the stored vector (it no longer matches).

        ``bump=False`` leaves ``updated_at`` alone, for changes that should not count as the
        memory being restated (decay, reflection). Returns None when there is no such memory.

        Raises:
            StoreError: an unknown field or a value the table refuses.
        """
        unknown = set(changes) - _EDITABLE
        if unknown:
            raise StoreError(f"cannot update memory field(s) {', '.join(sorted(unknown))}")
        columns: dict[str, Any] = {}
        for name, value in changes.items():
            if name == "tags":
                value = _tags_json(list(value))
            elif name == "pinned":
                value = int(bool(value))
            elif name in ("priority", "importance"):
                value = int(value)
            columns[name] = value
        if "content" in columns:
            if not str(columns["content"]).strip():
                raise StoreError("a memory needs some content")
            columns.update(content_hash=content_hash(columns["content"]), embedding=None)
            columns.update(embedding_code=None)
            columns.update(embedding_model="", embedding_dim=0)
        if bump:
            columns["updated_at"] = self._stamp(now)
        if columns:
            assignments = ", ".join(f"{name} = ?" for name in columns)
            with self._writing() as (tx, changed):
                cursor = tx.execute(
                    f"UPDATE memories SET {assignments}, changed_at = ? "
                    "WHERE id = ? AND deleted_at IS NULL",
                    [*columns.values(), changed, int(memory_id)],
                )
                if cursor.rowcount and "content" in columns:
                    self.keywords.remove([memory_id])
                    self.keywords.add(memory_id, columns["content"])
        return self.get(memory_id)

    def set_embedding(self, memory_id: int, vector: Sequence[float], model: str) -> bool:
        """Store a (normalised) vector and the model that made it; ``updated_at`` is kept."""
        blob = pack(vector)
        with self._writing() as (tx, changed):
            cursor = tx.execute(
                "UPDATE memories SET embedding = ?, embedding_code = ?, embedding_model = ?, "
                "embedding_dim = ?, changed_at = ? WHERE id = ?",
                (blob, code_of(blob), model, len(vector), changed, int(memory_id)),
            )
        return cursor.rowcount > 0

    def touch_accessed(self, memory_ids: Iterable[int], when: float | None = None) -> int:
        """Record that these memories were just used (selected for a turn, found by a search).

        Does not invalidate :meth:`active`: its ``last_accessed_at`` values may lag behind.
        """
        ids = [int(i) for i in memory_ids]
        if not ids:
            return 0
        stamp = self._stamp(when)
        marks = ", ".join("?" * len(ids))
        sql = f"UPDATE memories SET last_accessed_at = ? WHERE id IN ({marks})"
        return self._db.execute(sql, [stamp, *ids]).rowcount

    def soft_delete(self, memory_ids: int | Iterable[int], now: float | None = None) -> int:
        """Hide memories from every active query; return how many were live."""
        ids = [int(memory_ids)] if isinstance(memory_ids, int) else [int(i) for i in memory_ids]
        if not ids:
            return 0
        marks = ", ".join("?" * len(ids))
        stamp = self._stamp(now)
        with self._writing() as (tx, changed):
            count = tx.execute(
                f"UPDATE memories SET deleted_at = ?, changed_at = ? "
                f"WHERE id IN ({marks}) AND deleted_at IS NULL",
                [stamp, changed, *ids],
            ).rowcount
            self.keywords.remove(ids)
        return count

    # -- reading ---------------------------------------------------------------------------

    def get(self, memory_id: int, *, include_deleted: bool = False) -> Memory | None:
        sql = _SELECT + " WHERE m.id = ?"
        if not include_deleted:
            sql += " AND m.deleted_at IS NULL"
        row = self._db.query_one(sql, (int(memory_id),))
        return memory_from_row(row) if row else None

    def find_by_hash(self, digest: str, now: float | None = None) -> Memory | None:
        """The newest active memory whose content hashes to ``digest``."""
        row = self._db.query_one(
            f"{_SELECT} WHERE m.content_hash = ? AND {_ACTIVE} ORDER BY m.updated_at DESC LIMIT 1",
            (digest, _now(now)),
        )
        return memory_from_row(row) if row else None

    def matching(
        self,
        *,
        limit: int | None = 100,
        offset: int = 0,
        category: str | None = None,
        priority: int | None = None,
        pinned: bool | None = None,
        tag: str | None = None,
        include_inactive: bool = False,
        include_expired: bool = False,
        now: float | None = None,
    ) -> list[Memory]:
        """Memories, strongest priority first, then most recently updated.

        Active ones only, unless ``include_expired`` (expired ones too) or ``include_inactive``
        (soft-deleted and expired ones too). ``limit=None`` returns every match.
        """
        where: list[str] = [] if include_inactive else [_ACTIVE]
        params: list[Any] = [] if include_inactive else [_now(now)]
        if include_expired and not include_inactive:
            where, params = ["m.deleted_at IS NULL"], []
        if category is not None:
            where.append("m.category = ?")
            params.append(category)
        if priority is not None:
            where.append("m.priority = ?")
            params.append(int(priority))
        if pinned is not None:
            where.append("m.pinned = ?")
            params.append(int(bool(pinned)))
        if tag:
            where.append("m.tags LIKE ? ESCAPE '\\'")
            params.append(like_pattern(json.dumps(tag.strip().lower(), ensure_ascii=False)))
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY m.priority ASC, m.updated_at DESC, m.id DESC"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [max(0, int(limit)), max(0, int(offset))]
        return [memory_from_row(row) for row in self._db.query(sql, params)]

    def active(self, now: float | None = None) -> list[Memory]:
        """Every active memory, in id order, from a snapshot kept between calls.

        The snapshot catches up by reading only the rows changed since (a commit by another
        connection to the file makes it read everything again). While nothing changes and no
        expiry passes, the same list comes back. It and its memories are shared with other
        callers: do not modify them. ``last_accessed_at`` in it may lag behind.
        """
        stamp = _now(now)
        with self._snapshot_lock:
            version = self._db.data_version("memories")
            snapshot = self._snapshot
            if snapshot is None or snapshot.data_version != version:
                snapshot = Snapshot(version)
                writes = self._writes
                snapshot.apply(self._db.query(f"{_SELECT_CHANGED} WHERE m.deleted_at IS NULL"))
                snapshot.writes, self._snapshot = writes, snapshot
            elif snapshot.writes != self._writes:
                writes = self._writes  # read before the query: a later write is seen next time
                rows = self._db.query(f"{_SELECT_CHANGED} WHERE m.changed_at > ?", (snapshot.seen,))
                snapshot.apply(rows)
                snapshot.writes = writes
            return snapshot.at(stamp)

    def first_pass(self, query: Sequence[float], model: str, m: int, now: float) -> list[int]:
        """Up to ``m`` ids of active ``model`` memories likely closest to ``query`` (normalised):
        ranked by pgvector where the database has it, else by the sign codes in memory."""
        if self._pgvector is not None and query:
            return self._pgvector.nearest(query, model, m, now)
        return self.codes.current(model).nearest(sign_code(pack(query)), m)

    def warm(self, model: str) -> None:
        """Load what the first search reads (the codes; nothing when pgvector ranks)."""
        if self._pgvector is None:
            self.codes.current(model)

    def needing_embedding(self, model: str, limit: int, now: float | None = None) -> list[Memory]:
        """Active memories with no vector (first), or one made by a model other than ``model``.

        The ids come from the ``memories_codes`` index alone (a memory without a vector has the
        model ''), so looking costs little even when every memory needs a new vector.
        """
        rows = self._db.query(
            f"{_SELECT} WHERE m.id IN (SELECT id FROM memories INDEXED BY memories_codes "
            "WHERE embedding_model != ? "
            "AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?) "
            "ORDER BY embedding_model != '', id LIMIT ?) ORDER BY m.embedding IS NOT NULL, m.id",
            (model, _now(now), max(0, int(limit))),
        )
        return [memory_from_row(row) for row in rows]

    def by_ids(self, ids: Iterable[int], now: float | None = None) -> dict[int, Memory]:
        """The active memories among ``ids``, by id."""
        return by_ids(self._db, ids, _now(now))

    def selection_pool(
        self,
        ids: Iterable[int],
        now: float | None = None,
        *,
        critical: int,
        per_group: int,
        groups: Sequence[tuple[int, int]],
    ) -> list[Memory]:
        """What per-turn selection chooses from (see ``memory_pool.selection_pool``)."""
        return selection_pool(
            self._db, ids, _now(now), critical=critical, per_group=per_group, groups=groups
        )

    def version(self) -> tuple[int, int]:
        """Changes whenever a write commits, here or through another connection to the file."""
        return (self._db.data_version("memories"), self._writes)

    def keyword_scores(
        self, query: str, limit: int = 100, now: float | None = None
    ) -> dict[int, float]:
        """Memory id -> share of the query's keyword terms found in it (see ``KeywordIndex``).

        May include memories that expired moments ago; intersect with :meth:`active`.
        """
        return self.keywords.scores(query, limit, _now(now))

    def search_keyword(
        self, query: str, limit: int = 20, now: float | None = None
    ) -> list[tuple[Memory, float]]:
        """Active memories sharing keyword terms with ``query`` with their score, best first.

        The score is the share of the query's terms (words, CJK bigrams) found in the memory,
        0..1, the same with FTS5 or LIKE; FTS5 only makes finding the candidates fast.
        """
        stamp = _now(now)
        scores = self.keywords.scores(query, max(limit, 0) * 2, stamp)
        if not scores:
            return []
        marks = ", ".join("?" * len(scores))
        rows = self._db.query(f"{_SELECT} WHERE m.id IN ({marks}) AND {_ACTIVE}", [*scores, stamp])
        found = {row["id"]: memory_from_row(row) for row in rows}
        hits = [(found[i], score) for i, score in scores.items() if i in found]
        return hits[: max(limit, 0)]

    @property
    def uses_fts(self) -> bool:
        """Whether keyword search runs on an index (FTS5, tsvector) rather than LIKE."""
        return self.keywords.uses_fts

    def stats(self, now: float | None = None) -> MemoryStats:
        stamp = _now(now)
        live = "deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
        by_priority = self._counts("priority", live, stamp)
        row = self._db.query_one(  # COUNT(CASE ...): PostgreSQL cannot SUM a condition
            "SELECT COUNT(CASE WHEN deleted_at IS NOT NULL THEN 1 END), "
            "COUNT(CASE WHEN deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ? "
            f"THEN 1 END), COUNT(CASE WHEN {live} AND pinned = 1 THEN 1 END) FROM memories",
            (stamp, stamp),
        )
        deleted, expired, pinned = (int(value or 0) for value in row) if row else (0, 0, 0)
        return MemoryStats(
            active=sum(by_priority.values()),
            by_priority={int(k): v for k, v in by_priority.items()},
            by_category={str(k): v for k, v in self._counts("category", live, stamp).items()},
            pinned=pinned,
            expired=expired,
            deleted=deleted,
            embedded=self._counts("embedding_model", live + " AND embedding IS NOT NULL", stamp),
            keyword_backend=self.keywords.backend,
        )

    # -- helpers ---------------------------------------------------------------------------

    def _counts(self, column: str, where: str, now: float) -> dict[Any, int]:
        rows = self._db.query(
            f"SELECT {column}, count(*) FROM memories WHERE {where} GROUP BY {column}", (now,)
        )
        return {row[0]: int(row[1]) for row in rows}

    def _stamp(self, now: float | None) -> float:
        return self._db.now() if now is None else float(now)

    @contextmanager
    def _writing(self) -> Iterator[tuple[Database, float]]:
        """A write transaction and its change stamp, taken under the database lock so stamps
        follow commit order; :meth:`active` hears of the write once it has committed."""
        self.keywords.prepare()
        with self._db.transaction() as tx:
            yield tx, self._db.now()
        self._writes += 1


def _now(now: float | None) -> float:
    return time.time() if now is None else float(now)


def _tags_json(tags: list[str]) -> str:
    return json.dumps([str(tag) for tag in tags], ensure_ascii=False)

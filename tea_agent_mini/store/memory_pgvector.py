"""The first pass of vector search inside PostgreSQL, when the database has pgvector.

Without it (and on SQLite) the first pass ranks the sign codes every process keeps in memory
(``memory_codes.py``). With the ``vector`` extension installed in the store's database (``CREATE
EXTENSION vector``, by whoever may; detected at start) the memories get an ``embedding_vec``
column and the database ranks instead: an HNSW index per embedding model and dimension, built
in the background the first time that model is searched (a sequential scan in C meanwhile). The
candidates are scored exactly from the stored ``bytea`` as before, so results match SQLite's.

``embedding`` stays the one truth: a trigger clears ``embedding_vec`` whenever ``embedding`` is
written (by any instance, or ``migrate``), and each search first fills the vectors left empty
(an indexed look at nothing, usually). So no write path has to know about the column.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import StoreError
from ..vectors import unpack

if TYPE_CHECKING:
    from .postgres import PostgresDatabase

__all__ = ["PgVectorPass"]

log = logging.getLogger(__name__)

COLUMN = "embedding_vec"
FILL_BATCH = 500
FILL_ROUNDS = 4  # batches filled before a search; the rest is filled by the next searches
MIN_EF_SEARCH = 40  # pgvector's default candidate list; raised for a larger first pass

_SETUP = (
    f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {COLUMN} vector",
    """CREATE OR REPLACE FUNCTION tea_vector_stale() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.embedding_vec := NULL;
        RETURN NEW;
    END $$""",
    "DROP TRIGGER IF EXISTS memories_vector_stale ON memories",
    "CREATE TRIGGER memories_vector_stale BEFORE INSERT OR UPDATE OF embedding ON memories "
    "FOR EACH ROW EXECUTE FUNCTION tea_vector_stale()",
    f"CREATE INDEX IF NOT EXISTS memories_vec_missing ON memories (id) "
    f"WHERE embedding IS NOT NULL AND {COLUMN} IS NULL",
)


class PgVectorPass:
    """``nearest(query, model, m, now)``: the ids of up to ``m`` active memories of ``model``
    closest to ``query`` (normalised), ranked by pgvector. Thread-safe."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._ready = False
        self._indexes: set[tuple[str, int]] = set()  # built, or being built

    def nearest(self, query: Sequence[float], model: str, m: int, now: float) -> list[int]:
        dim = len(query)
        self._prepare()
        self._fill()
        self._index(model, dim)
        rows = self._db.query_tuned(
            [f"hnsw.ef_search={max(MIN_EF_SEARCH, min(int(m), 1000))}"],
            "SELECT id FROM memories WHERE embedding_model = ? AND embedding_dim = ? "
            f"AND {COLUMN} IS NOT NULL AND deleted_at IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?) "
            f"ORDER BY {COLUMN}::vector({dim}) <=> ?::vector({dim}) LIMIT ?",
            (model, dim, now, _literal(query), int(m)),
        )
        return [int(row[0]) for row in rows]

    def _prepare(self) -> None:
        """The column, its trigger and the index of what is to be filled, once a process."""
        with self._lock:
            if self._ready:
                return
            found = self._db.query_one(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = 'memories' AND column_name = ?",
                (COLUMN,),
            )
            if not (found and found[0]):
                with self._db.transaction() as tx:  # one instance at a time (advisory lock)
                    for statement in _SETUP:
                        tx.execute(statement)
                log.info("memories: vectors ranked by pgvector in %s", self._db.location)
            self._ready = True

    def _fill(self) -> None:
        """Give ``embedding_vec`` to the vectors written without it (a few batches)."""
        for _ in range(FILL_ROUNDS):
            rows = self._db.query(
                f"SELECT id, embedding FROM memories WHERE embedding IS NOT NULL "
                f"AND {COLUMN} IS NULL ORDER BY id LIMIT ?",
                (FILL_BATCH,),
            )
            if not rows:
                return
            ids, vectors, digests = [], [], []
            for memory_id, blob in rows:
                data = bytes(blob)
                if len(data) % 4:
                    continue  # damaged: scored by nobody, as on SQLite
                ids.append(int(memory_id))
                vectors.append(_literal(unpack(data)))
                digests.append(hashlib.md5(data).hexdigest())
            if not ids:
                return
            # only if the vector is still the one read: a write meanwhile cleared it again
            self._db.execute(
                f"UPDATE memories SET {COLUMN} = v.vec::vector FROM (SELECT "
                "unnest(?::bigint[]) AS id, unnest(?::text[]) AS vec, unnest(?::text[]) AS digest"
                ") AS v WHERE memories.id = v.id AND md5(memories.embedding) = v.digest",
                (ids, vectors, digests),
            )
            if len(rows) < FILL_BATCH:
                return

    def _index(self, model: str, dim: int) -> None:
        """Start building the HNSW index of ``model``'s vectors unless it exists."""
        with self._lock:
            if (model, dim) in self._indexes:
                return
            self._indexes.add((model, dim))
        name = f"memories_vec_{dim}_{hashlib.md5(model.encode()).hexdigest()[:10]}"
        if self._db.query_one("SELECT 1 FROM pg_indexes WHERE indexname = ?", (name,)):
            return
        quoted = "'" + model.replace("'", "''") + "'"
        sql = (
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memories USING hnsw "
            f"(({COLUMN}::vector({dim})) vector_cosine_ops) "
            f"WHERE embedding_model = {quoted} AND embedding_dim = {dim}"
        )
        threading.Thread(target=self._build, args=(name, sql), daemon=True).start()

    def _build(self, name: str, sql: str) -> None:
        try:
            self._db.execute_native(sql)
            log.info("memories: built the vector index %s", name)
        except StoreError as exc:  # searches go on with a sequential scan
            log.warning("memories: could not build the vector index %s: %s", name, exc)
            try:  # a failed concurrent build leaves an invalid index behind
                self._db.execute_native(f"DROP INDEX IF EXISTS {name}")
            except StoreError:
                pass


def _literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"

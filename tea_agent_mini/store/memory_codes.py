"""Sign codes of the memories' vectors, for a first pass over every memory that stays cheap.

Scoring 50,000 float vectors in pure Python takes hundreds of milliseconds; comparing their sign
codes (one bit a component, see ``vectors.sign_code``) with XOR and ``int.bit_count`` takes a few,
and the few hundred closest are then scored exactly. The codes are stored with the vectors
(``embedding_code``, migration 6) and read from a covering index, so a fresh process loads them
in tens of milliseconds instead of rebuilding anything; afterwards the in-memory set catches up
by reading only the rows changed since (``changed_at``), like the snapshot of ``active()``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter

from ..vectors import nearest_codes, sign_code
from .database import Database

__all__ = ["CodeSet", "MemoryCodes", "code_of"]

_little = partial(int.from_bytes, byteorder="little")
# Unary + keeps SQLite from walking an index of these columns instead of looking the ids up.
_BY_ID_ACTIVE = "+deleted_at IS NULL AND (+expires_at IS NULL OR +expires_at > ?)"


@dataclass
class CodeSet:
    """The codes of the live memories whose vector was made by ``model`` (expired ones may be
    among them: callers keep only active memories when they read the candidates' rows)."""

    model: str
    ids: list[int] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    slots: dict[int, int] = field(default_factory=dict)
    data_version: int = -1
    writes: int = -1
    seen: float = -math.inf  # the latest changed_at read

    def put(self, memory_id: int, code: bytes) -> None:
        value = int.from_bytes(code, "little")
        slot = self.slots.get(memory_id)
        if slot is None:
            self.slots[memory_id] = len(self.ids)
            self.ids.append(memory_id)
            self.codes.append(value)
        else:
            self.codes[slot] = value

    def drop(self, memory_id: int) -> None:
        slot = self.slots.pop(memory_id, None)
        if slot is None:
            return
        last = len(self.ids) - 1
        for column in (self.ids, self.codes):
            column[slot] = column[last]
            column.pop()
        if slot != last:
            self.slots[self.ids[slot]] = slot

    def nearest(self, code: bytes, m: int) -> list[int]:
        """The ids of the ``m`` memories whose codes are closest to ``code``."""
        query = int.from_bytes(code, "little")
        return [self.ids[slot] for slot in nearest_codes(query, self.codes, m)]


class MemoryCodes:
    """Keeps one :class:`CodeSet` (of the model last asked for) in step with the store.

    ``writes`` returns the repository's count of committed writes on this connection; a commit
    by another connection shows in ``Database.data_version`` and makes the set load again.
    """

    def __init__(self, db: Database, writes: Callable[[], int]) -> None:
        self._db = db
        self._writes = writes
        self._lock = threading.Lock()
        self._set: CodeSet | None = None

    def current(self, model: str) -> CodeSet:
        """The codes of ``model``'s vectors as the store holds them now (shared: read only)."""
        with self._lock:
            version = self._db.data_version("memories")
            codes = self._set
            if codes is None or codes.model != model or codes.data_version != version:
                codes = CodeSet(model, data_version=version)
                writes = self._writes()
                self._load(codes)
                codes.writes, self._set = writes, codes
            elif codes.writes != self._writes():
                writes = self._writes()  # read before the query: a later write is seen next time
                self._catch_up(codes)
                codes.writes = writes
            return codes

    def vectors(self, ids: Iterable[int], model: str, now: float) -> list[tuple[int, bytes]]:
        """``(id, vector BLOB)`` of the active memories among ``ids`` with a ``model`` vector."""
        wanted = [int(i) for i in ids]
        found: list[tuple[int, bytes]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._db.query(
                f"SELECT id, embedding FROM memories WHERE id IN ({marks}) AND {_BY_ID_ACTIVE} "
                "AND +embedding_model = ? AND embedding IS NOT NULL",
                [*chunk, now, model],
            )
            found.extend((int(row[0]), bytes(row[1])) for row in rows)
        return found

    def reset(self) -> None:
        with self._lock:
            self._set = None

    def _load(self, codes: CodeSet) -> None:
        # the newest stamp first: a row changed while the codes are read is caught up later
        row = self._db.query_one("SELECT MAX(changed_at) FROM memories")
        codes.seen = float(row[0]) if row and row[0] is not None else -math.inf
        # answered from the memories_codes index alone, never from the rows and their vectors
        rows = self._db.query(
            "SELECT id, embedding_code FROM memories INDEXED BY memories_codes "
            "WHERE embedding_model = ? AND deleted_at IS NULL AND embedding_code IS NOT NULL",
            (codes.model,),
        )
        # built in bulk (C loops): a start pays for this once per 50,000 memories
        codes.ids = list(map(itemgetter(0), rows))
        codes.codes = list(map(_little, map(itemgetter(1), rows)))
        codes.slots = dict(zip(codes.ids, range(len(rows)), strict=True))

    def _catch_up(self, codes: CodeSet) -> None:
        rows = self._db.query(
            "SELECT id, deleted_at, embedding_model, embedding_code, changed_at FROM memories "
            "WHERE changed_at > ?",
            (codes.seen,),
        )
        for memory_id, deleted_at, model, code, changed in rows:
            if deleted_at is None and model == codes.model and code is not None:
                codes.put(memory_id, code)
            else:
                codes.drop(memory_id)
            codes.seen = max(codes.seen, changed)


def code_of(blob: bytes | None) -> bytes | None:
    """The code stored with a vector BLOB (None without a vector, or for a damaged one)."""
    try:
        return sign_code(blob) if blob else None
    except ValueError:
        return None

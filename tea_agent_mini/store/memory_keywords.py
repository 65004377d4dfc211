"""Keyword search over memories: an FTS5 index of precomputed terms, or LIKE without FTS5.

The index holds each live memory's keyword terms (words and CJK bigrams, see
``terms.py``) under ``rowid = memories.id``; SQLite's own tokenizers cut Chinese text into
one token per run, which would make most Chinese searches miss. Scores are the share of the
query's terms a memory contains, computed the same way on both paths. On FTS5 the candidates
are the best bm25 matches of the query's rarer terms (see ``RANK_BUDGET``), so a query full of
words most memories contain costs a few milliseconds, not one per thousand memories.
On PostgreSQL the same table holds a ``tsvector`` of the terms (``dialect.py``), matched by a
``tsquery`` of them and ranked by ``ts_rank``.
"""

from __future__ import annotations

import logging

from ..errors import StoreError
from ..terms import keyword_terms
from .database import Database, like_pattern

__all__ = ["FTS_TABLE", "KeywordIndex"]

log = logging.getLogger(__name__)

FTS_TABLE = "memories_fts"
MAX_QUERY_TERMS = 32
# Ranking by bm25 costs about a microsecond a match, so the ranked query keeps the rarest terms
# while their matches stay within this many; the common ones add little to bm25 (idf near 0)
# and still count in the share of every memory found. Above it, the newest matches are taken.
RANK_BUDGET = 6000
MAX_TERM_BYTES = 2046
_ACTIVE = "deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"


def _fts5_term(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _tsquery_term(term: str) -> str:
    """``term`` as one lexeme of a tsquery literal (no parsing, no stemming)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def _indexed_terms(text: str) -> set[str]:
    """The keyword terms of ``text`` an index holds: a "word" longer than PostgreSQL's lexemes
    may be (2046 bytes) is no keyword anyone searches for, so neither backend keeps it."""
    return {term for term in keyword_terms(text) if len(term.encode()) <= MAX_TERM_BYTES}


def _terms_text(content: str) -> str:
    return " ".join(sorted(_indexed_terms(content)))


class KeywordIndex:
    """Keeps the FTS5 table in step with the memories and scores keyword matches.

    ``use_fts=False`` forces the LIKE path. Otherwise FTS5 is used when the table exists and
    this SQLite can read it; that is checked once, on first use, and a table out of step with
    the memories (e.g. written by an SQLite without FTS5 meanwhile) is rebuilt.
    """

    def __init__(self, db: Database, *, use_fts: bool = True) -> None:
        self._db = db
        self._fts: bool | None = None if use_fts else False

    @property
    def uses_fts(self) -> bool:
        if self._fts is None:
            self._fts = self._detect()
        return self._fts

    @property
    def backend(self) -> str:
        """``fts5``, ``tsvector`` (the index on PostgreSQL) or ``like``."""
        if not self.uses_fts:
            return "like"
        return "tsvector" if self._db.dialect == "postgresql" else "fts5"

    def prepare(self) -> None:
        """Run detection now; call it before opening a write transaction, because detection
        counts rows and must not see that transaction's uncommitted ones."""
        _ = self.uses_fts

    def add(self, memory_id: int, content: str) -> None:
        if self.uses_fts:
            self._db.execute(
                f"INSERT INTO {FTS_TABLE} (rowid, terms) VALUES (?, ?)",
                (int(memory_id), _terms_text(content)),
            )

    def remove(self, memory_ids: list[int]) -> None:
        if self.uses_fts and memory_ids:
            marks = ", ".join("?" * len(memory_ids))
            self._db.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN ({marks})", memory_ids)

    def scores(self, query: str, limit: int, now: float) -> dict[int, float]:
        """Memory id -> share of the query's terms it contains (0..1], best first.

        On the FTS path memories that expired but are not yet retired may appear; callers
        intersect with the active memories they hold.
        """
        terms = sorted(_indexed_terms(query))[:MAX_QUERY_TERMS]
        if not terms or limit <= 0:
            return {}
        wanted = set(terms)
        pool = max(limit * 2, 50)
        if self.uses_fts:
            found = self._fts_candidates(terms, pool)
        else:
            # LIKE ignores case for ASCII letters only; capitals of other scripts miss here
            # (FTS5, the normal path, indexes case-folded terms)
            clauses = " OR ".join("content LIKE ? ESCAPE '\\'" for _ in terms)
            rows = self._db.query(
                f"SELECT id, content FROM memories WHERE {_ACTIVE} AND ({clauses}) "
                "ORDER BY updated_at DESC LIMIT ?",
                [now, *(like_pattern(term) for term in terms), pool * 4],
            )
            found = [(row[0], keyword_terms(row[1])) for row in rows]
        ranked = [
            (len(wanted & have) / len(wanted), -n, mid) for n, (mid, have) in enumerate(found)
        ]
        ranked.sort(reverse=True)
        return {int(mid): share for share, _, mid in ranked[:limit] if share > 0}

    def _fts_candidates(self, terms: list[str], pool: int) -> list[tuple[int, set[str]]]:
        """Up to ``pool`` (rowid, terms) matching some of ``terms``, best bm25 first."""
        # the one statement that differs by backend: FTS5's MATCH, PostgreSQL's tsquery (its
        # lexemes are the terms as stored, see dialect.py); bm25 or ts_rank orders the matches
        postgres = self._db.dialect == "postgresql"
        match = "lexemes @@ ?::tsquery" if postgres else f"{FTS_TABLE} MATCH ?"
        quote = _tsquery_term if postgres else _fts5_term
        matches = []
        for term in terms:  # capped counts: what ranking each term would cost
            row = self._db.query_one(
                f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {match} LIMIT ?)",
                (quote(term), RANK_BUDGET + 1),
            )
            if row and row[0]:
                matches.append((int(row[0]), term))
        if not matches:
            return []
        matches.sort()
        chosen: list[str] = []
        total = 0
        for count, term in matches:
            if chosen and total + count > RANK_BUDGET:
                break
            chosen.append(term)
            total += count
        query = (" | " if postgres else " OR ").join(quote(term) for term in chosen)
        params: tuple[object, ...] = (query, pool)
        order = "rowid DESC"
        if total <= RANK_BUDGET:
            order = "ts_rank(lexemes, ?::tsquery) DESC" if postgres else "rank"
            params = (query, query, pool) if postgres else params
        rows = self._db.query(
            f"SELECT rowid, terms FROM {FTS_TABLE} WHERE {match} ORDER BY {order} LIMIT ?", params
        )
        return [(row[0], set(row[1].split())) for row in rows]

    def _detect(self) -> bool:
        if FTS_TABLE not in self._db.tables():
            return False
        try:
            indexed = self._db.query_one(f"SELECT count(*) FROM {FTS_TABLE}")
        except StoreError as exc:  # made by an SQLite with FTS5, opened by one without
            log.info("memory keyword index unusable here (%s); searching with LIKE", exc)
            return False
        live = self._db.query_one("SELECT count(*) FROM memories WHERE deleted_at IS NULL")
        if indexed and live and indexed[0] != live[0]:
            self._rebuild()
        return True

    def _rebuild(self) -> None:
        log.info("rebuilding the memory keyword index")
        with self._db.transaction() as tx:
            tx.execute(f"DELETE FROM {FTS_TABLE}")
            for memory_id, content in tx.query(
                "SELECT id, content FROM memories WHERE deleted_at IS NULL"
            ):
                tx.execute(
                    f"INSERT INTO {FTS_TABLE} (rowid, terms) VALUES (?, ?)",
                    (memory_id, _terms_text(content)),
                )
